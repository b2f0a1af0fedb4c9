// blkmqlab-cli explore (Monte Carlo over seeds) and sweep (one parameter over
// values): many independent engines on TBB workers, reported in a fixed order
// so the output does not depend on the thread count.
#include "Cli.h"
#include "CliOptions.h"

#include "experiment/Experiment.h"
#include "io/Limits.h"
#include "io/SafeFile.h"
#include "metrics/Format.h"
#include "metrics/Metrics.h"
#include "scenario/ScenarioLoader.h"
#include "sim/Duration.h"

#include <nlohmann/json.hpp>

#include <iostream>
#include <sstream>

namespace blkmq::cli {

namespace {

int finish(const ScenarioOptions& o, const nlohmann::json& doc, bool stalled)
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

// Refuses an unwritable --json before anything runs.
bool outputWritable(const ScenarioOptions& o)
{
    int onStdout = 0;
    if (const std::string err = checkOutput("--json", o.jsonOut, onStdout); !err.empty()) {
        std::cerr << "blkmqlab-cli: " << err << '\n';
        return false;
    }
    return true;
}

// One explored seed, kept small: a stall hunt may run many thousands.
struct SeedRow {
    std::uint64_t seed = 0;
    bool stalled = false;
    std::int64_t firstStuckNs = -1;
    double iops = 0;
    std::string fingerprint;
    std::uint64_t lostTags = 0;
    std::uint64_t missedWakeups = 0;
};

} // namespace

int exploreCommand(const std::vector<std::string>& args)
{
    ScenarioOptions o;
    std::uint64_t seeds = 20, first = 1;
    const auto err
        = parseScenarioOptions(args, o, [&](const std::string& a, const NextValue& value, std::string& error) {
              std::string v;
              if (a != "--seeds" && a != "--first-seed")
                  return false;
              if (!value(v) || v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 18)
                  error = a + " needs a positive number";
              else
                  (a == "--seeds" ? seeds : first) = std::stoull(v);
              if (a == "--seeds" && seeds == 0)
                  error = "--seeds needs a positive number";
              if (a == "--seeds" && seeds > static_cast<std::uint64_t>(limits::kExploreSeeds))
                  error = "--seeds: " + v + " is more than the limit of " + std::to_string(limits::kExploreSeeds)
                      + " (docs/limits.md)";
              if (a == "--first-seed" && first > (UINT64_MAX >> 1))
                  error = "--first-seed: " + v + " is too large";
              return true;
          });
    if (!err.empty()) {
        std::cerr << "blkmqlab-cli explore: " << err << " (see blkmqlab-cli help)\n";
        return kExitUsage;
    }
    if (!outputWritable(o))
        return kExitIo;
    // An experiment over seeds: they are built and run a chunk at a time, so memory does not grow
    // with --seeds beyond one small row each.
    const Experiment experiment(
        [&](const std::vector<std::string>& sets) { return o.load(sets); }, { Axis::seeds(first, seeds) });
    std::vector<SeedRow> rows;
    rows.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(seeds, 4096)));
    std::string firstExplanation;
    std::uint64_t firstSeed = 0;
    int stalls = 0;
    int racy = 0; // seeds in which an allocator's race lost a tag or hid one from a waiter
    const std::string failed = experiment.run({ o.threads, false, 256 }, [&](RunResult&& r) {
        if (r.stalled && !stalls++) {
            firstExplanation = r.stallExplanation;
            firstSeed = r.seed;
        }
        racy += r.lostTags + r.missedWakeups > 0;
        rows.push_back({ r.seed, r.stalled, r.firstStallNs, r.metrics[metricIndex("iops")], std::move(r.fingerprint),
            r.lostTags, r.missedWakeups });
    });
    if (!failed.empty()) {
        std::cerr << "blkmqlab-cli: " << failed << '\n';
        return kExitUsage;
    }
    const auto base = experiment.scenario(0);
    const std::string name = base ? base->name : std::string();
    nlohmann::json doc;
    if (!o.jsonOut.empty()) {
        doc = { { "scenario", name }, { "seeds", seeds }, { "runs", nlohmann::json::array() },
            { "stalled_runs", stalls }, { "tag_race_runs", racy } };
        for (const auto& r : rows)
            doc["runs"].push_back({ { "seed", r.seed }, { "stalled", r.stalled }, { "first_stuck_ns", r.firstStuckNs },
                { "iops", r.iops }, { "lost_tags", r.lostTags }, { "missed_wakeups", r.missedWakeups },
                { "fingerprint", r.fingerprint } });
    }
    if (o.jsonOut != "-") {
        std::cout << name << ": " << stalls << " of " << seeds << " seeds (" << first << ".." << first + seeds - 1
                  << ") stalled\n";
        for (const auto& r : rows)
            if (r.stalled)
                std::cout << "  seed " << r.seed << ": stuck at " << formatDuration(SimTime(r.firstStuckNs)) << '\n';
        if (stalls)
            std::cout << "first stall (seed " << firstSeed << "): " << firstExplanation << '\n';
        if (racy) {
            std::cout << name << ": a tag allocator race in " << racy << " of " << seeds << " seeds\n";
            for (const auto& r : rows)
                if (r.lostTags + r.missedWakeups > 0)
                    std::cout << "  seed " << r.seed << ": " << r.lostTags << " tag(s) lost, " << r.missedWakeups
                              << " missed wake-up(s)\n";
        }
    }
    return finish(o, doc, stalls > 0);
}

int sweepCommand(const std::vector<std::string>& args)
{
    ScenarioOptions o;
    std::string vary;
    const auto err
        = parseScenarioOptions(args, o, [&](const std::string& a, const NextValue& value, std::string& error) {
              if (a != "--vary")
                  return false;
              if (!value(vary) || vary.find('=') == std::string::npos)
                  error = "--vary needs key=v1,v2,...";
              return true;
          });
    if (err.empty() && vary.empty()) {
        std::cerr << "blkmqlab-cli sweep: --vary key=v1,v2,... is required (see blkmqlab-cli help)\n";
        return kExitUsage;
    }
    if (!err.empty()) {
        std::cerr << "blkmqlab-cli sweep: " << err << " (see blkmqlab-cli help)\n";
        return kExitUsage;
    }
    const std::string key = vary.substr(0, vary.find('='));
    std::vector<std::string> values;
    std::stringstream ss(vary.substr(vary.find('=') + 1));
    for (std::string v; std::getline(ss, v, ',');)
        values.push_back(v);
    if (key.empty() || values.empty()) {
        std::cerr << "blkmqlab-cli sweep: --vary '" << vary << "' names no " << (key.empty() ? "key" : "values")
                  << " (use key=v1,v2,...)\n";
        return kExitUsage;
    }
    if (static_cast<std::int64_t>(values.size()) > limits::kSweepValues) {
        std::cerr << "blkmqlab-cli sweep: --vary gives " << values.size() << " values, more than the limit of "
                  << limits::kSweepValues << " (docs/limits.md)\n";
        return kExitUsage;
    }
    if (!outputWritable(o))
        return kExitIo;
    const Experiment experiment(
        [&](const std::vector<std::string>& sets) { return o.load(sets); }, { Axis::values(key, values) });
    for (std::uint64_t i = 0; i < experiment.size(); ++i) // every value is checked before anything runs
        if (auto sc = experiment.scenario(i); !sc) {
            std::cerr << "blkmqlab-cli: " << sc.error() << '\n';
            return kExitUsage;
        }
    // Columns: metrics of the table (core/metrics/Metrics.h) by id, each value with its unit.
    static constexpr int columns[] = { metricIndex("iops"), metricIndex("lat_p99_ns"), metricIndex("remote_pct"),
        metricIndex("ipis_per_s"), metricIndex("ksoftirqd_wakeups_per_s"), metricIndex("restart_cpu_pct") };
    nlohmann::json doc
        = { { "scenario", experiment.scenario(0)->name }, { "vary", key }, { "runs", nlohmann::json::array() } };
    bool stalled = false;
    if (o.jsonOut != "-") {
        std::cout << "| " << key;
        for (const int c : columns)
            std::cout << " | " << kMetrics[static_cast<std::size_t>(c)].id;
        std::cout << " | stall |\n|---";
        for (std::size_t i = 0; i <= std::size(columns); ++i)
            std::cout << "|---";
        std::cout << "|\n";
    }
    const std::string failed = experiment.run({ o.threads, true, 256 }, [&](RunResult&& r) {
        const auto& v = r.labels.front();
        stalled |= r.stalled;
        if (o.jsonOut != "-") {
            std::cout << "| " << v;
            for (const int c : columns)
                std::cout << " | "
                          << formatMetric(
                                 kMetrics[static_cast<std::size_t>(c)], r.metrics[static_cast<std::size_t>(c)]);
            std::cout << " | " << (r.stalled ? "yes" : "no") << " |\n";
        }
        doc["runs"].push_back({ { "value", v }, { "summary", std::move(r.summary) } });
    });
    if (!failed.empty()) {
        std::cerr << "blkmqlab-cli: " << failed << '\n';
        return kExitUsage;
    }
    return finish(o, doc, stalled);
}

} // namespace blkmq::cli
