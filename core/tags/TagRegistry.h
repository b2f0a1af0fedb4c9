#pragma once

#include "sim/Provenance.h"
#include "tags/TagAllocator.h"
#include "spec/TagPatches.h"

#include <memory>
#include <string>
#include <vector>

namespace blkmq {

struct Costs;
class Rng;
class Topology;

// What blk_mq_init_tags() knows when it builds one hw queue's tags.
struct TagAllocatorArgs {
    int depth = 1;
    int nrCtx = 1; // ctxs mapped to the hctx (hctx->nr_ctx: hctx 0 also counts the offline possible CPUs)
    int possibleCpus = 1; // num_possible_cpus(); the topology's CPUs are the online ones
    TagPatches patches;
    const Topology& topo;
    const Costs& costs;
    Rng& rng;
};

// A driver-tag allocator, by name (kernel.tags). The first is the default.
struct TagAllocatorInfo {
    std::string name;
    Provenance from;
    std::unique_ptr<TagAllocator> (*make)(const TagAllocatorArgs& args);
    bool perCpuCaches = false; // free tags sit in per-CPU caches (the GUI colours them by CPU)
};

class TagRegistry {
public:
    static const std::vector<TagAllocatorInfo>& all();
    static const TagAllocatorInfo* find(const std::string& name);
};

} // namespace blkmq
