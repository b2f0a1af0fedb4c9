#include "tags/TagRegistry.h"

#include "tags/BitmapTags.h"
#include "tags/CmpxchgTags.h"
#include "tags/PercpuIdaTags.h"
#include "topo/Topology.h"

#include <algorithm>

namespace blkmq {

// One entry per allocator (each in its own file); the first is the default.
const std::vector<TagAllocatorInfo>& TagRegistry::all()
{
    static const std::vector<TagAllocatorInfo> list {
        { "sbitmap",
            { "", "blk-mq: abstract tag allocation out into sbitmap library", "Omar Sandoval", "88459642cba4",
                "v4.9 (v4.14 here)",
                "lib/sbitmap.c: words of at least 4 lines, a per-CPU alloc_hint, exclusive waiters woken "
                "wake_batch = clamp(depth / 8, 1, 8) at a time." },
            [](const TagAllocatorArgs& a) -> std::unique_ptr<TagAllocator> {
                return std::make_unique<BitmapTags>(BitmapTags::Kind::Sbitmap, a.depth, a.topo, a.costs, a.rng);
            } },
        { "bitmap",
            { "", "blk-mq: implement new and more efficient tagging scheme", "Jens Axboe", "4bb659b15699", "v3.16",
                "Words of at least 4 lines, a per-ctx last_tag hint, 8 wait queues whose waiters all wake every "
                "min(8, depth / 4) frees." },
            [](const TagAllocatorArgs& a) -> std::unique_ptr<TagAllocator> {
                return std::make_unique<BitmapTags>(BitmapTags::Kind::Bitmap, a.depth, a.topo, a.costs, a.rng);
            } },
        { "percpu_ida",
            { "", "percpu_ida: fix a live lock", "Kent Overstreet, Shaohua Li", "d835502f3dac", "v3.13 .. v3.15",
                "Per-CPU stacks of free tags under per-CPU spinlocks; refills and steals under the pool lock; "
                "blk-mq's cache size depth / possible CPUs in [1, 64]." },
            [](const TagAllocatorArgs& a) -> std::unique_ptr<TagAllocator> {
                const auto sizing = PercpuIdaTags::sizingFor(
                    a.patches, a.depth, a.possibleCpus, a.topo.nrCpus(), std::max(1, a.nrCtx));
                return std::make_unique<PercpuIdaTags>(a.depth, sizing, a.topo, a.costs, a.patches);
            },
            true },
        { "cmpxchg",
            { "", "a fairly straight forward cmpxchg based scheme (tested, never posted)", "Jens Axboe", "",
                "proposed (design assumed)",
                "ASSUMED DESIGN: one lock-free LIFO list of free tags whose head every CPU compare-and-swaps; no "
                "per-CPU caching." },
            [](const TagAllocatorArgs& a) -> std::unique_ptr<TagAllocator> {
                return std::make_unique<CmpxchgTags>(a.depth, a.topo, a.costs);
            } },
    };
    return list;
}

const TagAllocatorInfo* TagRegistry::find(const std::string& name)
{
    for (const auto& a : all())
        if (a.name == name)
            return &a;
    return nullptr;
}

} // namespace blkmq
