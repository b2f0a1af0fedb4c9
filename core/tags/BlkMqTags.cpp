#include "tags/BlkMqTags.h"

#include <algorithm>

namespace blkmq {

int BlkMqTags::get(int cpu, TagUser& user)
{
    if (m_fairShare && user.shared) {
        if (!user.active) { // blk_mq_tag_busy()
            user.active = true;
            ++m_activeQueues;
        }
        const int depth = m_alloc->depth();
        const int users = std::max(1, m_activeQueues);
        if (user.held >= std::max((depth + users - 1) / users, 4))
            return -1;
    }
    TagAlloc a;
    a.cpu = cpu;
    TagAccess cost;
    // Every step in this action for now: the allocators registered so far finish in one.
    while (m_alloc->get(a, cost) == TagAllocator::Step::More) { }
    m_machine.charge(cost.ns);
    m_sim.counters.tag_cacheline_transfers += cost.cachelineTransfers;
    m_sim.counters.tag_lock_wait_ns += static_cast<std::uint64_t>(cost.lockWaitNs);
    if (a.tag < 0)
        return -1;
    ++m_sim.counters.tag_allocs;
    m_sim.counters.tag_local_hits += cost.local;
    ++user.held;
    user.lastActivity = m_machine.opNow();
    return a.tag;
}

void BlkMqTags::put(int cpu, int tag, TagUser& user, TagWakeHost& host)
{
    TagAccess cost;
    m_alloc->put(cpu, tag, cost);
    m_machine.charge(cost.ns);
    m_sim.counters.tag_cacheline_transfers += cost.cachelineTransfers;
    m_sim.counters.tag_lock_wait_ns += static_cast<std::uint64_t>(cost.lockWaitNs);
    --user.held;
    user.lastActivity = m_machine.opNow();
    if (!m_taskWaiters.empty()) {
        const int t = m_taskWaiters.front();
        m_taskWaiters.erase(m_taskWaiters.begin());
        m_machine.charge(m_sim.costs.wakeup_ns);
        m_machine.wakeTask(t, cpu);
    }
    // blk_mq_dispatch_wake(): rerun every hctx parked on dispatch_wait
    for (int waiting : m_hctxWaiters)
        host.runHwQueueAsync(cpu, waiting);
    m_hctxWaiters.clear();
}

void BlkMqTags::park(int hctx)
{
    if (std::find(m_hctxWaiters.begin(), m_hctxWaiters.end(), hctx) == m_hctxWaiters.end())
        m_hctxWaiters.push_back(hctx);
}

void BlkMqTags::idle(TagUser& user)
{
    if (user.active && user.held == 0 && m_sim.now - user.lastActivity >= m_idleAfter) {
        user.active = false;
        --m_activeQueues;
    }
}

} // namespace blkmq
