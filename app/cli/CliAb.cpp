// blkmqlab-cli ab: two kernel configurations of one scenario on the same seeds. Per metric, A's and
// B's means, B/A with its spread over the seeds, and whether B differs from A by more than that
// spread: a paired t-test over the seeds (the same seed is the same workload on both sides).
#include "Cli.h"
#include "CliOptions.h"
#include "CliProgress.h"

#include "experiment/Experiment.h"
#include "io/Limits.h"
#include "io/SafeFile.h"
#include "metrics/Format.h"
#include "metrics/Metrics.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

namespace blkmq::cli {

namespace {

// Student's t at 0.975 (two-sided 95%) for df = 1..30; above, a Cornish-Fisher expansion of z.
double tCritical(std::uint64_t df)
{
    static constexpr double kT[]
        = { 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
              2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042 };
    if (df == 0)
        return INFINITY;
    if (df <= 30)
        return kT[df - 1];
    const double z = 1.959963984540054, n = static_cast<double>(df);
    return z + (z * z * z + z) / (4 * n) + (5 * std::pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * n * n);
}

struct Stats {
    double mean = 0, sd = 0;
};

Stats stats(const std::vector<double>& v)
{
    Stats s;
    if (v.empty())
        return s;
    for (const double x : v)
        s.mean += x;
    s.mean /= static_cast<double>(v.size());
    if (v.size() > 1) {
        for (const double x : v)
            s.sd += (x - s.mean) * (x - s.mean);
        s.sd = std::sqrt(s.sd / static_cast<double>(v.size() - 1));
    }
    return s;
}

std::vector<std::string> splitSets(const std::string& text)
{
    std::vector<std::string> out;
    std::stringstream ss(text);
    for (std::string s; std::getline(ss, s, ',');)
        if (!s.empty())
            out.push_back(s);
    return out;
}

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
    bool hasA = false, hasB = false;
    std::uint64_t seeds = 10, first = 1;
    const auto err = parseScenarioOptions(
        args, o, [&](const std::string& arg, const NextValue& value, std::string& error) {
            std::string v;
            if (arg == "--a" || arg == "--b") {
                if (!value(v))
                    error = arg + " needs kernel settings, path=value[,path=value...] (\"\" for the scenario as given)";
                (arg == "--a" ? a : b) = v;
                (arg == "--a" ? hasA : hasB) = true;
                return true;
            }
            if (arg != "--seeds" && arg != "--first-seed")
                return false;
            if (!value(v) || v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 18)
                error = arg + " needs a positive number";
            else
                (arg == "--seeds" ? seeds : first) = std::stoull(v);
            if (arg == "--seeds" && (seeds < 2 || seeds > static_cast<std::uint64_t>(limits::kExploreSeeds)))
                error = "--seeds: from 2 (a spread needs two) to " + std::to_string(limits::kExploreSeeds);
            return true;
        });
    if (!err.empty() || !hasB) {
        std::cerr << "blkmqlab-cli ab: " << (err.empty() ? std::string("--b SETTINGS is required") : err)
                  << " (see blkmqlab-cli help)\n";
        return kExitUsage;
    }
    int onStdout = 0;
    if (const std::string e = checkOutput("--json", o.jsonOut, onStdout); !e.empty()) {
        std::cerr << "blkmqlab-cli: " << e << '\n';
        return kExitIo;
    }
    const std::string labelA = hasA && !a.empty() ? a : "as given";
    const std::string labelB = b.empty() ? "as given" : b;
    const Experiment experiment([&](const std::vector<std::string>& sets) { return o.load(sets); },
        { Axis::configurations("side", { { "A", splitSets(a) }, { "B", splitSets(b) } }), Axis::seeds(first, seeds) });
    for (std::uint64_t side = 0; side < 2; ++side)
        if (auto sc = experiment.scenario(side * seeds); !sc) {
            std::cerr << "blkmqlab-cli: --" << (side ? "b " : "a ") << (side ? b : a) << ": " << sc.error() << '\n';
            return kExitUsage;
        }
    // values[side][metric][seed]
    std::vector<std::vector<std::vector<double>>> values(2, std::vector<std::vector<double>>(kMetrics.size()));
    std::uint64_t stalls[2] = { 0, 0 };
    Progress progress("ab");
    InterruptGuard interrupt;
    Experiment::Options options;
    options.threads = o.threads;
    options.stop = interrupt.flag();
    options.progress = [&](std::uint64_t done, std::uint64_t total) { progress.update(done, total); };
    const auto status = experiment.run(options, [&](RunResult&& r) {
        const std::size_t side = r.index < seeds ? 0 : 1;
        stalls[side] += r.stalled;
        for (std::size_t m = 0; m < kMetrics.size(); ++m)
            values[side][m].push_back(r.metrics[m]);
    });
    progress.done();
    if (!status.error.empty()) {
        std::cerr << "blkmqlab-cli: " << status.error << '\n';
        return kExitUsage;
    }
    if (status.interrupted) { // a comparison needs both sides on the same seeds
        std::cerr << "blkmqlab-cli ab: interrupted after " << status.done << " runs; nothing reported\n";
        return kExitInterrupted;
    }
    const auto scenario = experiment.scenario(0);
    const double tc = tCritical(seeds - 1);
    nlohmann::json doc = { { "scenario", scenario->name }, { "a", labelA }, { "b", labelB }, { "seeds", seeds },
        { "first_seed", first }, { "stalled", { { "a", stalls[0] }, { "b", stalls[1] } } },
        { "test",
            "paired t-test over the seeds, two-sided, 95%: a difference is significant when |t| > t(0.975, "
            "seeds - 1)" },
        { "t_critical", tc }, { "metrics", nlohmann::json::array() } };
    const bool text = o.jsonOut != "-";
    if (text) {
        std::cout << scenario->name << ", " << seeds << " seeds (" << first << ".." << first + seeds - 1
                  << ") on both sides: A = " << labelA << ", B = " << labelB << "\n";
        std::cout << "B/A is the mean of the per-seed ratios +- their standard deviation; 'yes' when a paired t-test "
                     "over the seeds finds B - A larger than its spread (two-sided 95%, |t| > "
                  << fixed(tc, 3) << ")\n\n";
        std::cout << "| metric | A | B | B/A | paired t | differs |\n|---|---|---|---|---|---|\n";
    }
    for (std::size_t m = 0; m < kMetrics.size(); ++m) {
        const auto& va = values[0][m];
        const auto& vb = values[1][m];
        const Stats sa = stats(va), sb = stats(vb);
        if (sa.mean == 0 && sb.mean == 0)
            continue; // a metric neither side exercises
        std::vector<double> diff, ratio;
        for (std::size_t i = 0; i < va.size(); ++i) {
            diff.push_back(vb[i] - va[i]);
            if (va[i] != 0)
                ratio.push_back(vb[i] / va[i]);
        }
        const Stats sd = stats(diff), sr = stats(ratio);
        const double n = static_cast<double>(diff.size());
        // t of the mean paired difference; an exactly repeated difference (sd 0) is certain.
        const double t = sd.sd > 0 ? sd.mean / (sd.sd / std::sqrt(n)) : (sd.mean == 0 ? 0.0 : INFINITY);
        const bool differs = std::fabs(t) > tc;
        const Metric& metric = kMetrics[m];
        nlohmann::json row = { { "id", std::string(metric.id) }, { "a_mean", sa.mean }, { "a_sd", sa.sd },
            { "b_mean", sb.mean }, { "b_sd", sb.sd }, { "differs", differs } };
        if (std::isfinite(t))
            row["t"] = t;
        else
            row["t"] = nullptr;
        if (!ratio.empty()) {
            row["b_over_a"] = sr.mean;
            row["b_over_a_sd"] = sr.sd;
        }
        doc["metrics"].push_back(row);
        if (text)
            std::cout << "| " << metric.id << " | " << formatMetric(metric, sa.mean) << " | "
                      << formatMetric(metric, sb.mean) << " | "
                      << (ratio.empty() ? std::string("-") : fixed(sr.mean, 3) + " +- " + fixed(sr.sd, 3)) << " | "
                      << (std::isfinite(t) ? fixed(t, 2) : std::string("inf")) << " | " << (differs ? "yes" : "no")
                      << " |\n";
    }
    if (!o.jsonOut.empty())
        if (auto e = SafeFile::write(o.jsonOut, doc.dump(2) + "\n"); !e.empty()) {
            std::cerr << "blkmqlab-cli: --json: " << e << '\n';
            return kExitIo;
        }
    if (!flushStdout())
        return kExitIo;
    return o.failOnStall && (stalls[0] + stalls[1]) > 0 ? kExitStall : kExitOk;
}

} // namespace blkmq::cli
