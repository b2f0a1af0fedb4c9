#pragma once

#include "engine/Engine.h"
#include "io/Limits.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace blkmq {

// Copies of one run (Engine::clone) to go back in it: Step back, the timeline, a session opened
// at its moment. The run offers itself after each stretch it runs; a copy is kept once `spacing`
// events have passed since the last one kept. The spacing follows the cost of a copy: one byte of
// state per kEventsPerByte events (Engine::stateBytes), at least kMinSpacing. When the copies hold
// more than the budget, every other one of the older half is dropped, so recent times stay quick
// to reach and old ones stay reachable; the first (event 0) is never dropped. Going back to event
// n costs at most the gap between the kept copies around n in re-simulation.
class Checkpoints {
public:
    static constexpr std::uint64_t kMinSpacing = 2000;
    static constexpr double kEventsPerByte = 1.0 / 16;

    explicit Checkpoints(std::size_t budgetBytes = static_cast<std::size_t>(limits::kCheckpointBytes));

    // Keeps a copy of `e` if it has run `spacing` events since the last copy (or none is kept).
    void offer(const Engine& e);
    // The latest copy at or before `events` events, or the latest at or before time `t`; nullptr if none.
    const Engine* atEvent(std::uint64_t events) const;
    const Engine* atTime(SimTime t) const;
    // Forgets the copies after `events` (the run goes on from there on another branch).
    void dropAfter(std::uint64_t events);
    // The copies after `events`, taken out (a branch kept aside); and such copies put back.
    Checkpoints takeAfter(std::uint64_t events);
    void putBack(Checkpoints&& later);
    void clear() { m_kept.clear(); }

    std::size_t size() const { return m_kept.size(); }
    std::size_t bytes() const;
    std::size_t budget() const { return m_budget; }
    std::vector<std::uint64_t> eventsKept() const;

private:
    struct Kept {
        std::unique_ptr<Engine> engine;
        std::size_t bytes = 0;
    };
    void thin();

    std::size_t m_budget;
    std::vector<Kept> m_kept; // in event order
};

} // namespace blkmq
