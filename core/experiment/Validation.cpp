#include "experiment/Validation.h"

#include "experiment/BatchRunner.h"
#include "metrics/Format.h"
#include "scenario/ScenarioLoader.h"

#include <cstdio>
#include <sstream>

namespace blkmq {

namespace {

std::vector<Claim> allClaims()
{
    std::vector<Claim> c;
    {
        Claim k;
        k.family = "baseline";
        k.source = "seed 000, Jens Axboe";
        k.text = "single core IOPS at 2.8M";
        k.preset = "single-core-null";
        k.metric = "/io/iops";
        k.lo = 2.8e6 * 0.95;
        k.hi = 2.8e6 * 1.05;
        k.band = "2.8M ± 5%";
        k.calibrated = true;
        c.push_back(k);
        k.text = "no remote IPI for that test case";
        k.metric = "/completion/ipis";
        k.lo = k.hi = 0;
        k.band = "0";
        k.calibrated = false;
        c.push_back(k);
    }
    {
        Claim k;
        k.family = "baseline";
        k.source = "seed 000, Daniel Wagner";
        k.text = "2x Gold 6130, NVMe with per-CPU queues, 32 jobs QD 64: 0% remote completions";
        k.preset = "nvme-2s64-mq";
        k.metric = "/completion/remote_pct";
        k.lo = k.hi = 0;
        k.band = "0%";
        c.push_back(k);
        k.text = "the same with one hw queue: 56.4% remote completions";
        k.preset = "nvme-2s64-1q";
        k.lo = 46.4;
        k.hi = 66.4;
        k.band = "56.4% ± 10 points";
        c.push_back(k);
    }
    return c;
}

double pointer(const nlohmann::json& summary, const std::string& ptr)
{
    const auto v = summary.at(nlohmann::json::json_pointer(ptr));
    return v.get<double>();
}

} // namespace

std::vector<std::string> Validation::families()
{
    std::vector<std::string> out;
    for (const auto& c : allClaims())
        if (out.empty() || out.back() != c.family)
            out.push_back(c.family);
    return out;
}

std::vector<Claim> Validation::claims(const std::string& family)
{
    std::vector<Claim> out;
    for (const auto& c : allClaims())
        if (family.empty() || family == "all" || c.family == family)
            out.push_back(c);
    return out;
}

std::vector<ClaimResult> Validation::run(const std::vector<Claim>& claims)
{
    // Each distinct (preset, overrides) runs once.
    std::vector<Scenario> scenarios;
    std::vector<std::pair<std::string, std::vector<std::string>>> keys;
    const auto index = [&](const std::string& preset, std::vector<std::string> sets, const std::string& duration) {
        sets.push_back("duration=\"" + duration + "\"");
        for (std::size_t i = 0; i < keys.size(); ++i)
            if (keys[i].first == preset && keys[i].second == sets)
                return i;
        auto s = ScenarioLoader::fromPreset(preset, sets);
        if (!s)
            throw std::runtime_error("validation: " + s.error());
        scenarios.push_back(*s);
        keys.emplace_back(preset, sets);
        return keys.size() - 1;
    };
    std::vector<std::pair<std::size_t, std::size_t>> runs;
    for (const auto& c : claims) {
        const std::size_t a = index(c.preset, c.sets, c.duration);
        const std::size_t b = c.compareSets.empty() ? a : index(c.preset, c.compareSets, c.duration);
        runs.emplace_back(a, b);
    }
    const auto outcomes = BatchRunner::runParallel(scenarios);
    std::vector<ClaimResult> results;
    for (std::size_t i = 0; i < claims.size(); ++i) {
        const Claim& c = claims[i];
        double v = pointer(outcomes[runs[i].first].summary, c.metric);
        if (!c.compareSets.empty()) {
            const double base = pointer(outcomes[runs[i].second].summary, c.metric);
            v = base != 0 ? v / base : 0;
        }
        results.push_back({ c, v, v >= c.lo && v <= c.hi });
    }
    return results;
}

std::string Validation::markdown(const std::vector<ClaimResult>& results)
{
    std::ostringstream out;
    out << "| family | claim | source | preset | simulated | band | holds |\n| --- | --- | --- | --- | --- | --- | --- |\n";
    for (const auto& r : results) {
        out << "| " << r.claim.family << " | " << r.claim.text << " | " << r.claim.source << " | `" << r.claim.preset
            << "` | " << formatQuantity(r.simulated) << " (`" << r.claim.metric << "`) | " << r.claim.band << " | "
            << (r.holds ? "yes" : "**no**") << (r.claim.calibrated ? " (calibrated)" : "") << " |\n";
    }
    return out.str();
}

} // namespace blkmq
