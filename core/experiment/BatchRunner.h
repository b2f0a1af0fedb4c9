#pragma once

#include "metrics/Metrics.h"
#include "scenario/Scenario.h"

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
class BatchRunner {
public:
    // withSummary = false leaves RunOutcome::summary null (a stall hunt over many seeds needs only
    // the typed fields).
    static std::vector<RunOutcome> runSerial(const std::vector<Scenario>& scenarios, bool withSummary = true);
    // threads <= 0: TBB's default concurrency. Once *stop is true no further run starts (those in
    // flight finish); `ran`, when given, says which ran.
    static std::vector<RunOutcome> runParallel(const std::vector<Scenario>& scenarios, int threads = 0,
        bool withSummary = true, const std::atomic<bool>* stop = nullptr, std::vector<char>* ran = nullptr);
};

} // namespace blkmq
