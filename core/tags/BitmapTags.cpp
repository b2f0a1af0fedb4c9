#include "tags/BitmapTags.h"

#include "sim/Rng.h"

#include <bit>

namespace blkmq {

BitmapTags::BitmapTags(int depth, const Topology& topo, const Costs& costs, Rng& rng)
    : m_topo(topo)
    , m_costs(costs)
    , m_depth(depth)
    , m_words(static_cast<std::size_t>((depth + 63) / 64), 0)
    , m_owner(m_words.size(), -1)
    , m_hint(static_cast<std::size_t>(topo.nrCpus()))
{
    for (auto& h : m_hint)
        h = static_cast<int>(rng.below(static_cast<std::uint64_t>(depth)));
}

void BitmapTags::touch(int word, int cpu, TagAccess& cost)
{
    const int owner = m_owner[static_cast<std::size_t>(word)];
    if (owner >= 0 && owner != cpu) {
        cost.ns += m_costs.cacheline(m_topo, owner, cpu);
        ++cost.cachelineTransfers;
        cost.local = false;
    }
}

bool BitmapTags::isSet(int tag) const { return (m_words[static_cast<std::size_t>(tag / 64)] >> (tag % 64)) & 1; }

TagAllocator::Step BitmapTags::get(TagAlloc& a, TagAccess& cost)
{
    const int cpu = a.cpu;
    a.tag = -1;
    cost.ns += m_costs.tag_get_ns;
    const int nWords = static_cast<int>(m_words.size());
    const int hint = m_hint[static_cast<std::size_t>(cpu)];
    for (int i = 0; i <= nWords; ++i) {
        const int w = (hint / 64 + i) % nWords;
        touch(w, cpu, cost);
        const int bits = w == nWords - 1 && m_depth % 64 ? m_depth % 64 : 64;
        const std::uint64_t valid = bits == 64 ? ~0ULL : (1ULL << bits) - 1;
        std::uint64_t free = ~m_words[static_cast<std::size_t>(w)] & valid;
        if (i == 0) // first word: start at the hint's bit
            free &= ~0ULL << (hint % 64);
        if (!free)
            continue;
        const int bit = std::countr_zero(free);
        m_words[static_cast<std::size_t>(w)] |= 1ULL << bit;
        m_owner[static_cast<std::size_t>(w)] = cpu;
        const int tag = w * 64 + bit;
        m_hint[static_cast<std::size_t>(cpu)] = (tag + 1) % m_depth;
        ++m_inUse;
        a.tag = tag;
        return Step::Done;
    }
    return Step::Done;
}

void BitmapTags::put(int cpu, int tag, TagAccess& cost)
{
    cost.ns += m_costs.tag_put_ns;
    const int w = tag / 64;
    touch(w, cpu, cost);
    m_words[static_cast<std::size_t>(w)] &= ~(1ULL << (tag % 64));
    m_owner[static_cast<std::size_t>(w)] = cpu;
    --m_inUse;
}

} // namespace blkmq
