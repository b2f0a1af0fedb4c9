#include "tags/CmpxchgTags.h"

#include <algorithm>

namespace blkmq {

CmpxchgTags::CmpxchgTags(int depth, const Topology& topo, const Costs& costs)
    : TagAllocator(topo, costs)
    , m_depth(depth)
    , m_inUseBy(static_cast<std::size_t>(depth), false)
    , m_next(static_cast<std::size_t>(depth))
    , m_linkLines(static_cast<std::size_t>((depth + 15) / 16))
{
    for (int tag = 0; tag < depth; ++tag)
        m_next[static_cast<std::size_t>(tag)] = tag + 1 < depth ? tag + 1 : -1;
}

TagWaitRules CmpxchgTags::waitRules() const { return { false, std::clamp(m_depth / 8, 1, 8), true }; }

bool CmpxchgTags::cmpxchg(int cpu, std::int64_t loadedAt, TagAccess& cost)
{
    cost.ns += std::max<std::int64_t>(0, m_headFreeAt - now(cost)); // another CPU's atomic holds the line
    cost.move(m_headLine.take(cpu, *m_topo, *m_costs));
    m_headFreeAt = now(cost);
    if (m_headWrittenAt > loadedAt) { // the head changed since this CPU loaded it
        ++cost.retries;
        return false;
    }
    m_headWrittenAt = now(cost);
    return true;
}

TagAllocator::Step CmpxchgTags::get(TagAlloc& a, TagAccess& cost)
{
    const int cpu = a.cpu;
    a.tag = -1;
    cost.move(m_headLine.fetch(cpu, false, *m_topo, *m_costs));
    for (;;) {
        const std::int64_t loadedAt = now(cost);
        cost.ns += m_costs->tag_get_ns;
        if (m_head < 0)
            return Step::Done; // empty
        cost.move(linkLine(m_head).fetch(cpu, false, *m_topo, *m_costs));
        if (cmpxchg(cpu, loadedAt, cost))
            break; // a failed cmpxchg returns the current head: no new load
    }
    a.tag = m_head;
    m_head = m_next[static_cast<std::size_t>(a.tag)];
    m_inUseBy[static_cast<std::size_t>(a.tag)] = true;
    ++m_inUse;
    return Step::Done;
}

void CmpxchgTags::put(int cpu, int tag, int /*allocCpu: the list has no per-CPU state*/, TagAccess& cost)
{
    cost.move(m_headLine.fetch(cpu, false, *m_topo, *m_costs));
    for (;;) {
        const std::int64_t loadedAt = now(cost);
        cost.ns += m_costs->tag_put_ns;
        cost.move(linkLine(tag).take(cpu, *m_topo, *m_costs)); // next[tag] = head
        if (cmpxchg(cpu, loadedAt, cost))
            break;
    }
    m_next[static_cast<std::size_t>(tag)] = m_head;
    m_head = tag;
    m_inUseBy[static_cast<std::size_t>(tag)] = false;
    --m_inUse;
}

} // namespace blkmq
