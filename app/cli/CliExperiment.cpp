// blkmqlab-cli explore (Monte Carlo over seeds): many independent engines on TBB workers, reported
// in a fixed order so the output does not depend on the thread count.
#include "Cli.h"
#include "CliOptions.h"
#include "CliProgress.h"

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
    Progress progress("explore");
    InterruptGuard interrupt;
    Experiment::Options options;
    options.threads = o.threads;
    options.chunk = 256;
    options.stop = interrupt.flag();
    options.progress = [&](std::uint64_t done, std::uint64_t total) { progress.update(done, total); };
    const auto status = experiment.run(options, [&](RunResult&& r) {
        if (r.stalled && !stalls++) {
            firstExplanation = r.stallExplanation;
            firstSeed = r.seed;
        }
        racy += r.lostTags + r.missedWakeups > 0;
        rows.push_back({ r.seed, r.stalled, r.firstStallNs, r.metrics[metricIndex("iops")], std::move(r.fingerprint),
            r.lostTags, r.missedWakeups });
    });
    progress.done();
    if (!status.error.empty()) {
        std::cerr << "blkmqlab-cli: " << status.error << '\n';
        return kExitUsage;
    }
    if (status.interrupted) // the report covers the seeds that ran
        seeds = status.done;
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
    const int code = finish(o, doc, stalls > 0);
    if (status.interrupted && code != kExitIo) {
        std::cerr << "blkmqlab-cli explore: interrupted after " << status.done << " seeds; the report holds those\n";
        return kExitInterrupted;
    }
    return code;
}

} // namespace blkmq::cli
