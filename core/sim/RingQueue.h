#pragma once

#include <cstddef>
#include <vector>

namespace blkmq {

// FIFO over a ring buffer that reuses its slots: memory follows the most
// entries ever queued at once, not the number ever pushed, so a queue that
// never quite drains (a NIC ring fed faster than NAPI empties it) stays
// bounded. Grows by doubling when full; never allocates otherwise.
template<typename T>
class RingQueue {
public:
    bool empty() const { return m_size == 0; }
    std::size_t size() const { return m_size; }
    std::size_t capacity() const { return m_slots.size(); }

    void reserve(std::size_t n)
    {
        if (n > m_slots.size())
            regrow(n);
    }
    void push_back(const T& v)
    {
        if (m_size == m_slots.size())
            regrow(m_slots.empty() ? 8 : m_slots.size() * 2);
        m_slots[(m_head + m_size) % m_slots.size()] = v;
        ++m_size;
    }
    const T& front() const { return m_slots[m_head]; }
    T pop_front()
    {
        const T v = m_slots[m_head];
        m_head = (m_head + 1) % m_slots.size();
        --m_size;
        return v;
    }
    template<class Hash>
    void hashState(Hash& h) const // the entries, front first
    {
        h(m_size);
        for (std::size_t i = 0; i < m_size; ++i)
            h(m_slots[(m_head + i) % m_slots.size()]);
    }
    void clear()
    {
        m_head = 0;
        m_size = 0;
    }

private:
    void regrow(std::size_t n)
    {
        std::vector<T> next(n);
        for (std::size_t i = 0; i < m_size; ++i)
            next[i] = m_slots[(m_head + i) % m_slots.size()];
        m_slots.swap(next);
        m_head = 0;
    }

    std::vector<T> m_slots;
    std::size_t m_head = 0;
    std::size_t m_size = 0;
};

} // namespace blkmq
