#include "tags/TagRegistry.h"

#include "tags/BitmapTags.h"
#include "tags/PercpuIdaTags.h"
#include "topo/Topology.h"

#include <algorithm>

namespace blkmq {

// One entry per allocator (each in its own file); the first is the default.
const std::vector<TagAllocatorInfo>& TagRegistry::all()
{
    static const std::vector<TagAllocatorInfo> list {
        { "bitmap",
            { "", "blk-mq: implement new and more efficient tagging scheme", "Jens Axboe", "4bb659b15699", "v3.16",
                "64-bit words on their own cachelines, a per-CPU search hint starting at a random bit." },
            [](const TagAllocatorArgs& a) -> std::unique_ptr<TagAllocator> {
                return std::make_unique<BitmapTags>(a.depth, a.topo, a.costs, a.rng);
            } },
        { "percpu_ida",
            { "", "percpu_ida: fix a live lock", "Kent Overstreet, Shaohua Li", "d835502f3dac", "v3.13 .. v3.15",
                "Per-CPU stacks of free tags under per-CPU spinlocks; refills and steals under the pool lock; "
                "blk-mq's cache size depth / possible CPUs in [1, 64]." },
            [](const TagAllocatorArgs& a) -> std::unique_ptr<TagAllocator> {
                const auto sizing = PercpuIdaTags::sizingFor(
                    a.patches, a.depth, a.possibleCpus, a.topo.nrCpus(), std::max(1, a.nrCtx));
                return std::make_unique<PercpuIdaTags>(a.depth, sizing, a.topo, a.costs, a.patches);
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
