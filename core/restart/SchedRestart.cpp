#include "restart/SchedRestart.h"

#include "restart/RestartRegistry.h"

#include <algorithm>
#include <cassert>
#include <cstdio>

namespace blkmq {

SchedRestart::SchedRestart(Sim& sim, Machine& machine, RestartShape shape, RestartHost& host)
    : m_sim(&sim)
    , m_machine(&machine)
    , m_shape(std::move(shape))
    , m_host(&host)
    , m_ops(machine.addHandler(this))
    , m_variant(RestartRegistry::all().front())
    , m_ownOnly(m_variant->ownOnly())
    , m_hctx(m_shape.hctxs.size())
    , m_queueCounter(m_shape.queues.size(), 0)
    , m_queueFlag(m_shape.queues.size(), 0)
    , m_queueFlagLine(m_shape.queues.size())
    , m_tagSet(m_shape.tagSets.size())
{
    m_profile.resize(m_machine->nrCpus());
    for (const RestartShape::TagSetPlace& set : m_shape.tagSets)
        for (std::size_t i = 0; i < set.queues.size(); ++i)
            m_shape.queues[static_cast<std::size_t>(set.queues[i])].inTagSet = static_cast<int>(i);
    for (const RestartShape::TagSetPlace& set : m_shape.tagSets) {
        // Per queue: its list node and queue_hw_ctx[] (8 pointers a line); per hctx: the line of its tags.
        std::int64_t lines = 0;
        for (const int q : set.queues) {
            const std::int64_t nr = m_shape.queues[static_cast<std::size_t>(q)].nrHwQueues;
            lines += 1 + (nr + 7) / 8 + nr;
        }
        m_walkEvicts.push_back(lines > m_sim->costs.private_cache_lines);
    }
    m_openCalls.reserve(static_cast<std::size_t>(m_machine->nrCpus()) * 4); // one per context at most
}

void SchedRestart::rebind(const SchedRestart& original, Sim& sim, Machine& machine, RestartHost& host)
{
    m_sim = &sim;
    m_machine = &machine;
    m_host = &host;
    machine.replaceHandler(&original, this);
    for (OpenCall& call : m_openCalls)
        call.stack = machine.sameStack(*original.m_machine, call.stack);
}

void SchedRestart::mark(int h, MarkReason why)
{
    HctxMark& m = m_hctx[static_cast<std::size_t>(h)];
    if (m.marked)
        return;
    m.marked = true;
    m_host->hctxLines().state(h).write(m_machine->executingCpu()); // set_bit(BLK_MQ_S_SCHED_RESTART, &hctx->state)
    m.why = why;
    m.since = m_machine->opNow();
    ++m_sim->counters.restart_marks;
    m_sim->trace(TraceKind::RestartMark, m_machine->executingCpu(), -1, h);
    if (m_shape.hctx(h).tagShared) {
        const auto q = static_cast<std::size_t>(m_shape.hctx(h).queue);
        ++m_queueCounter[q];
        ++m_tagSet[static_cast<std::size_t>(m_shape.queueOf(h).tagSet)].counter;
        // v4.11's blk_mq_sched_mark_restart(): with shared tags the queue is marked too (test, then set).
        if (!m_queueFlag[q]) {
            m_queueFlag[q] = 1;
            m_queueFlagLine[q].write(m_machine->executingCpu());
        }
    }
}

void SchedRestart::restartQueue(int h, RestartNote& note)
{
    const RestartShape::QueuePlace& q = m_shape.queueOf(h);
    const auto qi = static_cast<std::size_t>(m_shape.hctx(h).queue);
    const int cpu = m_machine->executingCpu();
    HctxLines& lines = m_host->hctxLines();
    // test_bit(QUEUE_FLAG_RESTART): one line of the request queue, written by every mark of its hctxs.
    std::int64_t ns = m_queueFlagLine[qi].read(cpu, false, m_sim->topo, m_sim->costs);
    note.visits = 0;
    if (!m_queueFlag[qi]) {
        note.outcome = RestartNote::Outcome::QueueFlagClear;
    } else {
        m_queueFlag[qi] = 0;
        ns += m_queueFlagLine[qi].own(cpu, m_sim->topo, m_sim->costs); // clear_bit()
        note.outcome = RestartNote::Outcome::QueueNoneRestarted;
        // queue_for_each_hw_ctx: blk_mq_sched_restart_hctx() of each, its state line read; every
        // marked one is restarted (the charge so far is in before a run starts at opNow()).
        for (int i = 0; i < q.nrHwQueues; ++i) {
            const int hctx = q.firstHctx + i;
            ns += m_sim->costs.restart_visit_ns + lines.state(hctx).read(cpu, false, m_sim->topo, m_sim->costs);
            ++note.visits;
            if (!marked(hctx))
                continue;
            m_machine->charge(ns);
            m_sim->counters.restart_cpu_ns += static_cast<std::uint64_t>(ns);
            ns = 0;
            if (restartHctx(hctx) && note.outcome != RestartNote::Outcome::Restarted) {
                note.outcome = RestartNote::Outcome::Restarted;
                note.restarted = hctx;
            }
        }
        m_sim->counters.restart_hctx_visits += static_cast<std::uint64_t>(note.visits);
    }
    m_machine->charge(ns);
    m_sim->counters.restart_cpu_ns += static_cast<std::uint64_t>(ns);
}

bool SchedRestart::restartMarked(int h)
{
    HctxMark& m = m_hctx[static_cast<std::size_t>(h)];
    m.marked = false;
    m_host->hctxLines().state(h).write(m_machine->executingCpu()); // test_and_clear_bit()
    if (m_shape.hctx(h).tagShared) {
        --m_queueCounter[static_cast<std::size_t>(m_shape.hctx(h).queue)];
        --m_tagSet[static_cast<std::size_t>(m_shape.queueOf(h).tagSet)].counter;
    }
    if (!m_host->hasPending(h))
        return false;
    ++m_sim->counters.restarts;
    m_sim->trace(TraceKind::Restart, m_machine->executingCpu(), -1, h);
    m_host->runHwQueueAsync(h);
    return true;
}

void SchedRestart::countSkip(const RestartNote& note)
{
    ++m_sim->counters.restart_skips;
    m_sim->trace(TraceKind::RestartSkip, m_machine->executingCpu(), note.freed.rq, note.hctx);
}

void SchedRestart::walkOpened(const RestartNote& note)
{
    m_openCalls.push_back({ m_machine->currentStack(), m_machine->executingCpu(), note.at });
}

void SchedRestart::walkReturned()
{
    const void* stack = m_machine->currentStack();
    for (auto it = m_openCalls.rbegin(); it != m_openCalls.rend(); ++it)
        if (it->stack == stack) {
            m_profile.record(it->cpu, m_machine->opNow() - it->entry);
            m_openCalls.erase(std::next(it).base());
            return;
        }
}

void SchedRestart::startWalk(int h) { m_machine->pushOp(m_ops(RestartOp::Walk, h, 0)); }

OpName SchedRestart::opName(std::uint8_t code) const
{
    switch (static_cast<RestartOp>(code)) {
    case RestartOp::Walk: // a batch of the walk, inside the completion that freed the request
        return { "blk_mq_free_request → blk_mq_sched_restart", true };
    }
    return {};
}

void SchedRestart::perform(int /*cpu*/, Op op, OpStack& /*stack*/)
{
    switch (OpSet<RestartOp>::code(op)) {
    case RestartOp::Walk:
        walk(op.a, op.b);
        break;
    }
}

// One batch of the round-robin walk of 6d8c6c0f97ad: every hctx of every
// other queue on the tag set (starting after the completing queue), then
// the completing queue's hctxs after the completing one, until one restarts.
void SchedRestart::walk(int h, int pos)
{
    constexpr int kBatch = 64; // hctxs looked at per action: interruptible between batches
    const RestartShape::HctxPlace& start = m_shape.hctx(h);
    const RestartShape::QueuePlace& q = m_shape.queueOf(h);
    const RestartShape::TagSetPlace& set = m_shape.tagSetOf(h);
    const int nq = static_cast<int>(set.queues.size());
    const int nr = q.nrHwQueues;
    const int self = q.inTagSet;
    const int total = nq * nr; // (nq - 1) other queues, then nr of our own
    RestartNote& note = m_tagSet[static_cast<std::size_t>(q.tagSet)].last;
    const int end = std::min(total, pos + kBatch);
    const int cpu = m_machine->executingCpu();
    const bool evicted = m_walkEvicts[static_cast<std::size_t>(q.tagSet)];
    const std::int64_t llcHit = Cacheline::floorNs(evicted, m_sim->costs); // queue_hw_ctx[] lines miss too
    HctxLines& lines = m_host->hctxLines();
    // The batch's CPU time is charged at its end, or before a restart (whose run starts at opNow()).
    std::int64_t batchNs = 0;
    int counted = pos; // visits before this one are in the counters
    const auto account = [&] {
        m_machine->charge(batchNs);
        m_sim->counters.restart_cpu_ns += static_cast<std::uint64_t>(batchNs);
        batchNs = 0;
    };
    // Every queue of a tag set has the same nr_hw_queues (the loader checks it), so the hctx at
    // queue_num i of any queue uses the tags of index i: only the completing hctx's index matches
    // its tags. Each visit reads queue_hw_ctx[i] (read-only, a new line every 8 hctxs; hctx 0 also
    // the queue's list node) and hctx2->tags; hctx2->state only where the tags match
    // (blk_mq_sched_restart_hctx's test_bit). The visits in between are a run of `tags` lines.
    const int ownIndex = start.index;
    const std::int64_t visitNs = m_sim->costs.restart_visit_ns;
    const auto fixedNs = [&](int from, int to) { // the visits of queue_nums [from, to), lines of tags aside
        return visitNs * (to - from) + llcHit * ((to + 7) / 8 - (from + 7) / 8 + (from == 0 && to > 0 ? 1 : 0));
    };
    const int others = (nq - 1) * nr; // positions [0, others): the other queues, nr each
    while (pos < end) {
        // The positions left in one queue: queue_nums [from, to) of the hctxs from `base` on.
        int base = q.firstHctx, from = 0;
        if (pos < others) {
            const int queue = set.queues[static_cast<std::size_t>((self + 1 + pos / nr) % nq)];
            base = m_shape.queues[static_cast<std::size_t>(queue)].firstHctx;
            from = pos % nr;
        } else {
            from = (ownIndex + 1 + pos - others) % nr;
        }
        const int to = from + std::min(nr - from, end - pos);
        const bool own = ownIndex >= from && ownIndex < to;
        const int runEnd = own ? ownIndex : to;
        batchNs += fixedNs(from, runEnd)
            + lines.readTagsRun(base + from, base + runEnd, cpu, evicted, m_sim->topo, m_sim->costs);
        pos += runEnd - from;
        if (!own)
            continue;
        const int candidate = base + ownIndex;
        assert(m_shape.hctx(candidate).tags == start.tags);
        batchNs += fixedNs(ownIndex, ownIndex + 1) + lines.readTags(candidate, cpu, evicted, m_sim->topo, m_sim->costs)
            + lines.state(candidate).read(cpu, evicted, m_sim->topo, m_sim->costs);
        ++pos;
        if (m_hctx[static_cast<std::size_t>(candidate)].marked) {
            account();
            m_sim->counters.restart_hctx_visits += static_cast<std::uint64_t>(pos - counted);
            note.visits += pos - counted;
            counted = pos;
            if (restartHctx(candidate)) {
                note.outcome = RestartNote::Outcome::Restarted;
                note.restarted = candidate;
                walkReturned();
                return;
            }
        }
    }
    account();
    m_sim->counters.restart_hctx_visits += static_cast<std::uint64_t>(pos - counted);
    note.visits += pos - counted;
    if (pos < total) {
        m_machine->pushOp(m_ops(RestartOp::Walk, h, pos));
    } else {
        note.outcome = RestartNote::Outcome::WalkFoundNone;
        walkReturned();
    }
}

namespace {

std::string ms(SimTime t)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "t=%.3f ms", t.seconds() * 1e3);
    return buf;
}

std::string hctxName(const RestartShape& shape, int h)
{
    return shape.queueOf(h).name + " hctx " + std::to_string(shape.hctx(h).index);
}

} // namespace

std::string SchedRestart::explainLast(int h, const std::string& freedName, Phrase as) const
{
    const RestartNote& n = lastDecision(m_shape.queueOf(h).tagSet);
    if (n.outcome == RestartNote::Outcome::None || n.hctx < 0)
        return {};
    std::string out = as == Phrase::Step ? "Freeing " + freedName + " of " + m_shape.queueOf(n.hctx).name
            + ", the tag set's last blk_mq_sched_restart() "
                                         : "The last blk_mq_sched_restart() on the tag set (at " + ms(n.at)
            + ", freeing " + freedName + " of " + m_shape.queueOf(n.hctx).name + ") ";
    switch (n.outcome) {
    case RestartNote::Outcome::CounterZero:
        out += "returned early because " + m_variant->counterOwner(m_shape, n.hctx)
            + "'s shared_hctx_restart was 0, although " + hctxName(m_shape, h) + " was marked";
        break;
    case RestartNote::Outcome::Restarted:
        out += "restarted " + hctxName(m_shape, n.restarted) + " after looking at " + std::to_string(n.visits)
            + " hctx(s) and stopped there";
        break;
    case RestartNote::Outcome::NotMarked:
        out += "only looked at its own hctx, which had no RESTART mark";
        break;
    case RestartNote::Outcome::WalkFoundNone:
        out += "walked " + std::to_string(n.visits) + " hctx(s) without restarting any";
        break;
    case RestartNote::Outcome::QueueFlagClear:
        out += "returned at once: " + m_shape.queueOf(n.hctx).name
            + "'s QUEUE_FLAG_RESTART was clear, and another queue's hctx is never restarted";
        break;
    case RestartNote::Outcome::QueueNoneRestarted:
        out += "looked at the " + std::to_string(n.visits) + " hctx(s) of " + m_shape.queueOf(n.hctx).name
            + " without restarting any (another queue's hctx is never restarted)";
        break;
    case RestartNote::Outcome::None:
        break;
    }
    return out;
}

std::string RestartVariant::counterOwner(const RestartShape& shape, int hctx) const { return shape.queueOf(hctx).name; }

} // namespace blkmq
