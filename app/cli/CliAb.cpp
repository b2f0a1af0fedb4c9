// blkmqlab-cli ab: two kernel configurations of one scenario on the same seeds. Per metric, A's and
// B's means, B/A with its spread over the seeds, and whether B differs from A by more than that
// spread: a paired t-test over the seeds (the same seed is the same workload on both sides).
#include "Cli.h"
#include "CliJournal.h"
#include "CliOptions.h"
#include "CliProgress.h"

#include "experiment/SeedComparison.h"
#include "io/Limits.h"
#include "metrics/Format.h"
#include "metrics/Metrics.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

namespace blkmq::cli {

namespace {

std::string fixed(double v, int digits)
{
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

} // namespace

int abCommand(const std::vector<std::string>& args)
{
    ScenarioOptions o;
    std::string a, b;
    bool hasA = false, hasB = false, resume = false;
    std::uint64_t seeds = 10, first = 1;
    const auto err = parseScenarioOptions(
        args, o, [&](const std::string& arg, const NextValue& value, std::string& error) {
            std::string v;
            if (arg == "--resume") {
                resume = true;
                return true;
            }
            if (arg == "--a" || arg == "--b") {
                if (!value(v))
                    error = arg + " needs kernel settings, path=value[,path=value...] (\"\" for the scenario as given)";
                else
                    error = settingsProblem(arg, v);
                (arg == "--a" ? a : b) = v;
                (arg == "--a" ? hasA : hasB) = true;
                return true;
            }
            return seedOption(arg, value, error, seeds, first, 2); // a spread needs two seeds
        });
    if (!err.empty() || !hasB) {
        std::cerr << "blkmqlab-cli ab: " << (err.empty() ? std::string("--b SETTINGS is required") : err)
                  << " (see blkmqlab-cli help)\n";
        return kExitUsage;
    }
    if (int code = 0; !outputsUsable("ab", { { "--json", o.jsonOut } }, code))
        return code;
    // The scenario as given (its seed is each run's own): a value it refuses is refused before any run.
    const auto scenario = o.load();
    if (!scenario) {
        std::cerr << "blkmqlab-cli: " << scenario.error() << '\n';
        return kExitUsage;
    }
    if (resume && (o.jsonOut.empty() || o.jsonOut == "-")) {
        std::cerr << "blkmqlab-cli ab: --resume continues the report of --json FILE from its journal (FILE.journal) "
                     "(see blkmqlab-cli help)\n";
        return kExitUsage;
    }
    // With --json FILE the finished runs go to FILE.journal as they come: killed, --resume goes on
    // after them and writes the same report an uninterrupted comparison does.
    Journal journal;
    std::vector<RunResult> resumed;
    if (!o.jsonOut.empty() && o.jsonOut != "-") {
        const std::vector<JournalPart> parts { { "variants", journalHash("a=" + a + "\nb=" + b),
                                                   "the variants (--a, --b)" },
            { "seeds", std::to_string(first) + ".." + std::to_string(first + seeds - 1), "the seeds" },
            { "scenario", journalHash(scenario->sourceJson), "the scenario (its file or preset, --set, --fio)" } };
        if (const std::string e = openResultJournal(journal, o.jsonOut, "ab", parts, resume, resumed); !e.empty()) {
            std::cerr << "blkmqlab-cli ab: --json: " << e << '\n';
            return resume ? kExitUsage : kExitIo;
        }
        if (!resumed.empty())
            std::cerr << "blkmqlab-cli ab: resuming after " << resumed.size() << " of " << 2 * seeds << " runs done\n";
    }
    const std::string labelA = hasA && !a.empty() ? a : "as given";
    const std::string labelB = b.empty() ? "as given" : b;
    Progress progress("ab");
    InterruptGuard interrupt;
    Experiment::Options options;
    options.threads = o.threads;
    options.stop = interrupt.flag();
    options.progress = [&](std::uint64_t done, std::uint64_t total) { progress.update(done, total); };
    options.resumed = std::move(resumed);
    options.finished = [&](const RunResult& r) { journal.append(journalLine(r)); };
    auto compared = compareOverSeeds([&](const std::vector<std::string>& sets) { return o.load(sets); },
        splitSettings(a), splitSettings(b), first, seeds, options);
    progress.done();
    if (!compared) {
        std::cerr << "blkmqlab-cli: " << compared.error() << '\n';
        return kExitUsage;
    }
    const SeedComparison& c = compared.value();
    if (c.interrupted) { // a comparison needs both sides on the same seeds
        std::cerr << "blkmqlab-cli ab: interrupted; nothing reported\n";
        return kExitInterrupted;
    }
    nlohmann::json doc = { { "scenario", scenario->name }, { "a", labelA }, { "b", labelB }, { "seeds", seeds },
        { "first_seed", first }, { "stalled", { { "a", c.stalledA }, { "b", c.stalledB } } },
        { "test", SeedComparison::kTest }, { "t_critical", c.tCritical }, { "metrics", nlohmann::json::array() } };
    const bool text = o.jsonOut != "-";
    if (text) {
        std::cout << scenario->name << ", " << seeds << " seeds (" << first << ".." << first + seeds - 1
                  << ") on both sides: A = " << labelA << ", B = " << labelB << "\n";
        std::cout << "B/A is the mean of the per-seed ratios +- their standard deviation; 'yes' when a paired t-test "
                     "over the seeds finds B - A larger than its spread (two-sided 95%, |t| > "
                  << fixed(c.tCritical, 3) << ")\n\n";
        std::cout << "| metric | A | B | B/A | paired t | differs |\n|---|---|---|---|---|---|\n";
    }
    for (const MetricComparison& m : c.metrics) {
        const Metric& metric = kMetrics[static_cast<std::size_t>(m.metric)];
        nlohmann::json row = { { "id", std::string(metric.id) }, { "a_mean", m.aMean }, { "a_sd", m.aSd },
            { "b_mean", m.bMean }, { "b_sd", m.bSd }, { "differs", m.differs } };
        row["t"] = std::isfinite(m.t) ? nlohmann::json(m.t) : nlohmann::json(nullptr);
        if (m.hasRatio) {
            row["b_over_a"] = m.ratioMean;
            row["b_over_a_sd"] = m.ratioSd;
        }
        doc["metrics"].push_back(row);
        if (text)
            std::cout << "| " << metric.id << " | " << formatMetric(metric, m.aMean) << " | "
                      << formatMetric(metric, m.bMean) << " | "
                      << (m.hasRatio ? fixed(m.ratioMean, 3) + " +- " + fixed(m.ratioSd, 3) : std::string("-")) << " | "
                      << (std::isfinite(m.t) ? fixed(m.t, 2) : std::string(m.t > 0 ? "inf" : "-inf")) << " | "
                      << (m.differs ? "yes" : "no") << " |\n";
    }
    const int code = finishCommand(o, doc, c.stalledA + c.stalledB > 0);
    if (code != kExitIo)
        journal.remove(); // the report is whole: the journal has served
    return code;
}

} // namespace blkmq::cli
