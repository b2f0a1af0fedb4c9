#pragma once

#include "scenario/Scenario.h"
#include "sim/Result.h"

#include <functional>
#include <string>
#include <vector>

namespace blkmq::cli {

// The options every scenario-running command shares: a FILE or --preset,
// --set, --duration, --seed, --json, --fail-on-stall, --threads.
struct ScenarioOptions {
    std::string file;
    std::string preset;
    std::vector<std::string> sets;
    std::string jsonOut;
    bool failOnStall = false;
    int threads = 0;

    // The scenario with `more` overrides applied after the user's.
    Result<Scenario> load(const std::vector<std::string>& more = {}) const;
};

// Takes the value after the current argument; false when there is none.
using NextValue = std::function<bool(std::string&)>;
// A command's own options: returns false if `arg` is not one of them, else
// consumes its value and sets `error` when the value is bad.
using ExtraOption = std::function<bool(const std::string& arg, const NextValue& value, std::string& error)>;

// Returns an error message naming the option, or empty.
std::string parseScenarioOptions(const std::vector<std::string>& args, ScenarioOptions& o, const ExtraOption& extra);

} // namespace blkmq::cli
