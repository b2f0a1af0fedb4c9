#pragma once

#include "sim/Provenance.h"
#include "tags/TagAllocator.h"

#include <memory>
#include <string>
#include <vector>

namespace blkmq {

struct Costs;
class Rng;
class Topology;

// A driver-tag allocator, by name (kernel.tags). The first is the default.
struct TagAllocatorInfo {
    std::string name;
    Provenance from;
    std::unique_ptr<TagAllocator> (*make)(int depth, const Topology& topo, const Costs& costs, Rng& rng);
};

class TagRegistry {
public:
    static const std::vector<TagAllocatorInfo>& all();
    static const TagAllocatorInfo* find(const std::string& name);
};

} // namespace blkmq
