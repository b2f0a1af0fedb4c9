// blkmqlab-cli explore (Monte Carlo over seeds): many independent engines on TBB workers, reported
// in a fixed order so the output does not depend on the thread count.
#include "Cli.h"
#include "CliJournal.h"
#include "CliOptions.h"
#include "CliProgress.h"

#include "engine/Engine.h"
#include "engine/StopCondition.h"
#include "experiment/Experiment.h"
#include "io/Limits.h"
#include "io/SafeFile.h"
#include "io/Text.h"
#include "metrics/Format.h"
#include "metrics/Metrics.h"
#include "scenario/ScenarioLoader.h"
#include "session/Session.h"
#include "sim/Duration.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

namespace blkmq::cli {

namespace {

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

// What one kernel variant's seeds came to: how many stalled and the earliest stall (the smallest
// first_stuck time, then the fewest events to it, then the lowest seed).
struct VariantStats {
    std::string label;
    std::uint64_t runs = 0, stalls = 0, racy = 0;
    std::uint64_t earliestIndex = 0, earliestSeed = 0, earliestEvents = 0;
    std::int64_t earliestNs = -1;
    std::string explanation;
    std::vector<SeedRow> rows;
    bool earlierThan(std::int64_t ns, std::uint64_t events) const
    {
        return earliestNs < 0 || ns < earliestNs || (ns == earliestNs && events < earliestEvents);
    }
};

// The 95% Wilson score interval of a proportion k/n (good at 0 and n, where the normal one is not).
std::pair<double, double> wilson(std::uint64_t k, std::uint64_t n)
{
    if (n == 0)
        return { 0, 1 };
    const double z = 1.959963984540054, p = static_cast<double>(k) / static_cast<double>(n);
    const double nn = static_cast<double>(n), denom = 1 + z * z / nn;
    const double centre = (p + z * z / (2 * nn)) / denom;
    const double half = z * std::sqrt(p * (1 - p) / nn + z * z / (4 * nn * nn)) / denom;
    return { std::max(0.0, centre - half), std::min(1.0, centre + half) };
}

std::string percent(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", 100 * v);
    return buf;
}

} // namespace

int exploreCommand(const std::vector<std::string>& args)
{
    ScenarioOptions o;
    std::uint64_t seeds = 20, first = 1;
    std::vector<std::string> variants;
    std::string counterexample;
    bool resume = false;
    const auto err
        = parseScenarioOptions(args, o, [&](const std::string& a, const NextValue& value, std::string& error) {
              std::string v;
              if (a == "--variant") {
                  if (!value(v) || v.find('=') == std::string::npos)
                      error = "--variant needs kernel settings, path=value[,path=value...]";
                  else if (variants.size() >= 32)
                      error = "--variant: at most 32 variants";
                  else if (const std::string why = settingsProblem(a, v); !why.empty())
                      error = why;
                  else
                      variants.push_back(v);
                  return true;
              }
              if (a == "--resume") {
                  resume = true;
                  return true;
              }
              if (a == "--save-counterexample") {
                  if (!value(counterexample) || counterexample.empty() || counterexample == "-")
                      error = "--save-counterexample needs a file name";
                  return true;
              }
              return seedOption(a, value, error, seeds, first);
          });
    if (!err.empty()) {
        std::cerr << "blkmqlab-cli explore: " << err << " (see blkmqlab-cli help)\n";
        return kExitUsage;
    }
    if (int code = 0;
        !outputsUsable("explore", { { "--json", o.jsonOut }, { "--save-counterexample", counterexample } }, code))
        return code;
    // The scenario as given (its seed is each run's own): a value it refuses is refused before any run.
    if (const auto scenario = o.load(); !scenario) {
        std::cerr << "blkmqlab-cli: " << scenario.error() << '\n';
        return kExitUsage;
    }
    // Variants (each a list of settings) times seeds, the seeds fastest: they are built and run a
    // chunk at a time, so memory does not grow with --seeds beyond one small row each.
    std::vector<AxisPoint> points;
    for (const std::string& v : variants) {
        points.push_back({ v, splitSettings(v) });
    }
    if (points.empty())
        points.push_back({ "as given", {} });
    const Experiment experiment([&](const std::vector<std::string>& sets) { return o.load(sets); },
        { Axis::configurations("variant", points), Axis::seeds(first, seeds) });
    for (std::size_t v = 0; v < points.size(); ++v) // every variant loads before anything runs
        if (auto sc = experiment.scenario(v * seeds); !sc) {
            std::cerr << "blkmqlab-cli: --variant " << printable(points[v].label) << ": " << sc.error() << '\n';
            return kExitUsage;
        }
    // With --json FILE the finished runs go to FILE.journal as they come: killed, --resume goes on
    // after them and writes the same report an uninterrupted run does.
    if (resume && (o.jsonOut.empty() || o.jsonOut == "-")) {
        std::cerr << "blkmqlab-cli explore: --resume continues the report of --json FILE from its journal "
                     "(FILE.journal) (see blkmqlab-cli help)\n";
        return kExitUsage;
    }
    Journal journal;
    std::vector<RunResult> resumed;
    if (!o.jsonOut.empty() && o.jsonOut != "-") {
        std::string labels, scenarios;
        for (std::size_t v = 0; v < points.size(); ++v) {
            labels += points[v].label + "\n";
            scenarios += experiment.scenario(v * seeds)->sourceJson + "\n";
        }
        const std::vector<JournalPart> parts { { "variants", journalHash(labels), "the variants" },
            { "seeds", std::to_string(first) + ".." + std::to_string(first + seeds - 1), "the seeds" },
            { "scenario", journalHash(scenarios), "the scenario (its file or preset, --set, --fio)" } };
        if (const std::string e = openResultJournal(journal, o.jsonOut, "explore", parts, resume, resumed);
            !e.empty()) {
            std::cerr << "blkmqlab-cli explore: --json: " << e << '\n';
            return resume ? kExitUsage : kExitIo;
        }
        if (!resumed.empty())
            std::cerr << "blkmqlab-cli explore: resuming after " << resumed.size() << " of " << experiment.size()
                      << " runs done\n";
    }
    std::vector<VariantStats> stats(points.size());
    for (std::size_t v = 0; v < points.size(); ++v)
        stats[v].label = points[v].label;
    Progress progress("explore");
    InterruptGuard interrupt;
    Experiment::Options options;
    options.threads = o.threads;
    options.chunk = 256;
    options.stop = interrupt.flag();
    options.progress = [&](std::uint64_t done, std::uint64_t total) { progress.update(done, total); };
    options.resumed = std::move(resumed);
    options.finished = [&](const RunResult& r) { journal.append(journalLine(r)); };
    const auto status = experiment.run(options, [&](RunResult&& r) {
        VariantStats& st = stats[static_cast<std::size_t>(r.index / seeds)];
        ++st.runs;
        st.racy += r.lostTags + r.missedWakeups > 0;
        if (r.stalled) {
            ++st.stalls;
            if (st.earlierThan(r.firstStallNs, r.stallEvents)) {
                st.earliestNs = r.firstStallNs;
                st.earliestEvents = r.stallEvents;
                st.earliestSeed = r.seed;
                st.earliestIndex = r.index;
                st.explanation = r.stallExplanation;
            }
        }
        // Every row of the first variant for --json; else only the seeds the report lists.
        if ((!o.jsonOut.empty() && r.index < seeds) || r.stalled || r.lostTags + r.missedWakeups > 0)
            st.rows.push_back({ r.seed, r.stalled, r.firstStallNs, r.metrics[metricIndex("iops")],
                std::move(r.fingerprint), r.lostTags, r.missedWakeups });
    });
    progress.done();
    if (!status.error.empty()) {
        std::cerr << "blkmqlab-cli: " << status.error << '\n';
        return kExitUsage;
    }
    const auto base = experiment.scenario(0);
    const std::string name = base ? base->name : std::string();
    std::uint64_t stalls = 0, racy = 0;
    const VariantStats* worst = nullptr; // the earliest stall of all variants: the counterexample
    for (const VariantStats& st : stats) {
        stalls += st.stalls;
        racy += st.racy;
        if (st.stalls && (!worst || worst->earlierThan(st.earliestNs, st.earliestEvents)))
            worst = &st;
    }
    const std::uint64_t ran = stats.front().runs; // seeds of the first variant (all, unless interrupted)
    nlohmann::json doc;
    if (!o.jsonOut.empty()) {
        const VariantStats& st = stats.front();
        doc = { { "scenario", name }, { "seeds", ran }, { "runs", nlohmann::json::array() },
            { "stalled_runs", st.stalls }, { "tag_race_runs", st.racy }, { "variants", nlohmann::json::array() } };
        for (const auto& r : st.rows) // all of them: kept for --json
            doc["runs"].push_back({ { "seed", r.seed }, { "stalled", r.stalled }, { "first_stuck_ns", r.firstStuckNs },
                { "iops", r.iops }, { "lost_tags", r.lostTags }, { "missed_wakeups", r.missedWakeups },
                { "fingerprint", r.fingerprint } });
        for (const VariantStats& v : stats) {
            const auto [lo, hi] = wilson(v.stalls, v.runs);
            nlohmann::json j = { { "variant", v.label }, { "seeds", v.runs }, { "stalled", v.stalls },
                { "p", v.runs ? static_cast<double>(v.stalls) / static_cast<double>(v.runs) : 0.0 },
                { "p_95_wilson", { lo, hi } }, { "tag_race_runs", v.racy } };
            if (v.stalls)
                j["earliest"] = { { "seed", v.earliestSeed }, { "first_stuck_ns", v.earliestNs },
                    { "events", v.earliestEvents } };
            doc["variants"].push_back(std::move(j));
        }
    }
    if (o.jsonOut != "-") {
        for (const VariantStats& st : stats) {
            const auto [lo, hi] = wilson(st.stalls, st.runs);
            std::cout << name << (stats.size() > 1 ? " [" + st.label + "]" : std::string()) << ": " << st.stalls
                      << " of " << st.runs << " seeds (" << first << ".." << first + st.runs - 1 << ") stalled, p = "
                      << percent(st.runs ? static_cast<double>(st.stalls) / static_cast<double>(st.runs) : 0)
                      << " (95% Wilson score interval " << percent(lo) << " to " << percent(hi) << ")\n";
            for (const auto& r : st.rows)
                if (r.stalled)
                    std::cout << "  seed " << r.seed << ": stuck at " << formatDuration(SimTime(r.firstStuckNs))
                              << '\n';
            if (st.stalls)
                std::cout << "  earliest: seed " << st.earliestSeed << ", stuck at "
                          << formatDuration(SimTime(st.earliestNs)) << " after " << st.earliestEvents << " events\n";
            if (st.racy) {
                std::cout << "  a tag allocator race in " << st.racy << " of " << st.runs << " seeds\n";
                for (const auto& r : st.rows)
                    if (r.lostTags + r.missedWakeups > 0)
                        std::cout << "  seed " << r.seed << ": " << r.lostTags << " tag(s) lost, " << r.missedWakeups
                                  << " missed wake-up(s)\n";
            }
        }
        if (worst)
            std::cout << "earliest stall (" << (stats.size() > 1 ? worst->label + ", " : std::string()) << "seed "
                      << worst->earliestSeed << "): " << worst->explanation << '\n';
    }
    if (!counterexample.empty()) {
        if (!worst) {
            std::cerr << "blkmqlab-cli explore: --save-counterexample: no seed stalled, nothing written\n";
        } else {
            auto sc = experiment.scenario(worst->earliestIndex);
            auto doc2 = nlohmann::json::parse(sc->sourceJson);
            doc2["name"] = name + "-seed-" + std::to_string(worst->earliestSeed);
            doc2["description"] = "The earliest stall blkmqlab-cli explore found: " + name + ", "
                + (stats.size() > 1 ? worst->label + ", " : std::string()) + "seed "
                + std::to_string(worst->earliestSeed) + " (pinned), stuck at "
                + formatDuration(SimTime(worst->earliestNs)) + ". " + doc2.value("description", std::string());
            // FILE.blkmqlab: a session that opens at the stall (the scenario replayed to where the
            // stall detector fired); any other name: the scenario alone.
            std::string text = doc2.dump(2) + "\n";
            if (counterexample.size() > 9 && counterexample.compare(counterexample.size() - 9, 9, ".blkmqlab") == 0) {
                auto pinned = ScenarioLoader::fromJson(doc2);
                if (!pinned) {
                    std::cerr << "blkmqlab-cli: --save-counterexample: " << pinned.error() << '\n';
                    return kExitUsage;
                }
                Engine engine(*pinned);
                const auto stall = stop::stall();
                engine.runUntil(*stall);
                text = Session::of(engine, pinned->sourceJson).toText();
            }
            if (auto e = SafeFile::write(counterexample, text); !e.empty()) {
                std::cerr << "blkmqlab-cli: --save-counterexample: " << e << '\n';
                return kExitIo;
            }
        }
    }
    const int code = finishCommand(o, doc, stalls > 0);
    if (!status.interrupted && code != kExitIo)
        journal.remove(); // the report is whole; an interrupted explore keeps it for --resume
    if (status.interrupted && code != kExitIo) {
        std::cerr << "blkmqlab-cli explore: interrupted after " << status.done << " runs; the report holds those\n";
        return kExitInterrupted;
    }
    return code;
}

} // namespace blkmq::cli
