#include "sim/EventQueue.h"

namespace blkmq {

void EventQueue::push(Event e)
{
    e.seq = m_nextSeq++;
    m_heap.push_back(e);
    siftUp(m_heap.size() - 1);
}

Event EventQueue::pop()
{
    Event top = m_heap.front();
    m_heap.front() = m_heap.back();
    m_heap.pop_back();
    if (!m_heap.empty())
        siftDown(0);
    return top;
}

void EventQueue::siftUp(std::size_t i)
{
    const Event moving = m_heap[i];
    while (i > 0) {
        const std::size_t parent = (i - 1) / 4;
        if (!moving.before(m_heap[parent]))
            break;
        m_heap[i] = m_heap[parent];
        i = parent;
    }
    m_heap[i] = moving;
}

void EventQueue::siftDown(std::size_t i)
{
    const std::size_t n = m_heap.size();
    const Event moving = m_heap[i];
    for (;;) {
        const std::size_t first = 4 * i + 1;
        if (first >= n)
            break;
        std::size_t best = first;
        const std::size_t last = first + 4 < n ? first + 4 : n;
        for (std::size_t c = first + 1; c < last; ++c) {
            if (m_heap[c].before(m_heap[best]))
                best = c;
        }
        if (!m_heap[best].before(moving))
            break;
        m_heap[i] = m_heap[best];
        i = best;
    }
    m_heap[i] = moving;
}

} // namespace blkmq
