#include "block/BlkMqTags.h"

#include <algorithm>

namespace blkmq {

BlkMqTags::BlkMqTags(Sim& sim, Machine& machine, std::unique_ptr<TagAllocator> alloc, DispatchWake wake)
    : m_sim(&sim)
    , m_machine(&machine)
    , m_alloc(std::move(alloc))
    , m_dispatchWake(wake)
{
    m_rules = m_alloc->waitRules();
    for (WaitQueue& ws : m_ws) {
        ws.waitCnt = m_rules.wakeBatch;
        ws.tasks.reserve(8);
        ws.hctxs.reserve(8);
    }
    m_active.reserve(16);
    setOwnPath(true);
}

void BlkMqTags::rebind(Sim& sim, Machine& machine, DispatchWake wake, const std::function<TagUser&(int hctx)>& user)
{
    m_sim = &sim;
    m_machine = &machine;
    m_dispatchWake = wake;
    m_alloc->rebind(sim.topo, sim.costs);
    for (TagUser*& u : m_active)
        u = &user(u->hctx);
}

void BlkMqTags::setOwnPath(bool on)
{
    // The path's put wakes as sbq_wake_up() does: for an allocator without a wait queue of its own.
    m_ownPath = on && !m_rules.ownQueue && m_alloc->hasOwnPath();
}

bool BlkMqTags::mayQueueShared(const TagUser& user) const
{
    const int depth = m_alloc->depth();
    if (depth <= 1)
        return true;
    const int users = std::max(1, m_activeQueues);
    return user.held < std::max((depth + users - 1) / users, 4);
}

int BlkMqTags::getGeneral(int cpu, TagUser& user, TagAlloc* progress)
{
    TagAlloc fresh;
    TagAlloc& a = progress ? *progress : fresh;
    if (a.state == 0) {
        if (!mayQueue(user))
            return -1;
        a = TagAlloc {};
        a.cpu = cpu;
    }
    TagAccess cost;
    cost.start = m_machine->opNow().ns();
    TagAllocator::Step step;
    do
        step = m_alloc->get(a, cost);
    while (step == TagAllocator::Step::More && !progress);
    account(cpu, cost, LockCaller::PercpuIdaAlloc);
    if (step == TagAllocator::Step::More)
        return kInProgress;
    const int tag = a.tag;
    a = TagAlloc {};
    if (tag < 0) {
        if (cost.hidden()) {
            ++m_sim->counters.tag_missed_wakeups;
            m_sim->trace(TraceKind::TagMissed, cpu, -1, cost.hiddenOn);
            if (!m_firstMiss.seen())
                m_firstMiss = { m_machine->opNow(), cpu, cost.hiddenOn, m_alloc->hiddenOn(cost.hiddenOn) };
        }
        return -1;
    }
    return granted(cpu, user, tag, cost.local);
}

void BlkMqTags::busy(TagUser& user)
{
    user.active = true;
    ++m_activeQueues;
    m_active.push_back(&user);
}

void BlkMqTags::accountMore(int cpu, const TagAccess& cost, LockCaller caller)
{
    Counters& c = m_sim->counters;
    for (std::size_t d = 0; d < cost.transfers.size(); ++d) {
        c.tag_transfers[d] += cost.transfers[d];
        c.tag_steals_from[d] += cost.steals[d];
        c.tag_steals += cost.steals[d];
    }
    c.tag_global_moves += cost.globalMoves;
    c.tag_cas_retries += cost.retries;
    c.tag_lost += cost.lost;
    if (cost.victim >= 0)
        m_sim->trace(TraceKind::TagSteal, cpu, -1, cost.victim);
    if (cost.lost > 0) {
        m_sim->trace(TraceKind::TagLost, cpu, -1, static_cast<int>(cost.lost));
        if (!m_firstLoss.seen())
            m_firstLoss = { m_machine->opNow(), cpu, cost.victim, static_cast<int>(cost.lost) };
    }
    c.tag_lock_wait_ns += static_cast<std::uint64_t>(cost.lockWaitNs);
    if (cost.lockNs > 0)
        m_machine->lockTime(cpu, caller, cost.lockNs);
}

void BlkMqTags::idleUsers()
{
    for (std::size_t i = 0; i < m_active.size();) {
        TagUser& user = *m_active[i];
        if (user.held == 0 && m_sim->now - user.lastActivity >= m_idleAfter) {
            user.active = false;
            --m_activeQueues;
            m_active[i] = m_active.back(); // the order of the active users does not matter
            m_active.pop_back();
        } else {
            ++i;
        }
    }
}

void BlkMqTags::putGeneral(int cpu, int tag, int allocCpu, TagUser& user)
{
    TagAccess cost;
    cost.start = m_machine->opNow().ns();
    m_alloc->put(cpu, tag, allocCpu, cost);
    account(cpu, cost, LockCaller::PercpuIdaFree);
    released(cpu, user, cost.wake);
}

// The allocator's wake_up() of its one wait queue (percpu_ida: every waiter, none exclusive): every
// sleeping submitter wakes and retries, every parked hctx is rerun.
void BlkMqTags::wakeAll(int cpu)
{
    if (m_waiting == 0)
        return;
    for (WaitQueue& ws : m_ws)
        wake(ws, static_cast<int>(ws.tasks.size()), cpu);
}

BlkMqTags::WaitQueue& BlkMqTags::waitPtr(TagUser& user)
{
    WaitQueue& ws = m_ws[static_cast<std::size_t>(user.waitIndex)];
    user.waitIndex = (user.waitIndex + 1) % kWaitQueues;
    return ws;
}

void BlkMqTags::sleep(int task, TagUser& user)
{
    waitPtr(user).tasks.push_back(task);
    ++m_waiting;
}

bool BlkMqTags::park(TagUser& user)
{
    if (user.parked)
        return false;
    user.parked = true;
    waitPtr(user).hctxs.push_back(user.hctx);
    ++m_waiting;
    return true;
}

void BlkMqTags::unpark(TagUser& user)
{
    if (!user.parked)
        return;
    user.parked = false;
    for (WaitQueue& ws : m_ws)
        m_waiting -= static_cast<int>(std::erase(ws.hctxs, user.hctx));
}

void BlkMqTags::wakeUp(int cpu)
{
    // sbq_wake_ptr(): the first wait queue with waiters, from the wake index on.
    int index = m_wakeIndex;
    WaitQueue* ws = nullptr;
    for (int i = 0; i < kWaitQueues && !ws; ++i, index = (index + 1) % kWaitQueues)
        if (m_ws[static_cast<std::size_t>(index)].active())
            ws = &m_ws[static_cast<std::size_t>(index)];
    if (!ws)
        return;
    m_wakeIndex = static_cast<int>(ws - m_ws.data());
    if (--ws->waitCnt > 0)
        return;
    ws->waitCnt += m_rules.wakeBatch;
    m_wakeIndex = (m_wakeIndex + 1) % kWaitQueues;
    // v4.14 wake_up_nr(&ws->wait, wake_batch) of exclusive waiters; v3.16 wake_up() wakes every one.
    wake(*ws, m_rules.exclusive ? m_rules.wakeBatch : static_cast<int>(ws->tasks.size()), cpu);
}

// Wakes every non-exclusive entry of a wait queue and up to `tasks` exclusive ones.
void BlkMqTags::wake(WaitQueue& ws, int tasks, int cpu)
{
    for (int h : ws.hctxs)
        m_dispatchWake.func(m_dispatchWake.queue, cpu, h);
    m_waiting -= static_cast<int>(ws.hctxs.size());
    ws.hctxs.clear();
    const int n = std::min(static_cast<int>(ws.tasks.size()), tasks);
    for (int i = 0; i < n; ++i) {
        m_machine->charge(m_sim->costs.wakeup_ns);
        m_machine->wakeTask(ws.tasks[static_cast<std::size_t>(i)], cpu);
    }
    m_sim->counters.tag_wakeups += static_cast<std::uint64_t>(n);
    ws.tasks.erase(ws.tasks.begin(), ws.tasks.begin() + n);
    m_waiting -= n;
}

std::vector<int> BlkMqTags::sleepers() const
{
    std::vector<int> out;
    if (m_waiting == 0) // every sample asks the tags of every hctx: mostly nobody waits
        return out;
    for (const WaitQueue& ws : m_ws)
        out.insert(out.end(), ws.tasks.begin(), ws.tasks.end());
    return out;
}

std::vector<int> BlkMqTags::parked() const
{
    std::vector<int> out;
    for (const WaitQueue& ws : m_ws)
        out.insert(out.end(), ws.hctxs.begin(), ws.hctxs.end());
    return out;
}

} // namespace blkmq
