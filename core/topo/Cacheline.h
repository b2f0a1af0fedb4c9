#pragma once

#include "io/Limits.h"
#include "topo/Costs.h"
#include "topo/Topology.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

namespace blkmq {

// What touching a line cost: ns, and the distance it came from (Self: it did not move).
struct LineMove {
    std::int64_t ns = 0;
    Distance from = Distance::Self;
};

// One cacheline of shared kernel state, as MESI sees it: its last writer owns
// it; a CPU that read it since shares it. A read by a CPU without a copy moves
// the line from its last writer (cacheline_ns by distance); a line nobody has
// written since the run began is taken to be in every reader's cache already
// (its first fetch from memory is not charged). `evicted`: the reader touches
// more lines than its private cache holds (private_cache_lines), so even its
// own copy is gone and the read costs at least an LLC hit.
struct Cacheline {
    static_assert(limits::kCpus <= INT16_MAX);
    // CPU ids fit 16 bits (limits::kCpus): a line is 4 bytes (thousands of hctxs hold two each).
    std::int16_t writer = -1; // last CPU to write it (-1: clean)
    std::int16_t reader = -1; // the last CPU to read it since that write
    template<class Hash>
    void hashState(Hash& h) const
    {
        h(writer, reader);
    }

    void write(int cpu)
    {
        writer = static_cast<std::int16_t>(cpu);
        reader = -1;
    }
    // Whether a read (fetch, not evicted) or a take by `cpu` would find the line in its own cache:
    // no move, no cost. A read then marks `cpu` a reader (noteRead), so a take right after a read
    // comes from the writer alone (readThenTakeIsOwn).
    bool readIsOwn(int cpu) const { return writer < 0 || writer == cpu || reader == cpu; }
    bool takeIsOwn(int cpu) const
    {
        const int from = writer >= 0 ? writer : reader;
        return from < 0 || from == cpu;
    }
    bool readThenTakeIsOwn(int cpu) const { return writer < 0 || writer == cpu; }
    void noteRead(int cpu) { reader = static_cast<std::int16_t>(cpu); } // what a read of an own line changes
    // A write that must first own the line (a read-for-ownership): free if `cpu` owns it, else the
    // transfer from its last writer, or from its last reader if nobody wrote it since.
    LineMove take(int cpu, const Topology& topo, const Costs& costs)
    {
        LineMove m;
        if (!takeIsOwn(cpu)) {
            const int from = writer >= 0 ? writer : reader;
            m = { costs.cacheline(topo, from, cpu), topo.distance(from, cpu) };
        }
        write(cpu);
        return m;
    }
    std::int64_t own(int cpu, const Topology& topo, const Costs& costs) { return take(cpu, topo, costs).ns; }
    // What any read costs at least: an LLC hit for an evicted reader, else nothing.
    static std::int64_t floorNs(bool evicted, const Costs& costs)
    {
        return evicted ? costs.cacheline_ns[static_cast<int>(Distance::Llc)] : 0;
    }
    // A read; an evicted reader's floor (an LLC hit) is not a move between CPUs.
    LineMove fetch(int cpu, bool evicted, const Topology& topo, const Costs& costs)
    {
        LineMove m;
        m.ns = floorNs(evicted, costs);
        if (!readIsOwn(cpu)) {
            const std::int64_t ns = costs.cacheline(topo, writer, cpu);
            if (ns >= m.ns)
                m = { ns, topo.distance(writer, cpu) };
        }
        reader = static_cast<std::int16_t>(cpu);
        return m;
    }
    std::int64_t read(int cpu, bool evicted, const Topology& topo, const Costs& costs)
    {
        return fetch(cpu, evicted, topo, costs).ns;
    }
};

// The two lines of struct blk_mq_hw_ctx (v4.14 layout) that the restart walk reads: line 0 holds
// lock, dispatch and state; the line of `tags` also holds dispatch_wait, wait_index and the
// queued / run / dispatched[] counters, written on every allocation, run and dispatch. Kept apart
// from the rest of the hctx, one array per line for all hctxs.
//
// A walk reads the tags lines of thousands of hctxs, most of which nobody ever wrote (no request
// was ever allocated, run or dispatched there). Such a clean line costs every reader the same (its
// floor), and its last reader matters only to a read-for-ownership, which a tags line never gets:
// it is only written (writeTags) and read (readTags, readTagsRun). So a run of reads costs the floor
// per clean line plus the reads of the written ones, found in a bitmap, and leaves the clean lines
// alone (tst_restart checks this against reading every line).
class HctxLines {
public:
    void resize(std::size_t nrHctxs)
    {
        m_state.resize(nrHctxs);
        m_tags.resize(nrHctxs);
        m_tagsWritten.assign((nrHctxs + 63) / 64, 0);
    }
    Cacheline& state(int h) { return m_state[static_cast<std::size_t>(h)]; }
    void writeTags(int h, int cpu)
    {
        m_tags[static_cast<std::size_t>(h)].write(cpu);
        m_tagsWritten[static_cast<std::size_t>(h) / 64] |= 1ULL << (h % 64);
    }
    std::int64_t readTags(int h, int cpu, bool evicted, const Topology& topo, const Costs& costs)
    {
        return m_tags[static_cast<std::size_t>(h)].read(cpu, evicted, topo, costs);
    }
    // The tags lines of hctxs [from, to), read in turn by `cpu`: what they cost together.
    std::int64_t readTagsRun(int from, int to, int cpu, bool evicted, const Topology& topo, const Costs& costs)
    {
        if (from >= to)
            return 0;
        std::int64_t ns = 0;
        int written = 0;
        for (int w = from / 64; w <= (to - 1) / 64; ++w) {
            std::uint64_t bits = m_tagsWritten[static_cast<std::size_t>(w)];
            if (w == from / 64)
                bits &= ~0ULL << (from % 64);
            if (w == (to - 1) / 64 && to % 64 != 0)
                bits &= ~(~0ULL << (to % 64));
            for (; bits; bits &= bits - 1, ++written)
                ns += readTags(w * 64 + std::countr_zero(bits), cpu, evicted, topo, costs);
        }
        return ns + Cacheline::floorNs(evicted, costs) * (to - from - written);
    }

    template<class Hash>
    void hashState(Hash& h) const
    {
        h(m_state, m_tags, m_tagsWritten);
    }

private:
    std::vector<Cacheline> m_state;
    std::vector<Cacheline> m_tags;
    std::vector<std::uint64_t> m_tagsWritten; // a bit per hctx whose tags line was ever written
};

} // namespace blkmq
