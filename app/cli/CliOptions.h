#pragma once

#include "spec/Scenario.h"
#include "sim/Result.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace blkmq::cli {

// The options every scenario-running command shares: a FILE or --preset,
// --set, --fio, --duration, --seed, --json, --fail-on-stall, --threads.
struct ScenarioOptions {
    bool hasFile = false; // a FILE was given (possibly an empty name, which load() refuses)
    std::string file;
    std::string preset;
    std::vector<std::string> sets;
    std::string fio; // --fio FILE (or a FILE ending in .fio): a fio job file for the workload
    std::string jsonOut;
    bool failOnStall = false;
    int threads = 0;

    // The scenario with `more` overrides applied after the user's.
    Result<Scenario> load(const std::vector<std::string>& more = {}) const;
};

// One option of the command line: the commands that take it, its name, the kind of value it takes
// ("" = none: a flag) and what it does. The table (options()) is the inventory `blkmqlab-cli fields
// options` prints and the gate every command's arguments pass first (optionProblem), so an option a
// parser learns is refused until its row exists, and the hostile-input test reaches every row.
struct OptionInfo {
    std::string commands; // space-separated: "run explore sweep ab oracle"
    std::string option; // "--seed"
    std::string value; // count, duration, file, output, folder, name, setting, condition, text, "" (a flag)
    std::string what;
};
const std::vector<OptionInfo>& options();
// "" when every option in `args` is a row of `command`'s (the value after one that takes a value is
// skipped); else the message, naming the option.
std::string optionProblem(const std::string& command, const std::vector<std::string>& args);

// "--opt=value" of an option that takes a value (a row of `command`'s) as "--opt" "value", as
// getopt_long reads it; every other argument as it is.
std::vector<std::string> splitOptionValues(const std::string& command, const std::vector<std::string>& args);
// Whether `args` ask for `command`'s help: --help or -h where an option may stand.
bool asksForHelp(const std::string& command, const std::vector<std::string>& args);
// `command --help`: the command's `usage` (commandUsage(), CliCommands.h) and its options, each with
// the kind of value it takes and what it does, from the table.
std::string commandHelp(const std::string& command, const std::string& usage);

// Takes the value after the current argument; false when there is none.
using NextValue = std::function<bool(std::string&)>;
// A command's own options: returns false if `arg` is not one of them, else
// consumes its value and sets `error` when the value is bad.
using ExtraOption = std::function<bool(const std::string& arg, const NextValue& value, std::string& error)>;

// "path=value,path=value" (--variant, --a, --b) as settings; empty parts are dropped.
std::vector<std::string> splitSettings(const std::string& text);
// "" when no setting's path in `text` holds a control character or broken UTF-8; else the message,
// naming `option`.
std::string settingsProblem(const std::string& option, const std::string& text);

// --seeds N and --first-seed S of explore and ab: true if `arg` is one of them (its value is then
// read into `seeds` or `first`, or `error` says what is wrong); `minSeeds` is the fewest it takes.
bool seedOption(const std::string& arg, const NextValue& value, std::string& error, std::uint64_t& seeds,
    std::uint64_t& first, std::uint64_t minSeeds = 1);

// Returns an error message naming the option, or empty.
std::string parseScenarioOptions(const std::vector<std::string>& args, ScenarioOptions& o, const ExtraOption& extra);

// checkOutputs() (io/Outputs.h) for one command, with its message on stderr: true when every output
// may be written; else `exitCode` is 1 (unwritable) or 2 (two options on one file).
bool outputsUsable(
    const std::string& command, const std::vector<std::pair<std::string, std::string>>& outputs, int& exitCode);

// Flushes standard output; false (with a message on stderr) if it failed,
// e.g. when it is redirected to a full disk.
bool flushStdout();

// The end of an explore or ab: writes --json (the document), flushes standard output; the exit
// code (kExitIo if an output failed, kExitStall if --fail-on-stall and a run stalled).
int finishCommand(const ScenarioOptions& o, const nlohmann::json& doc, bool stalled);

} // namespace blkmq::cli
