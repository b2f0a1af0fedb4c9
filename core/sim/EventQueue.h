#pragma once

#include "sim/Event.h"

#include <cstdint>
#include <vector>

namespace blkmq {

// The pending events, ordered by (time, priority, insertion sequence).
//
// The heap holds only a 16-byte key per event: the time, and one word packing
// the priority (2 bits), the insertion sequence (40 bits) and the slot of the
// event's operands in a side table (22 bits). Sifting moves 16 bytes and
// compares two integers; the operands stay where they were put until the event
// pops. Four children share one 64-byte line. No allocation per event once the
// vectors have grown to the run's peak of pending events.
class EventQueue {
public:
    explicit EventQueue(std::size_t reserve = 4096);

    // Assigns the next sequence number; ties at the same (time, priority) pop in insertion order.
    void push(const Event& e)
    {
        const std::uint32_t slot = takeSlot();
        m_payload[slot] = { e.a, e.b, e.c, e.kind, e.prio };
        if (m_nextSeq > kSeqMax)
            renumber();
        const Key k { e.time.ns(),
            (static_cast<std::uint64_t>(e.prio) << kPrioShift) | (m_nextSeq++ << kSlotBits) | slot };
        m_heap.push_back(k);
        siftUp(m_heap.size() - 1, k);
    }
    Event pop()
    {
        const Key top = m_heap.front();
        const Key last = m_heap.back();
        m_heap.pop_back();
        if (!m_heap.empty())
            siftDown(last);
        const auto slot = static_cast<std::uint32_t>(top.order & kSlotMask);
        const Payload& p = m_payload[slot];
        m_free.push_back(slot);
        Event e;
        e.time = SimTime(top.time);
        e.seq = (top.order >> kSlotBits) & kSeqMax;
        e.a = p.a;
        e.b = p.b;
        e.c = p.c;
        e.kind = p.kind;
        e.prio = p.prio;
        return e;
    }
    SimTime topTime() const { return SimTime(m_heap.front().time); }
    bool empty() const { return m_heap.empty(); }
    std::size_t size() const { return m_heap.size(); }
    void clear();
    // As if n more events had been pushed and popped: lets a test reach the renumbering of a full
    // sequence field without 2^40 pushes.
    void skipSequence(std::uint64_t n) { m_nextSeq += n; }

    // The most events one queue holds at once (the slot field's width).
    static constexpr std::size_t kMaxPending = std::size_t(1) << 22;
    static constexpr std::uint64_t kSeqMax = (std::uint64_t(1) << 40) - 1;

private:
    static constexpr int kSlotBits = 22;
    static constexpr int kPrioShift = 62;
    static constexpr std::uint64_t kSlotMask = (std::uint64_t(1) << kSlotBits) - 1;
    static_assert(kSeqMax == (std::uint64_t(1) << (kPrioShift - kSlotBits)) - 1);

    struct Key {
        std::int64_t time;
        std::uint64_t order; // priority | sequence | slot: compared as one integer
        bool before(const Key& o) const { return time != o.time ? time < o.time : order < o.order; }
    };
    struct Payload {
        std::int32_t a, b, c;
        EventKind kind;
        EventPriority prio;
    };
    static_assert(sizeof(Key) == 16 && sizeof(Payload) == 16);

    std::uint32_t takeSlot()
    {
        if (!m_free.empty()) {
            const std::uint32_t s = m_free.back();
            m_free.pop_back();
            return s;
        }
        return growSlots();
    }
    std::uint32_t growSlots();
    void renumber(); // the sequence field is full: renumber the pending events, keeping their order
    void siftUp(std::size_t i, Key moving)
    {
        while (i > 0) {
            const std::size_t parent = (i - 1) / 4;
            if (!moving.before(m_heap[parent]))
                break;
            m_heap[i] = m_heap[parent];
            i = parent;
        }
        m_heap[i] = moving;
    }
    void siftDown(Key moving); // from the root

    std::vector<Key> m_heap;
    std::vector<Payload> m_payload;
    std::vector<std::uint32_t> m_free;
    std::uint64_t m_nextSeq = 0;
};

} // namespace blkmq
