#pragma once

#include "sim/Cloned.h"
#include "tags/TagAllocator.h"
#include "spec/TagPatches.h"
#include "topo/Costs.h"
#include "topo/Spinlock.h"

#include <memory>
#include <vector>

namespace blkmq {

// percpu_ida (lib/percpu_ida.c at d835502f3dac, v3.14; blk-mq's driver tags
// from v3.13 to v3.15). Each CPU caches up to maxSize free tags in a stack
// under its own spinlock; the pool keeps a global stack, the mask of CPUs
// that have cached tags and the CPU stolen from last, under the pool lock.
//
// get: pop the own stack under its lock (fast path). Otherwise, under the pool
// lock: move min(global, batch) tags from the global stack; if there were
// none, steal_tags(): for as many CPUs as cpus_have_tags holds, the next set
// bit after cpu_last_stolen (wrapping), record it, clear it (its own too), and
// take that CPU's whole stack under its lock, until something was taken. A
// tag got with more left over sets the own bit.
// put: push on the own stack under its lock; the first tag sets the own bit
// and wakes the pool's wait queue; a full stack moves `batch` tags to the
// global stack under the pool lock and wakes it too.
//
// Costs: tag_get_ns / tag_put_ns of instructions per stack operation; every
// lock is a Spinlock (spinning, then its line from the last holder); the
// cpus_have_tags mask, the global stack and a stolen stack's entries are
// cachelines that move by distance. Runs in one step (the locks are timelines).
//
// The thread's patches (TagPatches): ida-topology-steal replaces the
// round-robin from cpu_last_stolen by the stealing CPU's sched-domain levels;
// ida-v3.13-steal restores the steal condition before d835502f3dac; the
// sizing patches only change Sizing (sizingFor). ida-lock-split is Peter
// Zijlstra's rework as Gordeev combined it (the 2014 percpu_ida thread, against 3.15-rc3):
// steal_tags() without the pool lock and with interrupts on, in steps that
// other CPUs and this CPU's interrupts interleave with; its races are left in
// and counted (TagAccess::lost, ::hidden).
class PercpuIdaTags final : public TagAllocator {
public:
    struct Sizing {
        int maxSize = 1; // percpu_max_size
        int batchSize = 1; // percpu_batch_size
    };
    // blk_mq_init_tags() of v3.14: nr_cache = depth / num_possible_cpus() clamped to
    // [BLK_MQ_TAG_CACHE_MIN 1, BLK_MQ_TAG_CACHE_MAX 64]; batch = max(1, nr_cache / 2).
    static Sizing blkMqSizing(int depth, int possibleCpus);
    // The same with the sizing patches: the divisor is min(8, online CPUs) with ida-steal-limit,
    // hctx->nr_ctx with ida-cache-per-ctx; ida-min-cache-8 raises the result to at least 8.
    static Sizing sizingFor(const TagPatches& patches, int depth, int possibleCpus, int onlineCpus, int nrCtx);

    PercpuIdaTags(int depth, Sizing sizing, const Topology& topo, const Costs& costs, const TagPatches& patches = {});

    [[gnu::hot]] Step get(TagAlloc& a, TagAccess& cost) override;
    [[gnu::hot]] void put(int cpu, int tag, int allocCpu, TagAccess& cost) override;
    std::unique_ptr<TagAllocator> clone() const override { return std::make_unique<PercpuIdaTags>(*this); }
    std::size_t bytes() const override;
    void hashState(StateHash& h) const override
    {
        h(m_inUse, m_inUseBy, m_cpu, m_poolLock, m_global, m_globalEntries, m_haveTags, m_haveTagsLine, m_lastStolen,
            m_lost, m_lostTag);
    }
    int depth() const override { return m_depth; }
    int inUse() const override { return m_inUse; }
    bool isSet(int tag) const override { return m_inUseBy[static_cast<std::size_t>(tag)]; }
    // wake_up(&pool->wait); blk-mq of its time waits by a get and a put (TagWaitRules::getThenPut)
    TagWaitRules waitRules() const override { return { true, 1, false, true }; }
    int lost() const override { return m_lost; }
    int findableFree() const override; // the global freelist and every CPU's, each tag once
    bool isLost(int tag) const { return m_lostTag[static_cast<std::size_t>(tag)]; }
    int hiddenOn(int cpu) const override { return hasTagsBit(cpu) ? 0 : cachedOn(cpu); }
    void mapCaches(std::span<std::int16_t> map, std::int16_t lostMark) const override;

    int cachedOn(int cpu) const { return static_cast<int>(m_cpu[static_cast<std::size_t>(cpu)].stack.size()); }
    int globalFree() const { return static_cast<int>(m_global.size()); }
    bool hasTagsBit(int cpu) const { return m_haveTags[static_cast<std::size_t>(cpu)]; }

private:
    struct CpuCache {
        Spinlock lock; // its line also holds nr_free and the first 14 entries of freelist[]
        std::vector<int> stack; // freelist[0..nr_free), capacity maxSize
        void hashState(StateHash& h) const { h(lock, stack); }
    };
    static std::int64_t now(const TagAccess& cost);
    void lock(Spinlock& l, int cpu, TagAccess& cost); // spin, then take its line from the last holder
    void steal(int cpu, TagAccess& cost); // steal_tags()
    bool stealFrom(int victim, int cpu, TagAccess& cost); // clear its bit, take its stack; true: got tags
    void takeStack(int victim, int cpu, TagAccess& cost); // the memcpy of a victim's stack over the own
    void refillFromGlobal(int cpu, TagAccess& cost); // alloc_global_tags(): a batch, if the own stack is empty
    int nextWithTags(int after) const; // cpumask_next(after, cpus_have_tags), wrapping; -1: none
    void setHaveTags(int cpu, bool on, TagAccess& cost);
    // ida-lock-split: alloc_global_tag() under the pool lock, then steal_tags() one step per FIND and
    // per UNSET + double_lock + memcpy, each its own action (interrupts are on in between).
    Step splitSlowPath(TagAlloc& a, TagAccess& cost);
    Step splitStealStep(TagAlloc& a, TagAccess& cost);
    void popOwn(TagAlloc& a, TagAccess& cost); // take the top of the own stack, set the own bit if more are left
    Step afterSteal(TagAlloc& a, TagAccess& cost); // the own stack once more, then fail
    Step fail(TagAlloc& a, TagAccess& cost);

    int m_depth;
    Sizing m_sizing;
    int m_inUse = 0;
    std::vector<bool> m_inUseBy;
    std::vector<CpuCache> m_cpu;
    Spinlock m_poolLock; // its line also holds cpu_last_stolen, the wait queue head and nr_free
    std::vector<int> m_global; // pool->freelist
    Cacheline m_globalEntries; // the top of pool->freelist, where batches move
    std::vector<bool> m_haveTags; // cpus_have_tags
    Cacheline m_haveTagsLine;
    int m_lastStolen = 0; // cpu_last_stolen
    bool m_v313Steal = false;
    bool m_lockSplit = false;
    int m_lost = 0;
    std::vector<bool> m_lostTag;
    // ida-topology-steal: per CPU, every CPU by sched-domain level, then id (for_each_tlm, for_each_cpu_and).
    std::vector<std::vector<int>> m_tlmOrder;
};

} // namespace blkmq
