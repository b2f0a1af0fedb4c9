#include "sim/EventQueue.h"

#include <algorithm>
#include <stdexcept>

namespace blkmq {

EventQueue::EventQueue(std::size_t reserve)
{
    m_heap.reserve(reserve);
    m_payload.reserve(reserve);
    m_free.reserve(reserve);
}

void EventQueue::clear()
{
    m_heap.clear();
    m_payload.clear();
    m_free.clear();
    m_nextSeq = 0;
}

std::uint32_t EventQueue::growSlots()
{
    // Unreachable within limits.h (requests in flight and CPUs bound the pending events), but a
    // full slot field must not wrap silently into another event's operands.
    if (m_payload.size() >= kMaxPending)
        throw std::length_error("more than 4194304 events pending in one engine");
    m_payload.emplace_back();
    return static_cast<std::uint32_t>(m_payload.size() - 1);
}

void EventQueue::renumber()
{
    // A sorted array is a heap; the new sequence numbers keep every pending event's order.
    std::sort(m_heap.begin(), m_heap.end(), [](const Key& x, const Key& y) { return x.before(y); });
    std::uint64_t seq = 0;
    for (Key& k : m_heap)
        k.order = (k.order & ~(kSeqMax << kSlotBits)) | (seq++ << kSlotBits);
    m_nextSeq = seq;
}

void EventQueue::siftDown(Key moving)
{
    const std::size_t n = m_heap.size();
    std::size_t i = 0;
    for (;;) {
        const std::size_t first = 4 * i + 1;
        if (first >= n)
            break;
        std::size_t best = first;
        const std::size_t last = first + 4 < n ? first + 4 : n;
        for (std::size_t c = first + 1; c < last; ++c)
            if (m_heap[c].before(m_heap[best]))
                best = c;
        if (!m_heap[best].before(moving))
            break;
        m_heap[i] = m_heap[best];
        i = best;
    }
    m_heap[i] = moving;
}

} // namespace blkmq
