#include "CliOptions.h"

#include "io/Text.h"

#include "Cli.h"

#include "io/Limits.h"
#include "io/Outputs.h"
#include "io/SafeFile.h"
#include "scenario/FioJobFile.h"
#include "scenario/ScenarioLoader.h"
#include "sim/Duration.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>

namespace blkmq::cli {

namespace {
bool isCount(const std::string& v, std::size_t maxDigits)
{
    return !v.empty() && v.size() <= maxDigits && v.find_first_not_of("0123456789") == std::string::npos;
}
} // namespace

Result<Scenario> ScenarioOptions::load(const std::vector<std::string>& more) const
{
    const auto loadWith = [&](const std::vector<std::string>& before) {
        std::vector<std::string> all = before;
        all.insert(all.end(), sets.begin(), sets.end());
        all.insert(all.end(), more.begin(), more.end());
        return !hasFile ? ScenarioLoader::fromPreset(preset.empty() ? "default" : preset, all)
                        : ScenarioLoader::fromFile(file, all);
    };
    if (fio.empty())
        return loadWith({});
    // The job file replaces the scenario's jobs (and its runtime the duration); the user's --set
    // come after it, so they can still change a job.
    // The device names a filename may give, from the scenario as written (the user's --set may
    // address jobs that only the job file brings).
    const Result<Scenario> plain
        = !hasFile ? ScenarioLoader::fromPreset(preset.empty() ? "default" : preset) : ScenarioLoader::fromFile(file);
    if (!plain.ok())
        return plain;
    return FioJobFile::run(fio, plain.value(), loadWith, "--fio: ");
}

const std::vector<OptionInfo>& options()
{
    static const std::string scenario = "run explore sweep ab oracle";
    static const std::vector<OptionInfo> table {
        { scenario + " check", "--preset", "name", "a built-in scenario (blkmqlab-cli presets)" },
        { scenario + " check", "--set", "setting", "PATH=VALUE: one field of the scenario (blkmqlab-cli fields)" },
        { scenario + " check", "--fio", "file", "a fio job file for the workload (blkmqlab-cli fio-keys)" },
        { scenario + " check", "--duration", "duration", "the simulated time to run, e.g. 100ms" },
        { scenario + " check", "--seed", "count", "the random seed" },
        { scenario, "--threads", "count", "worker threads, 0 = one per CPU" },
        { scenario + " check", "--json", "output", "the summary or the document, FILE or -" },
        { scenario, "--fail-on-stall", "", "exit 3 when a run stalls" },
        { "run", "--csv", "output", "the time series" },
        { "run", "--until", "condition", "run until a stop condition holds (blkmqlab-cli help)" },
        { "run", "--function-profile", "name", "ftrace's function profile of a kernel function" },
        { "run", "--trace", "output", "a Perfetto/Chrome trace (docs/trace.md)" },
        { "run", "--trace-window", "text", "FROM:TO, the part of the run the trace keeps" },
        { "run", "--trace-cap", "count", "the most events the trace keeps" },
        { "run", "--session", "file", "a session file to replay (docs/sessions.md)" },
        { "run", "--at", "duration", "with --session: the time to replay to" },
        { "run", "--save-session", "output", "the run as a session file" },
        { "run", "--debugfs", "folder", "blk-mq's debugfs files where the run stopped, as Linux 6.1 writes them" },
        { "run", "--quiet", "", "no report on standard output" },
        { "run", "-q", "", "--quiet" },
        { "explore ab", "--seeds", "count", "how many seeds" },
        { "explore ab", "--first-seed", "count", "the first seed" },
        { "explore ab sweep", "--resume", "", "continue from the journal beside --json or --csv" },
        { "explore", "--variant", "setting", "PATH=VALUE,...: a variant to explore (repeatable)" },
        { "explore", "--save-counterexample", "output", "the earliest stall as a session file" },
        { "ab", "--a", "setting", "PATH=VALUE,...: variant A" },
        { "ab", "--b", "setting", "PATH=VALUE,...: variant B" },
        { "sweep", "--vary", "setting", "PATH=V1,V2,...: a grid of one axis" },
        { "sweep merge", "--csv", "output", "the grid's rows" },
        { "sweep", "--shard", "text", "I/N: run the I-th of N parts of the grid" },
        { "sweep", "--yes", "", "run a grid larger than the confirmation limit" },
        { "sweep", "--chart", "output", "a chart of one metric against one axis (PNG, SVG or PDF)" },
        { "sweep", "--metric", "name", "the chart's metric (blkmqlab-cli metrics)" },
        { "sweep", "--x", "name", "the chart's axis" },
        { "oracle", "--case", "file", "an oracle case (tests/oracle/*.json)" },
        { "oracle", "--cache", "folder", "where the guest's kernel and initramfs are kept" },
        { "oracle", "--console", "output", "the guest's console" },
        { "oracle", "--timeout", "duration", "the guest's time limit, 10s to 3600s" },
        { "oracle", "--figures", "", "list the figures the oracle compares" },
        { "oracle", "--debugfs", "folder", "both sides' blk-mq debugfs files after the job, in kernel/ and lab/" },
        { "lesson", "--check", "", "print only failures; exit 4 if an expectation does not hold" },
        { "check", "--property", "name",
            "no-stall, no-tag-lost, no-missed-wakeup, all-complete or complete-once (docs/check.md)" },
        { "check", "--properties", "", "list the properties and what each says" },
        { "check", "--max-runs", "count", "the most runs the search tries" },
        { "check", "--max-depth", "count", "the choices searched per run; later ones take their first option" },
        { "check", "--max-states", "count",
            "the most states the search remembers so as not to explore them again (0: none, every path runs)" },
        { "check", "--lock-boundaries", "",
            "a CPU at a lock boundary (a percpu_ida steal step, a restart walk batch) may also be held" },
        { "check", "--latency-points", "count", "the points of each device latency a choice picks among" },
        { "check", "--save-counterexample", "output", "the shortest violation as a session file" },
    };
    return table;
}

namespace {
// The row of `command`'s table for the option `a`, or null.
const OptionInfo* optionRow(const std::string& command, const std::string& a)
{
    const auto& table = options();
    const auto row = std::find_if(table.begin(), table.end(), [&](const OptionInfo& o) {
        return o.option == a && (" " + o.commands + " ").find(" " + command + " ") != std::string::npos;
    });
    return row == table.end() ? nullptr : &*row;
}
} // namespace

std::string optionProblem(const std::string& command, const std::vector<std::string>& args)
{
    const auto& table = options();
    const bool takesOptions = std::any_of(table.begin(), table.end(),
        [&](const OptionInfo& o) { return (" " + o.commands + " ").find(" " + command + " ") != std::string::npos; });
    if (!takesOptions)
        return {};
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a.size() < 2 || a[0] != '-')
            continue; // a file, or - (standard output)
        const OptionInfo* row = optionRow(command, a);
        if (!row)
            return "unknown option '" + printable(a) + "'";
        if (!row->value.empty())
            ++i;
    }
    return {};
}

std::vector<std::string> splitOptionValues(const std::string& command, const std::vector<std::string>& args)
{
    std::vector<std::string> out;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        out.push_back(a);
        if (a.size() < 2 || a[0] != '-')
            continue;
        if (const OptionInfo* row = optionRow(command, a)) {
            if (!row->value.empty() && i + 1 < args.size())
                out.push_back(args[++i]); // its value, whatever it looks like
            continue;
        }
        const auto eq = a.find('=');
        if (a.rfind("--", 0) != 0 || eq == std::string::npos)
            continue;
        if (const OptionInfo* row = optionRow(command, a.substr(0, eq)); row && !row->value.empty()) {
            out.back() = a.substr(0, eq);
            out.push_back(a.substr(eq + 1));
        }
    }
    return out;
}

bool asksForHelp(const std::string& command, const std::vector<std::string>& args)
{
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--help" || args[i] == "-h")
            return true;
        if (const OptionInfo* row = optionRow(command, args[i]); row && !row->value.empty())
            ++i; // a value, not an option
    }
    return false;
}

std::string commandHelp(const std::string& command, const std::string& usage)
{
    std::string out = usage;
    std::string rows;
    for (const OptionInfo& o : options())
        if ((" " + o.commands + " ").find(" " + command + " ") != std::string::npos) {
            const std::string name = o.option + (o.value.empty() ? "" : " " + o.value);
            rows += "  " + name + std::string(name.size() < 28 ? 28 - name.size() : 1, ' ') + o.what + "\n";
        }
    if (!rows.empty())
        out += "\noptions (--opt=value is --opt value):\n" + rows;
    return out;
}

std::string parseScenarioOptions(const std::vector<std::string>& args, ScenarioOptions& o, const ExtraOption& extra)
{
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        const NextValue value = [&](std::string& out) {
            if (i + 1 >= args.size())
                return false;
            out = args[++i];
            return true;
        };
        std::string v;
        if (a == "--preset") {
            if (!value(o.preset))
                return "--preset needs a name";
            const auto presets = ScenarioLoader::presets();
            if (std::none_of(presets.begin(), presets.end(), [&](const PresetInfo& p) { return p.name == o.preset; }))
                return "--preset: unknown preset '" + printable(o.preset) + "' (blkmqlab-cli presets lists them)";
        } else if (a == "--set") {
            if (!value(v))
                return "--set needs key=value";
            if (const std::string why = textProblem(v.substr(0, v.find('=')), false); !why.empty())
                return "--set '" + printable(v) + "': the path " + why;
            o.sets.push_back(v);
        } else if (a == "--duration") {
            if (!value(v))
                return "--duration needs a value such as 100ms";
            if (!parseDuration(v) || parseDuration(v)->ns() <= 0)
                return "--duration: '" + printable(v)
                    + "' is not a positive duration (use ns, us, ms or s, e.g. 100ms)";
            o.sets.push_back("duration=\"" + v + "\"");
        } else if (a == "--seed") {
            if (!value(v))
                return "--seed needs a number";
            if (!isCount(v, 19))
                return "--seed: '" + printable(v) + "' is not a non-negative integer";
            o.sets.push_back("seed=" + v);
        } else if (a == "--threads") {
            if (!value(v) || !isCount(v, 9))
                return "--threads needs a number (0 = one per CPU)";
            if (std::stoll(v) > limits::kThreads)
                return "--threads: " + v + " is more than the limit of " + std::to_string(limits::kThreads);
            o.threads = std::stoi(v);
        } else if (a == "--fio") {
            if (!value(o.fio) || o.fio.empty())
                return "--fio needs a fio job file";
        } else if (a == "--json") {
            if (!value(o.jsonOut) || o.jsonOut.empty())
                return "--json needs a file name or -";
        } else if (a == "--fail-on-stall") {
            o.failOnStall = true;
        } else if (std::string error; extra && extra(a, value, error)) {
            if (!error.empty())
                return error;
        } else if (!a.empty() && a[0] == '-') {
            return "unknown option '" + printable(a) + "'";
        } else if (!o.hasFile) {
            o.hasFile = true;
            o.file = a;
        } else {
            return "more than one scenario file given";
        }
    }
    // "run job.fio": the default scenario (or --preset) with the job file's workload.
    if (o.hasFile && o.fio.empty() && o.file.size() > 4 && o.file.compare(o.file.size() - 4, 4, ".fio") == 0) {
        o.fio = o.file;
        o.hasFile = false;
        o.file.clear();
    }
    if (o.hasFile && !o.preset.empty())
        return "give a scenario FILE or --preset, not both";
    return {};
}

std::vector<std::string> splitSettings(const std::string& text)
{
    std::vector<std::string> out;
    std::stringstream ss(text);
    for (std::string s; std::getline(ss, s, ',');)
        if (!s.empty())
            out.push_back(s);
    return out;
}

std::string settingsProblem(const std::string& option, const std::string& text)
{
    for (const std::string& setting : splitSettings(text))
        if (const std::string why = textProblem(setting.substr(0, setting.find('=')), false); !why.empty())
            return option + " '" + printable(text) + "': a path " + why;
    return {};
}

bool seedOption(const std::string& arg, const NextValue& value, std::string& error, std::uint64_t& seeds,
    std::uint64_t& first, std::uint64_t minSeeds)
{
    if (arg != "--seeds" && arg != "--first-seed")
        return false;
    std::string v;
    if (!value(v) || !isCount(v, v.size())) {
        error = arg + (arg == "--first-seed" ? " needs a whole number, 0 or more" : " needs a positive number");
        return true;
    }
    const std::string digits = v.substr(std::min(v.find_first_not_of('0'), v.size() - 1));
    const std::uint64_t n = digits.size() <= 19 ? std::stoull(digits) : UINT64_MAX;
    if (arg == "--first-seed") {
        if (n > (UINT64_MAX >> 1))
            error = "--first-seed: " + v.substr(0, 40) + (v.size() > 40 ? "..." : "") + " is more than the largest, "
                + std::to_string(UINT64_MAX >> 1);
        first = n;
    } else if (n > static_cast<std::uint64_t>(limits::kExploreSeeds)) {
        error = "--seeds: " + printable(v) + " is more than the limit of " + std::to_string(limits::kExploreSeeds)
            + " (docs/limits.md)";
    } else if (n < minSeeds) {
        error = "--seeds: at least " + std::to_string(minSeeds) + (minSeeds > 1 ? " (a spread needs two)" : "");
    } else {
        seeds = n;
    }
    return true;
}

bool outputsUsable(
    const std::string& command, const std::vector<std::pair<std::string, std::string>>& outputs, int& exitCode)
{
    if (const std::string e = checkOutputs(command, outputs, exitCode); !e.empty()) {
        std::cerr << "blkmqlab-cli " << command << ": " << e << '\n';
        return false;
    }
    return true;
}

bool flushStdout()
{
    std::cout.flush();
    if (std::cout && std::fflush(stdout) == 0)
        return true;
    std::cerr << "blkmqlab-cli: cannot write standard output: " << std::strerror(errno ? errno : EIO) << '\n';
    return false;
}

int finishCommand(const ScenarioOptions& o, const nlohmann::json& doc, bool stalled)
{
    if (!o.jsonOut.empty())
        if (auto err = SafeFile::write(o.jsonOut, doc.dump(2) + "\n"); !err.empty()) {
            std::cerr << "blkmqlab-cli: --json: " << err << '\n';
            return kExitIo;
        }
    if (!flushStdout())
        return kExitIo;
    return o.failOnStall && stalled ? kExitStall : kExitOk;
}

} // namespace blkmq::cli
