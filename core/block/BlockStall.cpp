// BlockLayer: the stall detector. A waiting request is stuck when no event
// that could move it is scheduled or can arise: its hctx has no run queued,
// no request holds a tag of its tag set (so no completion will call
// blk_mq_sched_restart() or wake dispatch_wait), and nothing is left that
// could submit to the tag set's devices (which would run their queues).
// Requests waiting longer than the scenario's stall_age are reported too,
// as a backstop, and so are submitters asleep in blk_mq_get_tag() longer
// than that (they have no request yet), with the tags that are neither free
// to them nor in use (lost or hidden by ida-lock-split's race).
#include "block/BlockLayer.h"

#include "sim/Duration.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace blkmq {

namespace {

std::string ms(SimTime t)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "t=%.3f ms", t.seconds() * 1e3);
    return buf;
}

} // namespace

std::string BlockLayer::tagsName(int i) const
{
    for (const TagSet& set : m_tagSets)
        if (i >= set.firstTags && i < set.firstTags + set.nrHwQueues)
            return m_queues[static_cast<std::size_t>(set.queues.front())].spec.name + " hctx "
                + std::to_string(i - set.firstTags);
    return "tags " + std::to_string(i);
}

std::string BlockLayer::requestName(int rq) const { return requestName(rq, request(rq).script, request(rq).job); }

std::string BlockLayer::requestName(int rq, int script, int job) const
{
    if (script >= 0 && static_cast<std::size_t>(script) < m_scriptIds.size())
        return "request " + m_scriptIds[static_cast<std::size_t>(script)];
    return "request #" + std::to_string(rq) + (job >= 0 ? " (job " + std::to_string(job) + ")" : "");
}

void BlockLayer::explainSleeper(std::ostringstream& why, std::vector<StallStep>& steps, const TagSet& set, int index,
    const Sleeper& who, SimTime maxAge) const
{
    const TagAllocator& alloc = set.tags[static_cast<std::size_t>(index)].alloc();
    const RequestQueue& q = m_queues[static_cast<std::size_t>(set.queues.front())];
    const int tagsIndex = set.firstTags + index;
    const int mapHctx = q.firstHctx + index; // the hctx whose tag map shows these tags
    why << who.name << " has slept in blk_mq_get_tag() for a driver tag of " << q.spec.name << " hctx " << index
        << " since " << ms(who.since) << ", longer than the stall_age of " << formatDuration(maxAge);
    steps.push_back({ who.since,
        who.name + " goes to sleep in blk_mq_get_tag(): no driver tag of " + tagsName(tagsIndex) + " is free to it",
        ObjectRef { ObjectRef::Kind::Tags, mapHctx } });
    std::ostringstream hiddenCpus;
    int hidden = 0;
    for (int cpu = 0; cpu < m_machine->nrCpus(); ++cpu)
        if (const int n = alloc.hiddenOn(cpu); n > 0) {
            hiddenCpus << (hidden ? ", " : "") << "CPU " << cpu << " (" << n << ")";
            hidden += n;
        }
    const int lost = alloc.lost();
    why << ". Of its " << alloc.depth() << " tags " << alloc.inUse() << " are in use";
    std::string state = std::to_string(alloc.inUse()) + " of its " + std::to_string(alloc.depth()) + " tags are in use";
    if (lost + hidden == 0) {
        why << " and " << alloc.depth() - alloc.inUse() << " free";
        steps.push_back({ m_sim->now,
            state.append(" and ")
                .append(std::to_string(alloc.depth() - alloc.inUse()))
                .append(" free, yet it sleeps longer than the stall_age of ")
                .append(formatDuration(maxAge)),
            ObjectRef { ObjectRef::Kind::Tags, mapHctx } });
        return;
    }
    if (lost > 0) {
        why << ", " << lost
            << " were lost when steal_tags() copied a victim's stack over a cache an interrupt had "
               "refilled (tags.lost_tags)";
        steps.push_back({ m_sim->now,
            std::string(state)
                .append("; ")
                .append(std::to_string(lost))
                .append(" were lost by steal_tags() (tags.lost_tags)"),
            ObjectRef { ObjectRef::Kind::Tags, mapHctx } });
    }
    if (hidden > 0) {
        why << ", " << hidden << " sit in the cache of " << hiddenCpus.str()
            << " whose cpus_have_tags bit a second stealer cleared after a free had set it, so steal_tags() on "
               "another CPU does not look there (tags.missed_wakeups)";
        for (int cpu = 0; cpu < m_machine->nrCpus(); ++cpu)
            if (const int n = alloc.hiddenOn(cpu); n > 0)
                steps.push_back({ m_sim->now,
                    std::to_string(n)
                        .append(" tag(s) sit in CPU ")
                        .append(std::to_string(cpu))
                        .append("'s cache with its cpus_have_tags bit clear: no stealer looks there"),
                    ObjectRef { ObjectRef::Kind::Cpu, cpu } });
    }
    why << ": the race ida-lock-split lets happen";
}

StallReport BlockLayer::findStalls(SimTime maxAge, const std::vector<bool>& liveTagSets, const SleeperLookup& sleeper)
{
    StallReport report;
    std::ostringstream why;
    // Per tag set, once: is anything holding a tag, or any run of its hctxs queued?
    std::vector<char> busySet(m_tagSets.size(), 0);
    for (std::size_t t = 0; t < m_tagSets.size(); ++t) {
        const TagSet& set = m_tagSets[t];
        for (int i = 0; i < set.nrHwQueues && !busySet[t]; ++i)
            busySet[t] = tags(set.firstTags + i).alloc().inUse() > 0;
    }
    const auto structuralSet = [&](std::size_t t) { return !busySet[t] && !liveTagSets[t]; };
    const auto anyStructural = [&] {
        for (std::size_t t = 0; t < m_tagSets.size(); ++t)
            if (structuralSet(t))
                return true;
        return false;
    };
    if (anyStructural()) // a queued run keeps its tag set busy
        for (const Hctx& h : m_hctxs)
            if (h.runQueued)
                busySet[static_cast<std::size_t>(m_queues[static_cast<std::size_t>(h.dev)].tagSet)] = 1;
    // Only a structural tag set, or a wait that may have grown older than maxAge, makes the
    // requests worth looking at; otherwise the lists are left alone (the floor bounds every wait).
    const bool walkLists = anyStructural() || m_sim->now - m_waitFloor > maxAge;
    SimTime floor = m_sim->now;
    for (std::size_t h = 0; h < m_hctxs.size() && walkLists; ++h) {
        const Hctx& hctx = m_hctxs[h];
        if (hctx.dispatch.empty() && hctx.schedFifo.empty())
            continue;
        const RequestQueue& q = m_queues[static_cast<std::size_t>(hctx.dev)];
        const TagSet& set = m_tagSets[static_cast<std::size_t>(q.tagSet)];
        const bool structural = structuralSet(static_cast<std::size_t>(q.tagSet));
        // The scheduler FIFO, then hctx->dispatch, walked in place (a sample allocates nothing here).
        const auto nextWaiting = [&](int rq, bool& inFifo) {
            const int next = rq >= 0 ? request(rq).next : hctx.schedFifo.head;
            if (next < 0 && inFifo) {
                inFifo = false;
                return hctx.dispatch.head;
            }
            return next;
        };
        bool inFifo = true;
        for (int rq = nextWaiting(-1, inFifo); rq >= 0; rq = nextWaiting(rq, inFifo)) {
            const Request& r = request(rq);
            floor = std::min(floor, r.waitSince);
            const bool old = m_sim->now - r.waitSince > maxAge;
            if (!structural && !old)
                continue;
            report.stuck.push_back(rq);
            if (report.stuck.size() > 1)
                continue;
            // Explain the first one from the decisions recorded on the way.
            const int hi = static_cast<int>(h);
            const std::string hname = q.spec.name + " hctx " + std::to_string(hctx.index);
            const char* where = inFifo ? "in the scheduler FIFO" : "on hctx->dispatch";
            why << requestName(rq) << " (" << hname << ", submitted on CPU " << r.cpu << ") has waited " << where
                << " since " << ms(r.waitSince) << "; ";
            report.steps.push_back({ r.waitSince,
                requestName(rq)
                    .append(", submitted on CPU ")
                    .append(std::to_string(r.cpu))
                    .append(", waits ")
                    .append(where)
                    .append(" of ")
                    .append(hname),
                ObjectRef { ObjectRef::Kind::Request, rq } });
            if (m_restart->marked(hi)) {
                std::string mark = hname + " gets RESTART set";
                why << hname << " has RESTART set since " << ms(m_restart->markedSince(hi));
                if (m_restart->markedFor(hi) == SchedRestart::MarkReason::NoTag) {
                    why << " (its dispatch found no driver tag, and blk_mq_mark_tag_wait marks an hctx of unshared "
                           "tags instead of parking it on a wait queue)";
                    mark.append(": its dispatch found no driver tag");
                } else if (inFifo) {
                    why << " (its dispatch found hctx->dispatch non-empty and left the scheduler's requests where "
                           "they were)";
                    mark.append(": its dispatch found hctx->dispatch non-empty");
                }
                why << "; ";
                report.steps.push_back({ m_restart->markedSince(hi), mark, ObjectRef { ObjectRef::Kind::Hctx, hi } });
            } else if (hctx.tagUse.parked) {
                why << hname
                    << " has no RESTART mark and waits on a wait queue of its tags for a free driver tag "
                       "(dispatch_wait, TAG_WAITING); ";
                report.steps.push_back(
                    { r.waitSince, hname + " has no RESTART mark and waits on a wait queue of its tags",
                        ObjectRef { ObjectRef::Kind::Hctx, hi } });
            } else {
                why << hname << " has no RESTART mark; ";
                report.steps.push_back(
                    { r.waitSince, hname + " has no RESTART mark", ObjectRef { ObjectRef::Kind::Hctx, hi } });
            }
            const RestartNote& n = m_restart->lastDecision(q.tagSet);
            const std::string freed = requestName(n.freed.rq, n.freed.script, n.freed.job);
            const std::string last = m_restart->explainLast(hi, freed);
            if (!last.empty()) {
                const bool restarted = n.outcome == RestartNote::Outcome::Restarted && n.restarted >= 0;
                report.steps.push_back({ n.at, m_restart->explainLast(hi, freed, SchedRestart::Phrase::Step),
                    ObjectRef { ObjectRef::Kind::Hctx, restarted ? n.restarted : n.hctx } });
            }
            if (structural) {
                why << "no request holds a tag of tag set '" << set.name << "', no run of its hctxs is queued and "
                    << "nothing is left to submit to its devices, so no completion will ever restart " << hname;
                report.steps.push_back({ m_sim->now,
                    "No request holds a tag of tag set '" + set.name
                        + "', no run of its hctxs is queued and nothing is left to submit: no completion will ever "
                          "restart "
                        + hname,
                    ObjectRef { ObjectRef::Kind::Tags, hi } });
            } else {
                why << "it has waited longer than the stall_age of " << formatDuration(maxAge);
                report.steps.push_back({ m_sim->now,
                    requestName(rq) + " has waited longer than the stall_age of " + formatDuration(maxAge),
                    ObjectRef { ObjectRef::Kind::Request, rq } });
            }
            if (!last.empty())
                why << ". " << last;
            why << '.';
        }
    }
    if (walkLists)
        m_waitFloor = floor;
    // Submitters asleep in blk_mq_get_tag() have no request yet; one that has slept longer than
    // maxAge is reported with what became of the tags (a permanent deadlock of sleepers ages too).
    for (const TagSet& set : m_tagSets)
        for (int i = 0; i < set.nrHwQueues; ++i)
            for (const int task : set.tags[static_cast<std::size_t>(i)].sleepers()) {
                const Sleeper who = sleeper(task);
                if (m_sim->now - who.since <= maxAge)
                    continue;
                if (report.stuck.empty() && report.stuckSubmitters.empty())
                    explainSleeper(why, report.steps, set, i, who, maxAge);
                report.stuckSubmitters.push_back(who.name);
            }
    std::stable_sort(
        report.steps.begin(), report.steps.end(), [](const StallStep& a, const StallStep& b) { return a.at < b.at; });
    const std::size_t nStuck = report.stuck.size() + report.stuckSubmitters.size();
    if (nStuck > 0) {
        report.explanation = why.str();
        if (nStuck > 1)
            report.explanation.append(" ")
                .append(std::to_string(nStuck - 1))
                .append(report.stuckSubmitters.empty() ? " more request(s) are stuck." : " more are stuck.");
    }
    return report;
}

} // namespace blkmq
