#pragma once

#include "metrics/Metrics.h"
#include "spec/Scenario.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <string>
#include <vector>

namespace blkmq {

struct RunOutcome {
    std::string fingerprint;
    MetricValues metrics {};
    bool stalled = false;
    std::int64_t firstStallNs = -1;
    std::string stallExplanation;
    std::uint64_t events = 0;
    nlohmann::json summary; // null unless asked for
    std::uint64_t lostTags = 0; // an allocator's races (ida-lock-split)
    std::uint64_t missedWakeups = 0;
    std::uint64_t stallEvents = 0; // events processed when the stall detector fired (0: no stall)
};

// Runs many independent scenarios: one engine per scenario, each engine
// single-threaded. The parallel version spreads engines over TBB worker
// threads; its results equal the serial twin's, in the same order.
//
// Parallel runs start in order of their estimated cost, dearest first, each
// free worker taking the next (list scheduling, longest first): an uneven grid
// does not end with one worker running its longest runs alone. The estimate is
// a pilot run of 1/64 of the scenario's duration (Schedule::CostFirst).
class BatchRunner {
public:
    // withSummary = false leaves RunOutcome::summary null (a stall hunt over many seeds needs only
    // the typed fields).
    static std::vector<RunOutcome> runSerial(const std::vector<Scenario>& scenarios, bool withSummary = true);
    enum class Schedule : std::uint8_t {
        CostFirst, // dearest first, by a pilot run (the default)
        Given, // in the order given (the benchmark's comparison)
    };
    // threads <= 0: TBB's default concurrency. Once *stop is true no further run starts (those in
    // flight finish); `ran`, when given, says which ran.
    static std::vector<RunOutcome> runParallel(const std::vector<Scenario>& scenarios, int threads = 0,
        bool withSummary = true, const std::atomic<bool>* stop = nullptr, std::vector<char>* ran = nullptr,
        Schedule schedule = Schedule::CostFirst);
    // Events of a pilot run over 1/64 of the duration, times 64: what runParallel orders by.
    static std::uint64_t estimateEvents(const Scenario& s);
};

} // namespace blkmq
