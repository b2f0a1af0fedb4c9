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
    : TagAllocator(topo, costs)
    , m_depth(depth)
    , m_sizing(sizing)
    , m_inUseBy(static_cast<std::size_t>(depth), false)
    , m_cpu(static_cast<std::size_t>(topo.nrCpus()))
    , m_haveTags(static_cast<std::size_t>(topo.nrCpus()), false)
    , m_v313Steal(patches.v313Steal)
    , m_lockSplit(patches.lockSplit)
    , m_lostTag(static_cast<std::size_t>(depth), false)
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

std::size_t PercpuIdaTags::bytes() const
{
    std::size_t n = heapBytes(m_inUseBy) + heapBytes(m_cpu) + heapBytes(m_global) + heapBytes(m_haveTags)
        + heapBytes(m_lostTag) + heapBytes(m_tlmOrder);
    for (const CpuCache& c : m_cpu)
        n += heapBytes(c.stack);
    for (const auto& order : m_tlmOrder)
        n += heapBytes(order);
    return n;
}

// The simulated time the operation has reached: it started at cost.start and has cost cost.ns.
std::int64_t PercpuIdaTags::now(const TagAccess& cost) { return cost.start + cost.ns; }

void PercpuIdaTags::lock(Spinlock& l, int cpu, TagAccess& cost)
{
    std::int64_t spin = 0;
    LineMove moved;
    const std::int64_t asked = now(cost);
    const std::int64_t got = l.lock(cpu, asked, *m_topo, *m_costs, spin, &moved);
    cost.lockWaitNs += spin;
    cost.lockNs += got - asked;
    cost.ns += spin;
    cost.move(moved);
}

void PercpuIdaTags::setHaveTags(int cpu, bool on, TagAccess& cost)
{
    cost.move(m_haveTagsLine.take(cpu, *m_topo, *m_costs)); // cpumask_set_cpu / _clear_cpu: a locked bit op
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
    takeStack(victim, cpu, cost);
    remote.lock.unlock(now(cost));
    return !mine.stack.empty();
}

void PercpuIdaTags::takeStack(int victim, int cpu, TagAccess& cost)
{
    CpuCache& mine = m_cpu[static_cast<std::size_t>(cpu)];
    CpuCache& remote = m_cpu[static_cast<std::size_t>(victim)];
    const int got = static_cast<int>(remote.stack.size());
    if (got == 0)
        return;
    // memcpy(tags->freelist, remote->freelist, ...) replaces the own stack: any tag in it is gone (only
    // ida-lock-split can get here with one, an interrupt's free since the own stack was found empty).
    for (int tag : mine.stack) {
        m_lostTag[static_cast<std::size_t>(tag)] = true;
        ++m_lost;
        ++cost.lost;
    }
    // the lines beyond the header line come from the victim
    const Distance d = m_topo->distance(victim, cpu);
    cost.move({ m_costs->cacheline(*m_topo, victim, cpu), d }, linesFor(std::max(0, got - kEntriesInHeaderLine)));
    mine.stack.assign(remote.stack.begin(), remote.stack.end());
    remote.stack.clear();
    ++cost.steals[static_cast<std::size_t>(d)];
    cost.victim = static_cast<std::int16_t>(victim);
}

int PercpuIdaTags::findableFree() const
{
    // blkmqlab-cli check asks after every event: up to 64 tags without allocating.
    std::uint64_t small = 0;
    std::vector<bool> seen(m_depth > 64 ? static_cast<std::size_t>(m_depth) : 0, false);
    int n = 0;
    const auto add = [&](int tag) {
        if (m_inUseBy[static_cast<std::size_t>(tag)])
            return;
        if (m_depth <= 64) {
            const std::uint64_t bit = std::uint64_t(1) << tag;
            n += (small & bit) ? 0 : 1;
            small |= bit;
        } else if (!seen[static_cast<std::size_t>(tag)]) {
            seen[static_cast<std::size_t>(tag)] = true;
            ++n;
        }
    };
    for (int tag : m_global)
        add(tag);
    for (const CpuCache& c : m_cpu)
        for (int tag : c.stack)
            add(tag);
    return n;
}

void PercpuIdaTags::refillFromGlobal(int cpu, TagAccess& cost)
{
    CpuCache& mine = m_cpu[static_cast<std::size_t>(cpu)];
    if (!mine.stack.empty() || m_global.empty())
        return;
    const int n = std::min(static_cast<int>(m_global.size()), m_sizing.batchSize);
    cost.move(m_globalEntries.take(cpu, *m_topo, *m_costs), linesFor(n));
    ++cost.globalMoves;
    mine.stack.insert(mine.stack.end(), m_global.end() - n, m_global.end());
    m_global.resize(m_global.size() - static_cast<std::size_t>(n));
}

int PercpuIdaTags::nextWithTags(int after) const
{
    const int nrCpus = static_cast<int>(m_cpu.size());
    for (int i = 1; i <= nrCpus; ++i) {
        const int c = (after + i) % nrCpus;
        if (m_haveTags[static_cast<std::size_t>(c)])
            return c;
    }
    return -1;
}

void PercpuIdaTags::steal(int cpu, TagAccess& cost)
{
    cost.move(m_haveTagsLine.fetch(cpu, false, *m_topo, *m_costs));
    if (!m_tlmOrder.empty()) {
        // Gordeev's for_each_tlm(): nearest level first, ascending ids within it.
        for (int victim : m_tlmOrder[static_cast<std::size_t>(cpu)])
            if (m_haveTags[static_cast<std::size_t>(victim)] && stealFrom(victim, cpu, cost))
                return;
        return;
    }
    int n = static_cast<int>(std::count(m_haveTags.begin(), m_haveTags.end(), true)); // cpumask_weight
    // v3.13 stops once so few CPUs cache tags that fewer than half of them could be remote.
    for (; n > 0 && (!m_v313Steal || n * m_sizing.maxSize > m_depth / 2); --n) {
        m_lastStolen = nextWithTags(m_lastStolen); // under the pool lock the mask holds n bits
        if (stealFrom(m_lastStolen, cpu, cost))
            break;
    }
}

namespace {
enum SplitState : int { kStart = 0, kFind, kUnset, kTake }; // TagAlloc::state of an ida-lock-split allocation
} // namespace

void PercpuIdaTags::popOwn(TagAlloc& a, TagAccess& cost)
{
    CpuCache& mine = m_cpu[static_cast<std::size_t>(a.cpu)];
    lock(mine.lock, a.cpu, cost);
    cost.ns += m_costs->tag_get_ns;
    a.tag = mine.stack.back();
    mine.stack.pop_back();
    mine.lock.unlock(now(cost));
    if (!mine.stack.empty())
        setHaveTags(a.cpu, true, cost);
    m_inUseBy[static_cast<std::size_t>(a.tag)] = true;
    ++m_inUse;
    a.state = kStart;
}

TagAllocator::Step PercpuIdaTags::fail(TagAlloc& a, TagAccess& cost)
{
    a.tag = -1;
    a.state = kStart;
    for (std::size_t c = 0; c < m_cpu.size(); ++c)
        if (!m_cpu[c].stack.empty() && !m_haveTags[c] && !cost.hidden())
            cost.hiddenOn = static_cast<std::int16_t>(c); // a waiter going to sleep misses this CPU's tags
    return Step::Done;
}

TagAllocator::Step PercpuIdaTags::splitSlowPath(TagAlloc& a, TagAccess& cost)
{
    const int cpu = a.cpu;
    CpuCache& mine = m_cpu[static_cast<std::size_t>(cpu)];
    cost.local = false;
    lock(m_poolLock, cpu, cost); // alloc_global_tag(): the own stack is touched without its lock
    refillFromGlobal(cpu, cost);
    m_poolLock.unlock(now(cost));
    if (!mine.stack.empty()) {
        popOwn(a, cost);
        return Step::Done;
    }
    // steal_tags(), interrupts on: for (cpus_have_tags = cpumask_weight(); cpus_have_tags; cpus_have_tags--)
    a.scratch[0] = static_cast<std::int32_t>(std::count(m_haveTags.begin(), m_haveTags.end(), true));
    a.state = kFind;
    return Step::More;
}

// After steal_tags() returns: if (tags->nr_free) take the top. An interrupt may have refilled the own
// stack meanwhile.
TagAllocator::Step PercpuIdaTags::afterSteal(TagAlloc& a, TagAccess& cost)
{
    if (m_cpu[static_cast<std::size_t>(a.cpu)].stack.empty())
        return fail(a, cost);
    popOwn(a, cost);
    return Step::Done;
}

TagAllocator::Step PercpuIdaTags::splitStealStep(TagAlloc& a, TagAccess& cost)
{
    const int cpu = a.cpu;
    CpuCache& mine = m_cpu[static_cast<std::size_t>(cpu)];
    if (a.state == kFind) {
        if (a.scratch[0] <= 0)
            return afterSteal(a, cost);
        // cpu = cpumask_next(cpu_last_stolen), else cpumask_first (where the kernel would BUG() on an empty mask)
        cost.move(m_haveTagsLine.fetch(cpu, false, *m_topo, *m_costs));
        const int victim = nextWithTags(m_lastStolen); // other stealers may have emptied the mask meanwhile
        if (victim < 0)
            return afterSteal(a, cost);
        m_lastStolen = victim;
        a.scratch[1] = victim;
        a.state = kUnset;
        return Step::More;
    }
    const int victim = a.scratch[1];
    if (a.state == kUnset) { // cpumask_clear_cpu(): another stealer may have found the same bit
        --a.scratch[0];
        setHaveTags(victim, false, cost);
        if (victim != cpu) {
            a.state = kTake;
            return Step::More;
        }
    } else { // double_lock(own, remote), then the memcpy over the own stack
        CpuCache& remote = m_cpu[static_cast<std::size_t>(victim)];
        CpuCache& first = victim < cpu ? remote : mine; // double_lock() takes the lower address first
        CpuCache& second = victim < cpu ? mine : remote;
        lock(first.lock, cpu, cost);
        lock(second.lock, cpu, cost);
        takeStack(victim, cpu, cost);
        second.lock.unlock(now(cost));
        first.lock.unlock(now(cost));
        if (!mine.stack.empty()) {
            popOwn(a, cost);
            return Step::Done;
        }
    }
    if (a.scratch[0] > 0) {
        a.state = kFind;
        return Step::More;
    }
    return afterSteal(a, cost);
}

TagAllocator::Step PercpuIdaTags::get(TagAlloc& a, TagAccess& cost)
{
    if (m_lockSplit && a.state != kStart)
        return splitStealStep(a, cost);
    const int cpu = a.cpu;
    CpuCache& mine = m_cpu[static_cast<std::size_t>(cpu)];
    a.tag = -1;
    // Fast path: alloc_local_tag().
    lock(mine.lock, cpu, cost);
    cost.ns += m_costs->tag_get_ns;
    if (!mine.stack.empty()) {
        a.tag = mine.stack.back();
        mine.stack.pop_back();
    }
    mine.lock.unlock(now(cost));
    if (a.tag < 0 && m_lockSplit)
        return splitSlowPath(a, cost);
    if (a.tag < 0) {
        // Slow path, under the pool lock (the own stack is touched without its lock).
        cost.local = false;
        lock(m_poolLock, cpu, cost);
        refillFromGlobal(cpu, cost); // alloc_global_tags()
        if (mine.stack.empty())
            steal(cpu, cost);
        if (!mine.stack.empty()) {
            a.tag = mine.stack.back();
            mine.stack.pop_back();
            if (!mine.stack.empty())
                setHaveTags(cpu, true, cost);
        }
        cost.ns += m_costs->tag_get_ns;
        m_poolLock.unlock(now(cost));
    }
    if (a.tag < 0)
        return fail(a, cost);
    m_inUseBy[static_cast<std::size_t>(a.tag)] = true;
    ++m_inUse;
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
    cost.ns += m_costs->tag_put_ns;
    mine.lock.unlock(now(cost));
    if (nrFree == 1) {
        setHaveTags(cpu, true, cost);
        cost.wake = true; // wake_up(&pool->wait)
    }
    if (nrFree == m_sizing.maxSize) {
        lock(m_poolLock, cpu, cost);
        if (static_cast<int>(mine.stack.size()) == m_sizing.maxSize) {
            const int n = m_sizing.batchSize;
            cost.move(m_globalEntries.take(cpu, *m_topo, *m_costs), linesFor(n));
            ++cost.globalMoves;
            m_global.insert(m_global.end(), mine.stack.end() - n, mine.stack.end());
            mine.stack.resize(mine.stack.size() - static_cast<std::size_t>(n));
            cost.wake = true;
        }
        m_poolLock.unlock(now(cost));
    }
}

void PercpuIdaTags::mapCaches(std::span<std::int16_t> map, std::int16_t lostMark) const
{
    for (std::size_t c = 0; c < m_cpu.size(); ++c)
        for (int tag : m_cpu[c].stack)
            map[static_cast<std::size_t>(tag)] = static_cast<std::int16_t>(c);
    for (std::size_t tag = 0; tag < m_lostTag.size() && tag < map.size(); ++tag)
        if (m_lostTag[tag])
            map[tag] = lostMark;
}

} // namespace blkmq
