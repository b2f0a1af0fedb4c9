#include "tags/BitmapTags.h"

#include "sim/Rng.h"

#include <algorithm>
#include <bit>

namespace blkmq {

BitmapTags::BitmapTags(Kind kind, int depth, const Topology& topo, const Costs& costs, Rng& rng)
    : TagAllocator(topo, costs)
    , m_kind(kind)
    , m_depth(depth)
    , m_hint(static_cast<std::size_t>(topo.nrCpus()))
{
    // sbitmap_init_node() / bt_alloc(): spread a small tag space over at least 4 cachelines.
    if (depth >= 4)
        while ((4 << m_shift) > depth)
            --m_shift;
    const int perWord = 1 << m_shift;
    m_words.resize(static_cast<std::size_t>((depth + perWord - 1) / perWord));
    int left = depth;
    for (Word& w : m_words) {
        w.depth = std::min(left, perWord);
        left -= w.depth;
    }
    for (Hint& h : m_hint)
        h.tag = static_cast<int>(rng.below(static_cast<std::uint64_t>(depth)));
}

TagWaitRules BitmapTags::waitRules() const
{
    if (m_kind == Kind::Bitmap)
        return { false, std::min(8, std::max(1, m_depth / 4)), false };
    return { false, std::clamp(m_depth / 8, 1, 8), true };
}

bool BitmapTags::isSet(int tag) const
{
    return (m_words[static_cast<std::size_t>(tag >> m_shift)].bits >> (tag & ((1 << m_shift) - 1))) & 1;
}

int BitmapTags::getWord(int w, int hintBit, int cpu, TagAccess& cost)
{
    Word& word = m_words[static_cast<std::size_t>(w)];
    cost.move(word.line.fetch(cpu, false, *m_topo, *m_costs)); // find_next_zero_bit
    const std::uint64_t free = freeBits(word);
    if (!free)
        return -1;
    const int bit = pickBit(free, hintBit);
    cost.move(word.line.take(cpu, *m_topo, *m_costs)); // test_and_set_bit_lock
    word.bits |= 1ULL << bit;
    return bit;
}

TagAllocator::Step BitmapTags::get(TagAlloc& a, TagAccess& cost)
{
    const int cpu = a.cpu;
    Hint& h = m_hint[static_cast<std::size_t>(cpu)];
    int& hint = h.tag;
    Cacheline& hintLine = h.line;
    a.tag = -1;
    cost.ns += m_costs->tag_get_ns;
    cost.move(hintLine.fetch(cpu, false, *m_topo, *m_costs)); // a free elsewhere may have written it
    const int nWords = static_cast<int>(m_words.size());
    int index = hint >> m_shift;
    int bit = hint & ((1 << m_shift) - 1);
    for (int i = 0; i < nWords; ++i) {
        const int got = getWord(index, bit, cpu, cost);
        if (got >= 0) {
            a.tag = (index << m_shift) + got;
            break;
        }
        bit = 0; // the next word from its start
        if (++index >= nWords)
            index = 0;
    }
    if (a.tag < 0) {
        hint = 0; // "If the map is full, a hint won't do us much good."
        hintLine.write(cpu);
        return Step::Done;
    }
    usedHint(h, a.tag, cpu); // its own line, just read: no transfer
    ++m_inUse;
    return Step::Done;
}

void BitmapTags::put(int cpu, int tag, int allocCpu, TagAccess& cost)
{
    cost.ns += m_costs->tag_put_ns;
    Word& word = m_words[static_cast<std::size_t>(tag >> m_shift)];
    cost.move(word.line.take(cpu, *m_topo, *m_costs)); // clear_bit_unlock
    word.bits &= ~(1ULL << (tag & ((1 << m_shift) - 1)));
    --m_inUse;
    // v3.16: *last_tag = tag (the request's ctx); v4.14: per_cpu_ptr(alloc_hint, ctx->cpu) = nr.
    Hint& h = m_hint[static_cast<std::size_t>(allocCpu)];
    cost.move(h.line.take(cpu, *m_topo, *m_costs));
    h.tag = tag;
}

} // namespace blkmq
