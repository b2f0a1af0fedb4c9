#pragma once

#include "sim/Cloned.h"
#include "sim/Event.h"
#include "sim/StateHash.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace blkmq {

// The pending events, ordered by (time, priority, insertion sequence).
//
// Each event is a 16-byte key: the time, and one word packing the priority
// (2 bits), the insertion sequence (40 bits) and the slot of the event's
// operands in a side table (22 bits); the operands stay where they were put
// until the event pops.
//
// A few pending events live in one 4-ary heap. From kTiersOn pending on (until
// fewer than kTiersOff remain) there are tiers, so that thousands of pending
// device completions and hundreds of busy CPUs cost what a few do: the events of
// the current time window (2^kWindowShift ns) go to the heap while it holds fewer
// than kHeapKeep, the rest to a calendar of one FIFO list per nanosecond and
// priority, found through a two-level bitmap (a push is an append, a pop takes
// the first list's head); later windows wait unsorted in a ring of kWindows
// windows and move in when the clock reaches them; the rare events beyond the
// ring wait in an overflow list. The heap also keeps the few events pushed for a
// time before the current window (after the ring jumped ahead to the next window
// that holds events). Within one calendar list the events are in sequence order
// (keys that arrive out of it, from the heap's array when the tiers begin, are
// put in their place), and a pop takes the earlier of the heap's top and the
// calendar's first, so events pop in exactly the order one heap of all of them
// would give. No allocation per event once the vectors have grown to the run's
// peak.
class EventQueue {
public:
    explicit EventQueue(std::size_t reserve = 4096);

    // Assigns the next sequence number; ties at the same (time, priority) pop in insertion order.
    void push(const Event& e) { push(e.time, e.kind, e.prio, e.a, e.b, e.c); }
    // The same from the fields (Sim::schedule): an Event just built on the caller's stack and read
    // back here stalls the load of kind and prio, which the compiler reads as one 16-bit word from two
    // byte stores that cannot be forwarded (docs/performance.md).
    void push(SimTime time, EventKind kind, EventPriority prio, std::int32_t a, std::int32_t b, std::int32_t c)
    {
        if (m_nextSeq > kSeqMax)
            renumber();
        // The slot bits stay 0 until the key joins the rest: a sequence number is never repeated, so
        // they never decide an order.
        Key k { time.ns(), (static_cast<std::uint64_t>(prio) << kPrioShift) | (m_nextSeq++ << kSlotBits) };
        Payload p = Payload::of(a, b, c, kind, prio);
        ++m_size;
        // An event earlier than every pending one waits in the front slot, its operands beside it:
        // the usual next CPU boundary of a CPU that runs alone pops again without a heap operation
        // and without a slot of the side table.
        if (!m_hasFront) {
            if (m_size == 1 || k.before(restTop())) {
                m_front = k;
                m_frontPayload = p;
                m_hasFront = true;
                return;
            }
        } else if (k.before(m_front)) {
            std::swap(k, m_front); // the front moves back among the rest
            std::swap(p, m_frontPayload);
        }
        const std::uint32_t slot = takeSlot();
        m_payload[slot] = p;
        k.order |= slot;
        if (!m_tiered) {
            heapPush(k);
            if (m_size >= kTiersOn)
                enterTiers();
            return;
        }
        place(k);
        if (windowDrained())
            refill();
    }
    Event pop()
    {
        Key top;
        Payload p;
        if (m_hasFront) {
            top = m_front;
            p = m_frontPayload;
            m_hasFront = false;
        } else {
            if (m_inCalendar != 0 && (m_heap.empty() || calendarTop().before(m_heap.front()))) {
                top = calendarPop();
            } else {
                top = m_heap.front();
                const Key last = m_heap.back();
                m_heap.pop_back();
                if (!m_heap.empty())
                    siftDown(last);
            }
            const auto slot = static_cast<std::uint32_t>(top.order & kSlotMask);
            p = m_payload[slot];
            m_free.push_back(slot);
        }
        --m_size;
        Event e;
        e.time = SimTime(top.time);
        e.seq = (top.order >> kSlotBits) & kSeqMax;
        p.into(e);
        if (m_tiered) {
            if (m_size < kTiersOff)
                leaveTiers();
            else if (windowDrained())
                refill();
        }
        return e;
    }
    SimTime topTime() const { return SimTime(m_hasFront ? m_front.time : restTop().time); }
    bool empty() const { return m_size == 0; }
    std::size_t size() const { return m_size; }
    void clear();
    std::size_t bytes() const // on the heap: what a copy costs (Engine::stateBytes)
    {
        std::size_t n = heapBytes(m_heap) + heapBytes(m_calList) + heapBytes(m_calNode) + heapBytes(m_ring)
            + heapBytes(m_overflow) + heapBytes(m_scratch) + heapBytes(m_payload) + heapBytes(m_free);
        for (const auto& w : m_ring)
            n += heapBytes(w);
        return n;
    }
    // The pending events in the order they would pop, each as its time, priority, kind and operands:
    // their sequence numbers and where they wait are left out (docs/check.md).
    void hashState(StateHash& h) const;
    // As if n more events had been pushed and popped: lets a test reach the renumbering of a full
    // sequence field without 2^40 pushes.
    void skipSequence(std::uint64_t n) { m_nextSeq += n; }

    // The most events one queue holds at once (the slot field's width), the front event aside.
    static constexpr std::size_t kMaxPending = std::size_t(1) << 22;
    static constexpr std::uint64_t kSeqMax = (std::uint64_t(1) << 40) - 1;
    static constexpr int kWindowShift = 10; // a window is 1,024 ns
    static constexpr std::int64_t kWindows = 4096; // the ring reaches 4.2 ms ahead
    static constexpr std::size_t kTiersOn = 256, kTiersOff = 64; // pending events

private:
    static constexpr int kSlotBits = 22;
    static constexpr int kPrioShift = 62;
    static constexpr std::uint64_t kSlotMask = (std::uint64_t(1) << kSlotBits) - 1;
    static_assert(kSeqMax == (std::uint64_t(1) << (kPrioShift - kSlotBits)) - 1);
    static constexpr int kPrioBits = 64 - kPrioShift;
    static constexpr std::size_t kCalendarLists = std::size_t(1) << (kWindowShift + kPrioBits);
    static constexpr std::uint32_t kNoSlot = UINT32_MAX;
    // Tiered: the current window's keys the heap takes first, before the calendar takes the rest.
    // More cost more per event with many in flight, fewer on the presets with many CPUs
    // (docs/performance.md).
    static constexpr std::size_t kHeapKeep = 32;

    __extension__ typedef unsigned __int128 Rank;
    struct Key {
        std::int64_t time;
        std::uint64_t order; // priority | sequence | slot: compared as one integer
        // (time, order) as one unsigned 128-bit number (the sign bit flipped keeps signed time order):
        // one compare without a branch, where a heap's comparisons are the hardest to predict.
        Rank rank() const
        {
            return static_cast<Rank>(static_cast<std::uint64_t>(time) ^ (std::uint64_t(1) << 63)) << 64 | order;
        }
        bool before(const Key& o) const { return rank() < o.rank(); }
    };
    // An event's operands as two words, each stored and loaded whole: the usual pop comes a few
    // dozen instructions after its push, and a load that spans two narrower stores still in flight
    // is not forwarded from them (as fields, a and b were loaded as one word from two stores;
    // docs/performance.md).
    struct Payload {
        std::uint64_t ab; // a | b << 32
        std::uint64_t rest; // c | kind << 32 | prio << 40
        static Payload of(std::int32_t a, std::int32_t b, std::int32_t c, EventKind kind, EventPriority prio)
        {
            return { static_cast<std::uint32_t>(a) | static_cast<std::uint64_t>(static_cast<std::uint32_t>(b)) << 32,
                static_cast<std::uint32_t>(c) | static_cast<std::uint64_t>(kind) << 32
                    | static_cast<std::uint64_t>(prio) << 40 };
        }
        void into(Event& e) const
        {
            e.a = static_cast<std::int32_t>(static_cast<std::uint32_t>(ab));
            e.b = static_cast<std::int32_t>(static_cast<std::uint32_t>(ab >> 32));
            e.c = static_cast<std::int32_t>(static_cast<std::uint32_t>(rest));
            e.kind = static_cast<EventKind>(static_cast<std::uint8_t>(rest >> 32));
            e.prio = static_cast<EventPriority>(static_cast<std::uint8_t>(rest >> 40));
        }
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
    // Into the calendar (the current window), the heap (an earlier one), the ring, or the overflow.
    void place(const Key& k)
    {
        const std::int64_t w = k.time >> kWindowShift;
        if (w == m_window) {
            placeCurrent(k);
        } else if (w < m_window) {
            heapPush(k);
        } else if (w <= m_window + kWindows) {
            const auto i = static_cast<std::size_t>(w & (kWindows - 1));
            if (m_ring[i].empty())
                m_ringUsed[i / 64] |= std::uint64_t(1) << (i % 64);
            m_ring[i].push_back(k);
            ++m_inRing;
        } else {
            m_overflow.push_back(k);
            m_overflowFirst = std::min(m_overflowFirst, w);
        }
    }
    void heapPush(const Key& k)
    {
        m_heap.push_back(k);
        siftUp(m_heap.size() - 1, k);
    }
    // A key of the current window: into the heap while it holds fewer than kHeapKeep keys (a few
    // levels cost less than the calendar's scattered lists), else into the calendar.
    void placeCurrent(const Key& k)
    {
        if (m_heap.size() < kHeapKeep)
            heapPush(k);
        else
            calendarPush(k);
    }
    void enterTiers(); // the heap's later windows move to the ring and the overflow
    void leaveTiers(); // everything back into the heap
    [[gnu::hot]] void refill(); // the heap and the calendar are empty: advance to the next window that holds events
    // The earliest pending key after the front: the heap's top or the calendar's first.
    const Key& restTop() const
    {
        if (m_inCalendar == 0)
            return m_heap.front();
        const Key& c = calendarTop();
        return m_heap.empty() || c.before(m_heap.front()) ? c : m_heap.front();
    }
    const Key& calendarTop() const { return m_calNode[m_calList[m_calFirst].head].key; }
    // The calendar's list of a key of the current window: its nanosecond in the window, then its priority.
    std::size_t calendarList(const Key& k) const
    {
        return static_cast<std::size_t>(k.time - (m_window << kWindowShift)) << kPrioBits
            | static_cast<std::size_t>(k.order >> kPrioShift);
    }
    void calendarPush(const Key& k)
    {
        const std::size_t list = calendarList(k);
        const auto slot = static_cast<std::uint32_t>(k.order & kSlotMask);
        m_calNode[slot] = { k, kNoSlot };
        CalList& l = m_calList[list];
        if (l.tail == kNoSlot) {
            l.head = l.tail = slot;
            m_calUsed[list / 64] |= std::uint64_t(1) << (list % 64);
            m_calUsedWords |= std::uint64_t(1) << (list / 64);
            m_calFirst = std::min(m_calFirst, list);
        } else if (m_calNode[l.tail].key.order < k.order) { // the usual case: the latest sequence so far
            m_calNode[l.tail].next = slot;
            l.tail = slot;
        } else {
            calendarInsert(list, slot);
        }
        ++m_inCalendar;
    }
    [[gnu::hot]] void calendarInsert(std::size_t list, std::uint32_t slot); // into its place by sequence
    Key calendarPop()
    {
        const std::size_t list = m_calFirst;
        CalList& l = m_calList[list];
        const CalNode& node = m_calNode[l.head];
        l.head = node.next;
        if (l.head == kNoSlot) {
            l.tail = kNoSlot;
            if (!(m_calUsed[list / 64] &= ~(std::uint64_t(1) << (list % 64))))
                m_calUsedWords &= ~(std::uint64_t(1) << (list / 64));
            m_calFirst = calendarNextUsed(list + 1);
        }
        --m_inCalendar;
        return node.key;
    }
    [[gnu::hot]] std::size_t calendarNextUsed(std::size_t from) const; // kCalendarLists if none
    template<class Out>
    void drainCalendar(Out&& out);
    std::size_t restSize() const { return m_size - (m_hasFront ? 1 : 0); } // pending but not in front
    // Tiered: nothing of the current window (or before) is left; refill() moves the next one in.
    bool windowDrained() const { return m_heap.empty() && m_inCalendar == 0; }
    void fromOverflow(); // the ring now reaches m_overflowFirst: move what it reaches
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
    [[gnu::hot]] void siftDown(Key moving); // from the root

    Key m_front {}; // with m_hasFront: the earliest pending event, before every other (no slot)
    Payload m_frontPayload {};
    bool m_hasFront = false;
    // Every other event; tiered, those of windows before m_window and the first kHeapKeep of it.
    std::vector<Key> m_heap;
    bool m_tiered = false;
    std::int64_t m_window = 0; // tiered: the calendar's window (time >> kWindowShift)
    // The calendar: per list (nanosecond, priority) its first and last slot; per slot its key and
    // the next slot of its list; which lists are in use; the first of them (kCalendarLists: none).
    struct CalList {
        std::uint32_t head = kNoSlot, tail = kNoSlot;
    };
    struct CalNode {
        Key key;
        std::uint32_t next;
    };
    std::vector<CalList> m_calList;
    std::vector<CalNode> m_calNode; // by slot
    std::array<std::uint64_t, kCalendarLists / 64> m_calUsed {};
    std::uint64_t m_calUsedWords = 0; // which words of m_calUsed are not zero
    static_assert(kCalendarLists / 64 <= 64);
    std::size_t m_calFirst = kCalendarLists;
    std::size_t m_inCalendar = 0;
    std::vector<std::vector<Key>> m_ring; // window w at w % kWindows, for w in (m_window, m_window + kWindows]
    std::array<std::uint64_t, kWindows / 64> m_ringUsed {}; // which ring windows hold events
    std::size_t m_inRing = 0;
    std::vector<Key> m_overflow; // windows beyond the ring
    std::vector<Key> m_scratch; // enterTiers()' copy of the heap, kept for its capacity
    std::int64_t m_overflowFirst = INT64_MAX; // the earliest window in the overflow
    std::size_t m_size = 0; // the front included
    std::vector<Payload> m_payload;
    std::vector<std::uint32_t> m_free;
    std::uint64_t m_nextSeq = 0;
};

} // namespace blkmq
