#include "tags/TagRegistry.h"

#include "tags/BitmapTags.h"
#include "tags/PercpuIdaTags.h"
#include "topo/Topology.h"

namespace blkmq {

// One entry per allocator (each in its own file); the first is the default.
const std::vector<TagAllocatorInfo>& TagRegistry::all()
{
    static const std::vector<TagAllocatorInfo> list {
        { "bitmap",
            { "", "blk-mq: implement new and more efficient tagging scheme", "Jens Axboe", "4bb659b15699", "v3.16",
                "64-bit words on their own cachelines, a per-CPU search hint starting at a random bit." },
            [](int depth, const Topology& topo, const Costs& costs, Rng& rng) -> std::unique_ptr<TagAllocator> {
                return std::make_unique<BitmapTags>(depth, topo, costs, rng);
            } },
        { "percpu_ida",
            { "", "percpu_ida: fix a live lock", "Kent Overstreet, Shaohua Li", "d835502f3dac", "v3.13 .. v3.15",
                "Per-CPU stacks of free tags under per-CPU spinlocks; refills and steals under the pool lock; "
                "blk-mq's cache size depth / possible CPUs in [1, 64]." },
            [](int depth, const Topology& topo, const Costs& costs, Rng&) -> std::unique_ptr<TagAllocator> {
                return std::make_unique<PercpuIdaTags>(
                    depth, PercpuIdaTags::blkMqSizing(depth, topo.nrCpus()), topo, costs);
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
