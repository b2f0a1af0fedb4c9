#pragma once

#include "tags/TagAllocator.h"
#include "topo/Costs.h"

#include <vector>

namespace blkmq {

class Rng;

// Bitmap tags (v3.16, 4bb659b15699): 64-bit words, each on its own
// cacheline with a last-writer CPU; per-CPU search hint starting at a random
// bit. Touching a word last written by another CPU costs a transfer at that
// distance, so contention on shared words emerges from the access pattern.
// One step per allocation (a test-and-set, no lock).
class BitmapTags final : public TagAllocator {
public:
    BitmapTags(int depth, const Topology& topo, const Costs& costs, Rng& rng);

    Step get(TagAlloc& a, TagAccess& cost) override;
    void put(int cpu, int tag, TagAccess& cost) override;
    int depth() const override { return m_depth; }
    int inUse() const override { return m_inUse; }
    bool isSet(int tag) const override;

private:
    void touch(int word, int cpu, TagAccess& cost);

    const Topology& m_topo;
    const Costs& m_costs;
    int m_depth;
    int m_inUse = 0;
    std::vector<std::uint64_t> m_words;
    std::vector<int> m_owner; // last CPU to write each word, -1 = never
    std::vector<int> m_hint; // per CPU: next tag to try (last_tag)
};

} // namespace blkmq
