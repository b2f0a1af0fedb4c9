#pragma once

#include "topo/Cacheline.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace blkmq {

// A ticket spinlock (spin_lock / spin_lock_irqsave, x86 before qspinlock) as a timeline: it is free
// from `freeAt` on. A CPU that asks for it earlier spins until then; waiters are served in the
// order the actions that take the lock are simulated, which is the order they start in, so FIFO
// hand-off (the ticket order) holds up to one action's length. Times are nanoseconds of simulated
// time.
//
// The hand-off grows with the spinners. Every waiter spins reading the lock's line; the release
// (head++) invalidates all their copies, each re-reads the line from the releasing CPU, and the
// next holder's read queues behind, on average, half of those reads (Boyd-Wickizer, Kaashoek,
// Morris, Zeldovich, "Non-scalable locks are dangerous", Linux Symposium 2012: the hand-off time is
// linear in the waiters, which makes throughput collapse past a point). So a contended take costs
// the line's move from the releasing CPU plus half the moves to the other waiters, each priced by
// cacheline_ns at its distance. The waiters a hand-off sees are those queued when the new holder
// asked (in a steady queue, as many as wait behind it); the lock keeps the last kTracked of them.
struct Spinlock {
    static constexpr int kTracked = 16;
    Cacheline line;
    std::int64_t freeAt = 0;
    std::array<std::int64_t, kTracked> grantAt {}; // queued waiters, ticket order: when each gets it
    std::array<std::int16_t, kTracked> waiter {}; // ... and its CPU
    std::uint8_t first = 0, queued = 0;

    // `cpu` asks at time `t`; returns when it holds the lock. `spinNs` gets the time spent spinning,
    // `moved` (if given) how its line came.
    std::int64_t lock(int cpu, std::int64_t t, const Topology& topo, const Costs& costs, std::int64_t& spinNs,
        LineMove* moved = nullptr)
    {
        while (queued > 0 && grantAt[first] <= t) { // they hold it, or held it, by now
            first = static_cast<std::uint8_t>((first + 1) % kTracked);
            --queued;
        }
        const std::int64_t start = std::max(t, freeAt);
        spinNs = start - t;
        const int releaser = line.writer;
        LineMove m = line.take(cpu, topo, costs);
        if (spinNs > 0 && releaser >= 0) {
            std::int64_t rereads = 0;
            for (int i = 0; i < queued; ++i)
                rereads += costs.cacheline(topo, releaser, waiter[(first + i) % kTracked]);
            m.ns += rereads / 2;
        }
        if (moved)
            *moved = m;
        const std::int64_t grant = start + m.ns;
        if (spinNs > 0 && queued < kTracked) {
            const int at = (first + queued) % kTracked;
            grantAt[static_cast<std::size_t>(at)] = grant;
            waiter[static_cast<std::size_t>(at)] = static_cast<std::int16_t>(cpu);
            ++queued;
        }
        return grant;
    }
    void unlock(std::int64_t t) { freeAt = t; }
    // Its timeline: when it is free, and the waiters still queued (the ring's used part, in order).
    template<class Hash>
    void hashState(Hash& h) const
    {
        h(line, freeAt, queued);
        for (int i = 0; i < queued; ++i) {
            const auto at = static_cast<std::size_t>((first + i) % kTracked);
            h(grantAt[at], waiter[at]);
        }
    }
    // How many CPUs were still queued for it at `t` (as far as it tracks them).
    int waitersAt(std::int64_t t) const
    {
        int n = 0;
        for (int i = 0; i < queued; ++i)
            n += grantAt[static_cast<std::size_t>((first + i) % kTracked)] > t ? 1 : 0;
        return n;
    }
};

} // namespace blkmq
