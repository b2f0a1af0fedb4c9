#pragma once

namespace blkmq {

// The percpu_ida patches of the 2014 thread (the 2014 percpu_ida thread), as switched in
// kernel.patches (scenario/KernelSwitches.cpp). They apply to
// kernel.tags=percpu_ida only; the loader rejects them with any other allocator.
struct TagPatches {
    bool stealLimit = false; // ida-steal-limit: nr_cache = nr_tags / min(8, online CPUs)
    bool topologySteal = false; // ida-topology-steal: steal_tags() by sched-domain level (for_each_tlm)
    bool cachePerCtx = false; // ida-cache-per-ctx: nr_cache = nr_tags / hctx->nr_ctx
    bool minCache8 = false; // ida-min-cache-8: percpu_max_size at least 8
    bool v313Steal = false; // ida-v3.13-steal: steal only while weight(cpus_have_tags) * max > nr_tags / 2
    bool lockSplit = false; // ida-lock-split: steal_tags() without the pool lock, interrupts on, race left in
};

} // namespace blkmq
