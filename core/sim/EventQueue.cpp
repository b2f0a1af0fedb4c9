#include "sim/EventQueue.h"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace blkmq {

// The calendar's lists and the ring (128 KiB) are made when the tiers first begin: most engines of a
// small configuration (blkmqlab-cli check builds one per path) never need them.
EventQueue::EventQueue(std::size_t reserve)
{
    m_heap.reserve(reserve);
    m_payload.reserve(reserve);
    m_calNode.reserve(reserve);
    m_free.reserve(reserve);
}

std::size_t EventQueue::calendarNextUsed(std::size_t from) const
{
    if (from >= kCalendarLists)
        return kCalendarLists;
    const std::size_t word = from / 64;
    if (const std::uint64_t bits = m_calUsed[word] & (~std::uint64_t(0) << (from % 64)))
        return word * 64 + static_cast<std::size_t>(std::countr_zero(bits));
    // the next word in use, from the summary
    const std::uint64_t words = word + 1 < 64 ? m_calUsedWords & (~std::uint64_t(0) << (word + 1)) : 0;
    if (!words)
        return kCalendarLists;
    const auto w = static_cast<std::size_t>(std::countr_zero(words));
    return w * 64 + static_cast<std::size_t>(std::countr_zero(m_calUsed[w]));
}

// A key that arrives after later keys of its list (the heap's keys, in heap order, when the tiers
// begin): before the first key of the list with a later sequence.
void EventQueue::calendarInsert(std::size_t list, std::uint32_t slot)
{
    CalList& l = m_calList[list];
    const std::uint64_t order = m_calNode[slot].key.order;
    std::uint32_t prev = kNoSlot;
    std::uint32_t cur = l.head;
    while (cur != kNoSlot && m_calNode[cur].key.order < order) {
        prev = cur;
        cur = m_calNode[cur].next;
    }
    m_calNode[slot].next = cur;
    if (prev == kNoSlot)
        l.head = slot;
    else
        m_calNode[prev].next = slot;
    if (cur == kNoSlot)
        l.tail = slot;
}

// Every key in the calendar, list by list, to `out`; the calendar is left empty.
template<class Out>
void EventQueue::drainCalendar(Out&& out)
{
    for (std::size_t list = calendarNextUsed(0); list < kCalendarLists; list = calendarNextUsed(list + 1)) {
        for (std::uint32_t slot = m_calList[list].head; slot != kNoSlot; slot = m_calNode[slot].next)
            out(m_calNode[slot].key);
        m_calList[list] = {};
    }
    m_calUsed = {};
    m_calUsedWords = 0;
    m_calFirst = kCalendarLists;
    m_inCalendar = 0;
}

void EventQueue::hashState(StateHash& h) const
{
    std::vector<std::pair<Key, Payload>> pending;
    pending.reserve(m_size);
    if (m_hasFront)
        pending.push_back({ m_front, m_frontPayload });
    const auto withPayload = [&](const Key& k) {
        pending.push_back({ k, m_payload[static_cast<std::size_t>(k.order & kSlotMask)] });
    };
    for (const Key& k : m_heap)
        withPayload(k);
    for (const CalList& l : m_calList)
        for (std::uint32_t s = l.head; s != kNoSlot; s = m_calNode[s].next)
            withPayload(m_calNode[s].key);
    for (const auto& w : m_ring)
        for (const Key& k : w)
            withPayload(k);
    for (const Key& k : m_overflow)
        withPayload(k);
    std::sort(pending.begin(), pending.end(), [](const auto& x, const auto& y) { return x.first.before(y.first); });
    h.word(pending.size());
    for (const auto& [k, p] : pending) {
        h.word(static_cast<std::uint64_t>(k.time));
        h.word(p.ab);
        h.word(p.rest); // the kind and priority with c
    }
}

void EventQueue::clear()
{
    m_hasFront = false;
    drainCalendar([](const Key&) {});
    m_heap.clear();
    for (auto& w : m_ring)
        w.clear();
    m_ringUsed = {};
    m_inRing = 0;
    m_overflow.clear();
    m_overflowFirst = INT64_MAX;
    m_window = 0;
    m_tiered = false;
    m_size = 0;
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
    m_calNode.emplace_back();
    return static_cast<std::uint32_t>(m_payload.size() - 1);
}

void EventQueue::enterTiers()
{
    if (m_calList.empty()) {
        m_calList.resize(kCalendarLists);
        m_ring.resize(static_cast<std::size_t>(kWindows));
    }
    m_tiered = true;
    m_window = m_heap.front().time >> kWindowShift;
    m_scratch.swap(m_heap); // both keep their capacity: crossing the threshold again allocates nothing
    m_heap.clear();
    for (const Key& k : m_scratch)
        place(k);
    m_scratch.clear();
}

void EventQueue::leaveTiers()
{
    m_tiered = false;
    drainCalendar([this](const Key& k) { heapPush(k); });
    for (auto& w : m_ring) {
        for (const Key& k : w)
            heapPush(k);
        w.clear();
    }
    for (const Key& k : m_overflow)
        heapPush(k);
    m_overflow.clear();
    m_overflowFirst = INT64_MAX;
    m_ringUsed = {};
    m_inRing = 0;
}

void EventQueue::fromOverflow()
{
    // In place: what the ring now reaches moves there (or to the heap), the rest stays.
    std::size_t kept = 0;
    m_overflowFirst = INT64_MAX;
    for (std::size_t i = 0; i < m_overflow.size(); ++i) {
        const Key k = m_overflow[i];
        const std::int64_t w = k.time >> kWindowShift;
        if (w <= m_window + kWindows) {
            place(k); // never back into the overflow: w is in reach
        } else {
            m_overflow[kept++] = k;
            m_overflowFirst = std::min(m_overflowFirst, w);
        }
    }
    m_overflow.resize(kept);
}

void EventQueue::refill()
{
    while (windowDrained() && restSize() > 0) {
        if (m_inRing == 0) { // jump to the overflow's first window
            m_window = m_overflowFirst - 1;
            fromOverflow();
            continue;
        }
        // The next window in the ring that holds events, from the bitmap.
        const auto from = static_cast<std::size_t>((m_window + 1) & (kWindows - 1));
        std::size_t next = 0;
        for (std::size_t k = 0; k <= m_ringUsed.size(); ++k) {
            const std::size_t word = (from / 64 + k) % m_ringUsed.size();
            std::uint64_t bits = m_ringUsed[word];
            if (k == 0)
                bits &= ~std::uint64_t(0) << (from % 64);
            else if (k == m_ringUsed.size())
                bits &= (from % 64) ? ~(~std::uint64_t(0) << (from % 64)) : 0;
            if (bits) {
                next = word * 64 + static_cast<std::size_t>(std::countr_zero(bits));
                break;
            }
        }
        const std::int64_t step = static_cast<std::int64_t>((next - from) & (kWindows - 1)) + 1;
        m_window += step;
        std::vector<Key>& w = m_ring[next];
        m_inRing -= w.size();
        for (const Key& k : w)
            placeCurrent(k);
        w.clear();
        m_ringUsed[next / 64] &= ~(std::uint64_t(1) << (next % 64));
        // The ring now reaches one window further: the overflow's events there move in (after the
        // slot was emptied, as that window's slot is the one just drained).
        if (m_overflowFirst <= m_window + kWindows)
            fromOverflow();
    }
}

void EventQueue::renumber()
{
    // Every pending key in order; new sequence numbers keep that order; then back in place.
    std::vector<Key> all;
    all.reserve(m_size);
    if (m_hasFront) { // it rejoins the rest, with a slot for its operands
        const std::uint32_t slot = takeSlot();
        m_payload[slot] = m_frontPayload;
        all.push_back({ m_front.time, m_front.order | slot });
    }
    m_hasFront = false;
    drainCalendar([&all](const Key& k) { all.push_back(k); });
    all.insert(all.end(), m_heap.begin(), m_heap.end());
    for (auto& w : m_ring) {
        all.insert(all.end(), w.begin(), w.end());
        w.clear();
    }
    all.insert(all.end(), m_overflow.begin(), m_overflow.end());
    std::sort(all.begin(), all.end(), [](const Key& x, const Key& y) { return x.before(y); });
    m_heap.clear();
    m_ringUsed = {};
    m_inRing = 0;
    m_overflow.clear();
    m_overflowFirst = INT64_MAX;
    std::uint64_t seq = 0;
    for (Key& k : all) { // sorted: the heap keeps the first window's (or every) event, in order
        k.order = (k.order & ~(kSeqMax << kSlotBits)) | (seq++ << kSlotBits);
        if (m_tiered)
            place(k);
        else
            heapPush(k);
    }
    m_nextSeq = seq;
    if (m_tiered && windowDrained() && m_size > 0)
        refill();
}

void EventQueue::siftDown(Key moving)
{
    const std::size_t n = m_heap.size();
    const Rank rank = moving.rank();
    std::size_t i = 0;
    for (;;) {
        const std::size_t first = 4 * i + 1;
        if (first >= n)
            break;
        // The earliest child, chosen by conditional moves rather than branches.
        std::size_t best = first;
        Rank bestRank = m_heap[first].rank();
        const std::size_t last = first + 4 < n ? first + 4 : n;
        for (std::size_t c = first + 1; c < last; ++c) {
            const Rank r = m_heap[c].rank();
            const bool earlier = r < bestRank;
            best = earlier ? c : best;
            bestRank = earlier ? r : bestRank;
        }
        if (bestRank >= rank)
            break;
        m_heap[i] = m_heap[best];
        i = best;
    }
    m_heap[i] = moving;
}

} // namespace blkmq
