#pragma once

#include "metrics/Counters.h"
#include "sim/Choices.h"
#include "sim/EventQueue.h"
#include "sim/Rng.h"
#include "sim/TraceSink.h"
#include "topo/Costs.h"
#include "topo/Topology.h"

#include <array>

namespace blkmq {

// The state every model component shares within one engine: the clock, the
// event queue, the RNG, the machine description, costs and counters. One per
// engine; never global.
struct Sim {
    Sim(const Topology& t, const Costs& c, std::uint64_t seed)
        : topo(t)
        , costs(c)
        , rng(seed)
    {
    }
    // A copy of `o` on `t` (its engine's topology, equal to o's), without observers (Engine::clone).
    // Every member but the sinks is copied here: one added to Sim is added here too.
    Sim(const Sim& o, const Topology& t)
        : topo(t)
        , costs(o.costs)
        , rng(o.rng)
        , queue(o.queue)
        , now(o.now)
        , counters(o.counters)
        , choices(o.choices)
    {
    }
    Sim(const Sim&) = delete;
    Sim& operator=(const Sim&) = delete;

    void schedule(
        SimTime at, EventKind kind, EventPriority prio, std::int32_t a = 0, std::int32_t b = 0, std::int32_t c = 0)
    {
        queue.push(at, kind, prio, a, b, c);
    }

    // A record stamped now (TraceRecord::time), whatever the operation has cost so far.
    void trace(TraceKind kind, int cpu, int rq = -1, int arg = 0, int script = -1)
    {
        if (nrSinks == 0)
            return;
        const TraceRecord r { now.ns(), rq, arg, static_cast<std::int16_t>(cpu), kind,
            static_cast<std::int16_t>(script) };
        for (int i = 0; i < nrSinks; ++i)
            sinks[static_cast<std::size_t>(i)]->record(r);
    }
    void slice(const TraceSlice& s)
    {
        for (int i = 0; i < nrSinks; ++i)
            sinks[static_cast<std::size_t>(i)]->slice(s);
    }
    bool tracing() const { return nrSinks > 0; }
    // What decides the run's future (docs/check.md): the clock, the RNG and the pending events. The
    // counters only record; the topology and costs are the scenario's; the choices made are the path.
    void hashState(StateHash& h) const { h(now, rng, queue); }

    const Topology& topo;
    Costs costs;
    Rng rng;
    EventQueue queue;
    SimTime now;
    Counters counters;
    Choices choices; // off unless the scenario has "choices" (docs/check.md)
    // The engine's observers (Engine::addTraceSink): a fixed array, so reporting never allocates.
    static constexpr int kMaxSinks = 4;
    std::array<TraceSink*, kMaxSinks> sinks {};
    int nrSinks = 0;
};

} // namespace blkmq
