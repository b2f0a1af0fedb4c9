#pragma once

#include "sim/Cloned.h"
#include "tags/TagAllocator.h"
#include "topo/Cacheline.h"
#include "topo/Costs.h"

#include <memory>
#include <vector>

namespace blkmq {

// Jens Axboe's "fairly straight forward cmpxchg based scheme" (the 2014 percpu_ida thread, April
// 2014), which he tested but never posted. THE DESIGN IS ASSUMED: one
// lock-free LIFO list of free tags, its head (tag and an ABA counter) in one
// cacheline, the links next[tag] in lines of 16. No per-CPU caching.
//
// get: load the head, load next[head], cmpxchg the head to it. put: load the
// head, next[tag] = head, cmpxchg the head to tag. A cmpxchg owns the head's
// line: atomics on one line are serialised, so a CPU whose cmpxchg comes
// while another CPU's holds the line waits for it (the line as a timeline,
// like topo/Spinlock); a cmpxchg fails if another CPU's succeeded after this
// CPU loaded the head, and is retried (TagAccess::retries). Costs:
// tag_get_ns / tag_put_ns per attempt, and each line's move by distance.
// Sleepers wait on the sbitmap-style wait queues beside it (also assumed).
class CmpxchgTags final : public TagAllocator {
public:
    CmpxchgTags(int depth, const Topology& topo, const Costs& costs);

    [[gnu::hot]] Step get(TagAlloc& a, TagAccess& cost) override;
    [[gnu::hot]] void put(int cpu, int tag, int allocCpu, TagAccess& cost) override;
    std::unique_ptr<TagAllocator> clone() const override { return std::make_unique<CmpxchgTags>(*this); }
    std::size_t bytes() const override { return heapBytes(m_inUseBy) + heapBytes(m_next) + heapBytes(m_linkLines); }
    void hashState(StateHash& h) const override
    {
        h(m_inUse, m_inUseBy, m_head, m_next, m_headLine, m_headFreeAt, m_headWrittenAt, m_linkLines);
    }
    int depth() const override { return m_depth; }
    int inUse() const override { return m_inUse; }
    bool isSet(int tag) const override { return m_inUseBy[static_cast<std::size_t>(tag)]; }
    TagWaitRules waitRules() const override;

private:
    static std::int64_t now(const TagAccess& cost) { return cost.start + cost.ns; }
    Cacheline& linkLine(int tag) { return m_linkLines[static_cast<std::size_t>(tag / 16)]; }
    // One cmpxchg of the head by `cpu`, which loaded it at `loadedAt`: true if it succeeded.
    bool cmpxchg(int cpu, std::int64_t loadedAt, TagAccess& cost);

    int m_depth;
    int m_inUse = 0;
    std::vector<bool> m_inUseBy;
    int m_head = 0; // -1: empty
    std::vector<int> m_next;
    Cacheline m_headLine;
    std::int64_t m_headFreeAt = 0; // the last cmpxchg on the line ends then
    std::int64_t m_headWrittenAt = -1; // the last successful cmpxchg
    std::vector<Cacheline> m_linkLines;
};

} // namespace blkmq
