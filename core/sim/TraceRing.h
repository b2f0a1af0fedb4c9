#pragma once

#include "sim/TraceSink.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace blkmq {

// Bounded single-producer / single-consumer ring of trace records. The
// producer (engine) never waits: it overwrites the oldest slot. The consumer
// (GUI) reads behind it and counts what was overwritten before it got there.
// Each slot carries a sequence stamp, seqlock style, so a torn read is seen
// and counted as dropped instead of being returned. As a TraceSink it keeps
// the records and ignores slices (the GUI draws CPU state from snapshots).
class TraceRing : public TraceSink {
public:
    explicit TraceRing(std::size_t capacityPow2 = 1 << 16);

    void push(const TraceRecord& r);
    void record(const TraceRecord& r) override { push(r); }

    // Appends up to `max` records to `out`; returns how many were dropped
    // (overwritten before they could be read) since the last call.
    std::uint64_t read(std::vector<TraceRecord>& out, std::size_t max = SIZE_MAX);

    std::uint64_t written() const { return m_head.load(std::memory_order_acquire); }
    std::uint64_t droppedTotal() const { return m_droppedTotal; }
    std::size_t capacity() const { return m_mask + 1; }

private:
    struct Slot {
        std::atomic<std::uint64_t> stamp { 0 }; // index + 1 once written
        std::atomic<std::uint64_t> w[3];
    };
    std::unique_ptr<Slot[]> m_slots;
    std::size_t m_mask;
    std::atomic<std::uint64_t> m_head { 0 };
    std::uint64_t m_tail = 0; // consumer only
    std::uint64_t m_droppedTotal = 0; // consumer only
};

} // namespace blkmq
