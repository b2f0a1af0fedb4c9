#pragma once

#include "topo/Cacheline.h"

#include <algorithm>
#include <cstdint>

namespace blkmq {

// A ticket spinlock (spin_lock / spin_lock_irqsave) as a timeline: it is free
// from `freeAt` on. A CPU that asks for it earlier spins until then; taking it
// moves its cacheline from the last holder. Waiters are served in the order
// the actions that take the lock are simulated, which is the order they start
// in, so FIFO hand-off (the ticket order) holds up to one action's length.
// Times are nanoseconds of simulated time.
struct Spinlock {
    Cacheline line;
    std::int64_t freeAt = 0;

    // `cpu` asks at time `t`; returns when it holds the lock. `spinNs` gets the time spent spinning,
    // `moved` (if given) how its line came.
    std::int64_t lock(int cpu, std::int64_t t, const Topology& topo, const Costs& costs, std::int64_t& spinNs,
        LineMove* moved = nullptr)
    {
        const std::int64_t start = std::max(t, freeAt);
        spinNs = start - t;
        const LineMove m = line.take(cpu, topo, costs);
        if (moved)
            *moved = m;
        return start + m.ns;
    }
    void unlock(std::int64_t t) { freeAt = t; }
};

} // namespace blkmq
