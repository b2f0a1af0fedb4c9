#include "engine/Checkpoints.h"

#include <algorithm>
#include <iterator>

namespace blkmq {

Checkpoints::Checkpoints(std::size_t budgetBytes)
    : m_budget(budgetBytes)
{
}

void Checkpoints::offer(const Engine& e)
{
    if (!m_kept.empty()) {
        const Kept& last = m_kept.back();
        const auto spacing = std::max(kMinSpacing, static_cast<std::uint64_t>(last.bytes * kEventsPerByte));
        if (e.events() < last.engine->events() + spacing)
            return;
    }
    m_kept.push_back({ e.clone(), e.stateBytes() });
    thin();
}

void Checkpoints::thin()
{
    while (m_kept.size() > 2 && bytes() > m_budget) {
        // Every other copy of the older half goes, the first one kept.
        const std::size_t half = (m_kept.size() + 1) / 2;
        std::vector<Kept> kept;
        kept.reserve(m_kept.size());
        for (std::size_t i = 0; i < m_kept.size(); ++i)
            if (i >= half || i % 2 == 0)
                kept.push_back(std::move(m_kept[i]));
        m_kept = std::move(kept);
    }
}

const Engine* Checkpoints::atEvent(std::uint64_t events) const
{
    const Engine* best = nullptr;
    for (const Kept& k : m_kept)
        if (k.engine->events() <= events)
            best = k.engine.get();
    return best;
}

const Engine* Checkpoints::atTime(SimTime t) const
{
    const Engine* best = nullptr;
    for (const Kept& k : m_kept)
        if (k.engine->now() <= t)
            best = k.engine.get();
    return best;
}

void Checkpoints::dropAfter(std::uint64_t events)
{
    std::erase_if(m_kept, [&](const Kept& k) { return k.engine->events() > events; });
}

Checkpoints Checkpoints::takeAfter(std::uint64_t events)
{
    Checkpoints later(m_budget);
    const auto first
        = std::find_if(m_kept.begin(), m_kept.end(), [&](const Kept& k) { return k.engine->events() > events; });
    std::move(first, m_kept.end(), std::back_inserter(later.m_kept));
    m_kept.erase(first, m_kept.end());
    return later;
}

void Checkpoints::putBack(Checkpoints&& later)
{
    for (Kept& k : later.m_kept)
        m_kept.push_back(std::move(k));
    later.m_kept.clear();
    std::stable_sort(m_kept.begin(), m_kept.end(),
        [](const Kept& a, const Kept& b) { return a.engine->events() < b.engine->events(); });
    thin();
}

std::size_t Checkpoints::bytes() const
{
    std::size_t n = 0;
    for (const Kept& k : m_kept)
        n += k.bytes;
    return n;
}

std::vector<std::uint64_t> Checkpoints::eventsKept() const
{
    std::vector<std::uint64_t> out;
    for (const Kept& k : m_kept)
        out.push_back(k.engine->events());
    return out;
}

} // namespace blkmq
