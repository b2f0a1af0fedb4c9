#include "tags/PercpuIdaTags.h"

#include <algorithm>

namespace blkmq {

namespace {
constexpr int kBlkMqTagCacheMin = 1; // BLK_MQ_TAG_CACHE_MIN
constexpr int kBlkMqTagCacheMax = 64; // BLK_MQ_TAG_CACHE_MAX
constexpr int kEntriesInHeaderLine = 14; // 64-byte line: lock, nr_free, then 14 unsigned entries
constexpr int kEntriesPerLine = 16;

int linesFor(int entries) { return (entries + kEntriesPerLine - 1) / kEntriesPerLine; }
} // namespace

PercpuIdaTags::Sizing PercpuIdaTags::blkMqSizing(int depth, int possibleCpus)
{
    Sizing s;
    s.maxSize = std::clamp(depth / std::max(1, possibleCpus), kBlkMqTagCacheMin, kBlkMqTagCacheMax);
    s.batchSize = std::max(1, s.maxSize / 2);
    return s;
}

PercpuIdaTags::Sizing PercpuIdaTags::sizingFor(
    const TagPatches& patches, int depth, int possibleCpus, int onlineCpus, int nrCtx)
{
    int divisor = possibleCpus;
    if (patches.stealLimit)
        divisor = std::min(8, onlineCpus); // limit-steal.patch: min(8U, num_online_cpus())
    else if (patches.cachePerCtx)
        divisor = nrCtx; // nr_tags / hctx->nr_ctx
    Sizing s = blkMqSizing(depth, divisor);
    if (patches.minCache8 && s.maxSize < 8) {
        s.maxSize = 8;
        s.batchSize = 4;
    }
    return s;
}

PercpuIdaTags::PercpuIdaTags(
    int depth, Sizing sizing, const Topology& topo, const Costs& costs, const TagPatches& patches)
    : m_topo(topo)
    , m_costs(costs)
    , m_depth(depth)
    , m_sizing(sizing)
    , m_inUseBy(static_cast<std::size_t>(depth), false)
    , m_cpu(static_cast<std::size_t>(topo.nrCpus()))
    , m_haveTags(static_cast<std::size_t>(topo.nrCpus()), false)
    , m_v313Steal(patches.v313Steal)
{
    if (patches.topologySteal) {
        // A level is a sched domain's span minus the lower ones: SMT siblings, the LLC (MC), the
        // node, then each NUMA distance. The distance class and the SLIT distance order them.
        const int n = topo.nrCpus();
        m_tlmOrder.resize(static_cast<std::size_t>(n));
        for (int cpu = 0; cpu < n; ++cpu) {
            std::vector<int>& order = m_tlmOrder[static_cast<std::size_t>(cpu)];
            for (int c = 0; c < n; ++c)
                order.push_back(c);
            const auto level = [&](int c) { return std::make_pair(topo.distance(cpu, c), topo.numaDistance(cpu, c)); };
            std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return level(a) < level(b); });
        }
    }
    for (CpuCache& c : m_cpu)
        c.stack.reserve(static_cast<std::size_t>(m_sizing.maxSize));
    // __percpu_ida_init(): the global stack holds 0..nr_tags-1, the last on top.
    m_global.reserve(static_cast<std::size_t>(depth));
    for (int tag = 0; tag < depth; ++tag)
        m_global.push_back(tag);
}

// The simulated time the operation has reached: it started at cost.start and has cost cost.ns.
std::int64_t PercpuIdaTags::now(const TagAccess& cost) { return cost.start + cost.ns; }

void PercpuIdaTags::lock(Spinlock& l, int cpu, TagAccess& cost)
{
    std::int64_t spin = 0;
    LineMove moved;
    const std::int64_t asked = now(cost);
    const std::int64_t got = l.lock(cpu, asked, m_topo, m_costs, spin, &moved);
    cost.lockWaitNs += spin;
    cost.lockNs += got - asked;
    cost.ns += spin;
    cost.move(moved);
}

void PercpuIdaTags::setHaveTags(int cpu, bool on, TagAccess& cost)
{
    cost.move(m_haveTagsLine.take(cpu, m_topo, m_costs)); // cpumask_set_cpu / _clear_cpu: a locked bit op
    m_haveTags[static_cast<std::size_t>(cpu)] = on;
}

bool PercpuIdaTags::stealFrom(int victim, int cpu, TagAccess& cost)
{
    setHaveTags(victim, false, cost);
    if (victim == cpu)
        return false;
    CpuCache& mine = m_cpu[static_cast<std::size_t>(cpu)];
    CpuCache& remote = m_cpu[static_cast<std::size_t>(victim)];
    lock(remote.lock, cpu, cost);
    const int got = static_cast<int>(remote.stack.size());
    if (got > 0) {
        // memcpy of the whole stack: the lines beyond the header line come from the victim
        const Distance d = m_topo.distance(victim, cpu);
        cost.move({ m_costs.cacheline(m_topo, victim, cpu), d }, linesFor(std::max(0, got - kEntriesInHeaderLine)));
        mine.stack.assign(remote.stack.begin(), remote.stack.end());
        remote.stack.clear();
        ++cost.steals[static_cast<std::size_t>(d)];
    }
    remote.lock.unlock(now(cost));
    return !mine.stack.empty();
}

void PercpuIdaTags::steal(int cpu, TagAccess& cost)
{
    cost.move(m_haveTagsLine.fetch(cpu, false, m_topo, m_costs));
    if (!m_tlmOrder.empty()) {
        // Gordeev's for_each_tlm(): nearest level first, ascending ids within it.
        for (int victim : m_tlmOrder[static_cast<std::size_t>(cpu)])
            if (m_haveTags[static_cast<std::size_t>(victim)] && stealFrom(victim, cpu, cost))
                return;
        return;
    }
    const int nrCpus = static_cast<int>(m_cpu.size());
    int n = static_cast<int>(std::count(m_haveTags.begin(), m_haveTags.end(), true)); // cpumask_weight
    int victim = m_lastStolen;
    // v3.13 stops once so few CPUs cache tags that fewer than half of them could be remote.
    for (; n > 0 && (!m_v313Steal || n * m_sizing.maxSize > m_depth / 2); --n) {
        // cpumask_next(cpu_last_stolen), else cpumask_first
        int next = -1;
        for (int c = victim + 1; c < nrCpus && next < 0; ++c)
            if (m_haveTags[static_cast<std::size_t>(c)])
                next = c;
        for (int c = 0; c < nrCpus && next < 0; ++c)
            if (m_haveTags[static_cast<std::size_t>(c)])
                next = c;
        victim = next;
        m_lastStolen = victim;
        if (stealFrom(victim, cpu, cost))
            break;
    }
}

TagAllocator::Step PercpuIdaTags::get(TagAlloc& a, TagAccess& cost)
{
    const int cpu = a.cpu;
    CpuCache& mine = m_cpu[static_cast<std::size_t>(cpu)];
    a.tag = -1;
    // Fast path: alloc_local_tag().
    lock(mine.lock, cpu, cost);
    cost.ns += m_costs.tag_get_ns;
    if (!mine.stack.empty()) {
        a.tag = mine.stack.back();
        mine.stack.pop_back();
    }
    mine.lock.unlock(now(cost));
    if (a.tag < 0) {
        // Slow path, under the pool lock (the own stack is touched without its lock).
        cost.local = false;
        lock(m_poolLock, cpu, cost);
        if (mine.stack.empty() && !m_global.empty()) { // alloc_global_tags()
            const int n = std::min(static_cast<int>(m_global.size()), m_sizing.batchSize);
            cost.move(m_globalEntries.take(cpu, m_topo, m_costs), linesFor(n));
            ++cost.globalMoves;
            mine.stack.insert(mine.stack.end(), m_global.end() - n, m_global.end());
            m_global.resize(m_global.size() - static_cast<std::size_t>(n));
        }
        if (mine.stack.empty())
            steal(cpu, cost);
        if (!mine.stack.empty()) {
            a.tag = mine.stack.back();
            mine.stack.pop_back();
            if (!mine.stack.empty())
                setHaveTags(cpu, true, cost);
        }
        cost.ns += m_costs.tag_get_ns;
        m_poolLock.unlock(now(cost));
    }
    if (a.tag >= 0) {
        m_inUseBy[static_cast<std::size_t>(a.tag)] = true;
        ++m_inUse;
    }
    return Step::Done;
}

void PercpuIdaTags::put(int cpu, int tag, int /*allocCpu: percpu_ida_free() frees to this CPU*/, TagAccess& cost)
{
    CpuCache& mine = m_cpu[static_cast<std::size_t>(cpu)];
    m_inUseBy[static_cast<std::size_t>(tag)] = false;
    --m_inUse;
    lock(mine.lock, cpu, cost);
    mine.stack.push_back(tag);
    const int nrFree = static_cast<int>(mine.stack.size());
    cost.ns += m_costs.tag_put_ns;
    mine.lock.unlock(now(cost));
    if (nrFree == 1) {
        setHaveTags(cpu, true, cost);
        cost.wake = true; // wake_up(&pool->wait)
    }
    if (nrFree == m_sizing.maxSize) {
        lock(m_poolLock, cpu, cost);
        if (static_cast<int>(mine.stack.size()) == m_sizing.maxSize) {
            const int n = m_sizing.batchSize;
            cost.move(m_globalEntries.take(cpu, m_topo, m_costs), linesFor(n));
            ++cost.globalMoves;
            m_global.insert(m_global.end(), mine.stack.end() - n, mine.stack.end());
            mine.stack.resize(mine.stack.size() - static_cast<std::size_t>(n));
            cost.wake = true;
        }
        m_poolLock.unlock(now(cost));
    }
}

} // namespace blkmq
