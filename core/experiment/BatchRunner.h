#pragma once

#include "scenario/Scenario.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace blkmq {

struct RunOutcome {
    std::string fingerprint;
    nlohmann::json summary;
};

// Runs many independent scenarios: one engine per scenario, each engine
// single-threaded. The parallel version spreads engines over TBB worker
// threads; its results equal the serial twin's, in the same order.
class BatchRunner {
public:
    static std::vector<RunOutcome> runSerial(const std::vector<Scenario>& scenarios);
    // threads <= 0: TBB's default concurrency.
    static std::vector<RunOutcome> runParallel(const std::vector<Scenario>& scenarios, int threads = 0);
};

} // namespace blkmq
