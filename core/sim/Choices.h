#pragma once

#include "sim/EnumNames.h"

#include <cmath>
#include <cstdint>
#include <iterator>
#include <vector>

namespace blkmq {

// The places where a real machine's outcome depends on timing the model otherwise fixes
// (docs/check.md). Values are part of a counterexample's file: append new kinds at the end.
enum class ChoiceKind : std::uint8_t {
    Latency, // a device's service time: one of Choices::latencyPoints points of its distribution
    Bypass, // a job's request bypasses the scheduler or not (0 < bypass_pct < 100)
    NetGap, // the gap before a net_rx packet: one of the points of its exponential
    SameTime, // which of the hardware and CPU events due at one instant happens first
    Hold, // a CPU at a lock boundary goes on now, or is held until the next pending event has happened (last)
};

inline constexpr const char* kChoiceKindNames[]
    = { "device latency", "scheduler bypass", "packet gap", "same-time order", "lock boundary" };
static_assert(std::size(kChoiceKindNames) == static_cast<std::size_t>(ChoiceKind::Hold) + 1);
inline const char* choiceKindName(ChoiceKind k) { return enumName(kChoiceKindNames, k); }

// One choice a run made: of `options`, it took `taken`, in the event that came after `events`
// processed ones, at simulated time t_ns.
struct Choice {
    ChoiceKind kind = ChoiceKind::Latency;
    std::uint8_t options = 0;
    std::uint8_t taken = 0;
    std::uint64_t events = 0;
    std::int64_t t_ns = 0;
    // What the option was: a latency or gap in ns, 1 for a bypass, the first event's kind << 32 | its a,
    // a hold's length in ns (0: it went on) << 16 | the CPU.
    std::int64_t value = 0;
};

// A run's choice points (scenario "choices", blkmqlab-cli check). Off, every draw is the seeded
// RNG's, exactly as without it. On, each draw is a choice among a few options, and the run takes
// the options of `script` in order, then option 0; `made` records every choice as it is taken.
struct Choices {
    static constexpr int kMaxOptions = 255; // SameTime: the first 255 events of an instant

    bool on = false;
    int latencyPoints = 2;
    bool lockBoundaries = false; // Hold choices at the ops OpHandler::lockBoundary names
    std::vector<std::uint8_t> script;
    std::vector<Choice> made;
    // Choices past this many take option 0 without being recorded (a search's depth bound).
    std::size_t depth = SIZE_MAX;
    // The first scripted option that was not an option there (its index in `made`), or -1.
    long long offScript = -1;
    std::uint64_t events = 0; // processed before the event in progress (the engine keeps it)
    std::int64_t nowNs = 0; // that event's time

    // Which of `options` (2 or more) the run takes here.
    int take(ChoiceKind kind, int options)
    {
        if (options > kMaxOptions)
            options = kMaxOptions;
        const std::size_t at = made.size();
        m_recorded = false;
        if (at >= depth)
            return 0;
        int pick = at < script.size() ? script[at] : 0;
        if (pick >= options) {
            if (offScript < 0)
                offScript = static_cast<long long>(at);
            pick = 0;
        }
        made.push_back({ kind, static_cast<std::uint8_t>(options), static_cast<std::uint8_t>(pick), events, nowNs });
        m_recorded = true;
        return pick;
    }
    // What the option just taken was (Choice::value), if take() recorded it.
    void note(std::int64_t value)
    {
        if (m_recorded)
            made.back().value = value;
        m_recorded = false;
    }

    // Point `i` of `n` of a service time: uniform [lo, hi] by equal steps from lo to hi (the extremes
    // are where orderings change); exponential with `mean` at the quantiles (i + 1/2) / n.
    static std::int64_t uniformPoint(std::int64_t lo, std::int64_t hi, int i, int n)
    {
        if (n < 2)
            return lo + (hi - lo) / 2;
        return lo + (hi - lo) * i / (n - 1);
    }
    static std::int64_t exponentialPoint(double mean, int i, int n)
    {
        const double p = (i + 0.5) / n;
        return std::llround(-mean * std::log1p(-p));
    }

private:
    bool m_recorded = false;
};

} // namespace blkmq
