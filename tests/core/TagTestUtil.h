#pragma once

// What the tag tests share: machines, allocators and a percpu_ida driven by hand, BlkMqTags on a
// bare machine, and a recorder of the hctxs a freed tag wakes.
#include "TestUtil.h"

#include "block/BlkMqTags.h"
#include "cpu/Machine.h"
#include "scenario/KernelSwitches.h"
#include "tags/PercpuIdaTags.h"
#include "tags/TagRegistry.h"
#include "topo/TopologyLoader.h"

#include <memory>
#include <string>
#include <vector>

namespace blkmq::test {

inline Topology topology(const char* spec)
{
    auto t = TopologyLoader::fromSpec(spec);
    if (!t.ok())
        qFatal("%s", t.error().c_str());
    return *t;
}

inline std::unique_ptr<TagAllocator> make(const TagAllocatorInfo& info, int depth, const Topology& topo,
    const Costs& costs, Rng& rng, const TagPatches& patches = {})
{
    return info.make({ depth, topo.nrCpus(), topo.nrCpus(), patches, topo, costs, rng });
}

// The patches of KernelSpec with one switch (by key) turned on.
inline TagPatches patchSet(const std::string& key)
{
    KernelSpec k;
    if (!key.empty())
        KernelSwitches::find(key)->flag(k) = true;
    return k.tag_patches;
}
inline TagPatches patchSet(const QString& key) { return patchSet(key.toStdString()); }
inline TagPatches patchSet(const char* key) { return patchSet(std::string(key)); }

// Drives one percpu_ida directly, each operation 1 µs after the last (no lock is ever contended).
struct IdaDriver {
    IdaDriver(int depth, PercpuIdaTags::Sizing sizing, const Topology& topo, const Costs& costs,
        const TagPatches& patches = {})
        : ida(depth, sizing, topo, costs, patches)
    {
    }
    int get(int cpu)
    {
        TagAlloc a;
        a.cpu = cpu;
        TagAccess cost;
        cost.start = now += 1000;
        ida.get(a, cost);
        return a.tag;
    }
    void put(int cpu, int tag)
    {
        TagAccess cost;
        cost.start = now += 1000;
        ida.put(cpu, tag, cpu, cost);
    }
    // `cpu` takes two tags and frees them: with a cache of 2 and batches of 1, one stays in its cache.
    void leaveOneCached(int cpu)
    {
        const int t1 = get(cpu), t2 = get(cpu);
        put(cpu, t1);
        put(cpu, t2);
    }
    PercpuIdaTags ida;
    std::int64_t now = 0;
};

// The parked hctxs' wake function: records which the tags woke, in order.
struct Parked {
    std::vector<int> runs;
    void dispatchWake(int /*cpu*/, int hctx) { runs.push_back(hctx); }
};

// One two-CPU machine with an allocator's tags of some depth (the default allocator unless named),
// for BlkMqTags tests.
struct TagBench {
    explicit TagBench(int depth, const char* allocator = nullptr)
        : topo(topology("1n:1p:2c:1t"))
        , sim(topo, Costs::defaults(), 1)
        , machine(sim)
        , tags(sim, machine,
              make(allocator ? *TagRegistry::find(allocator) : TagRegistry::all().front(), depth, topo, sim.costs,
                  sim.rng),
              DispatchWake::of(woken))
    {
    }
    Topology topo;
    Sim sim;
    Machine machine;
    Parked woken;
    BlkMqTags tags;
};

} // namespace blkmq::test
