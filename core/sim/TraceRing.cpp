#include "sim/TraceRing.h"

#include <bit>
#include <cstring>

namespace blkmq {

static_assert(sizeof(TraceRecord) <= 3 * sizeof(std::uint64_t));

TraceRing::TraceRing(std::size_t capacityPow2)
    : m_slots(new Slot[std::bit_ceil(capacityPow2 < 2 ? 2 : capacityPow2)])
    , m_mask(std::bit_ceil(capacityPow2 < 2 ? 2 : capacityPow2) - 1)
{
}

void TraceRing::push(const TraceRecord& r)
{
    std::uint64_t w[3] {};
    std::memcpy(w, &r, sizeof r);
    const std::uint64_t i = m_head.load(std::memory_order_relaxed);
    Slot& s = m_slots[i & m_mask];
    s.stamp.store(0, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    for (int k = 0; k < 3; ++k)
        s.w[k].store(w[k], std::memory_order_relaxed);
    s.stamp.store(i + 1, std::memory_order_release);
    m_head.store(i + 1, std::memory_order_release);
}

std::uint64_t TraceRing::read(std::vector<TraceRecord>& out, std::size_t max)
{
    const std::uint64_t head = m_head.load(std::memory_order_acquire);
    std::uint64_t dropped = 0;
    if (head - m_tail > capacity()) {
        dropped += head - capacity() - m_tail;
        m_tail = head - capacity();
    }
    for (std::size_t n = 0; m_tail < head && n < max; ++m_tail, ++n) {
        Slot& s = m_slots[m_tail & m_mask];
        const std::uint64_t before = s.stamp.load(std::memory_order_acquire);
        std::uint64_t w[3];
        for (int k = 0; k < 3; ++k)
            w[k] = s.w[k].load(std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_acquire);
        const std::uint64_t after = s.stamp.load(std::memory_order_relaxed);
        if (before != m_tail + 1 || after != before) {
            ++dropped; // overwritten while we were behind
            continue;
        }
        TraceRecord r;
        std::memcpy(&r, w, sizeof r);
        out.push_back(r);
    }
    m_droppedTotal += dropped;
    return dropped;
}

} // namespace blkmq
