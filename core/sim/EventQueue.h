#pragma once

#include "sim/Event.h"

#include <vector>

namespace blkmq {

// A 4-ary min-heap of events in one contiguous vector: no allocation per
// event once the vector has grown to the run's peak size.
class EventQueue {
public:
    explicit EventQueue(std::size_t reserve = 4096) { m_heap.reserve(reserve); }

    // Assigns the next sequence number; ties at the same (time, priority)
    // pop in insertion order.
    void push(Event e);
    Event pop();
    const Event& top() const { return m_heap.front(); }
    bool empty() const { return m_heap.empty(); }
    std::size_t size() const { return m_heap.size(); }
    void clear()
    {
        m_heap.clear();
        m_nextSeq = 0;
    }

private:
    void siftUp(std::size_t i);
    void siftDown(std::size_t i);

    std::vector<Event> m_heap;
    std::uint64_t m_nextSeq = 0;
};

} // namespace blkmq
