// blkmqlab-cli explore (Monte Carlo over seeds) and sweep (one parameter over
// values): many independent engines on TBB workers, reported in a fixed order
// so the output does not depend on the thread count.
#include "AtomicFile.h"
#include "Cli.h"
#include "CliOptions.h"

#include "experiment/BatchRunner.h"
#include "metrics/Format.h"
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
        if (auto err = writeFileAtomically(o.jsonOut, doc.dump(2) + "\n"); !err.empty()) {
            std::cerr << "blkmqlab-cli: --json: " << err << '\n';
            return kExitIo;
        }
    return o.failOnStall && stalled ? kExitStall : kExitOk;
}

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
              if (!value(v) || v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 9)
                  error = a + " needs a positive number";
              else
                  (a == "--seeds" ? seeds : first) = std::stoull(v);
              if (a == "--seeds" && seeds == 0)
                  error = "--seeds needs a positive number";
              return true;
          });
    if (!err.empty()) {
        std::cerr << "blkmqlab-cli explore: " << err << " (see blkmqlab-cli help)\n";
        return kExitUsage;
    }
    std::vector<Scenario> runs;
    for (std::uint64_t s = first; s < first + seeds; ++s) {
        auto sc = o.load({ "seed=" + std::to_string(s) });
        if (!sc) {
            std::cerr << "blkmqlab-cli: " << sc.error() << '\n';
            return kExitUsage;
        }
        runs.push_back(*sc);
    }
    const auto out = BatchRunner::runParallel(runs, o.threads);
    nlohmann::json doc = { { "scenario", runs.front().name }, { "seeds", seeds }, { "runs", nlohmann::json::array() } };
    int stalls = 0;
    std::string firstExplanation;
    std::uint64_t firstSeed = 0;
    for (std::size_t i = 0; i < out.size(); ++i) {
        const auto& st = out[i].summary["stall"];
        const bool stalled = st["detected"].get<bool>();
        if (stalled && !stalls++) {
            firstExplanation = st["explanation"].get<std::string>();
            firstSeed = runs[i].seed;
        }
        doc["runs"].push_back(
            { { "seed", runs[i].seed }, { "stalled", stalled }, { "first_stuck_ns", st["first_stuck_ns"] },
                { "iops", out[i].summary["io"]["iops"] }, { "fingerprint", out[i].fingerprint } });
    }
    doc["stalled_runs"] = stalls;
    if (o.jsonOut != "-") {
        std::cout << runs.front().name << ": " << stalls << " of " << seeds << " seeds (" << first << ".."
                  << first + seeds - 1 << ") stalled\n";
        for (const auto& r : doc["runs"])
            if (r["stalled"].get<bool>())
                std::cout << "  seed " << r["seed"].get<std::uint64_t>() << ": stuck at "
                          << formatDuration(SimTime(r["first_stuck_ns"].get<std::int64_t>())) << '\n';
        if (stalls)
            std::cout << "first stall (seed " << firstSeed << "): " << firstExplanation << '\n';
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
    std::vector<Scenario> runs;
    for (const auto& v : values) {
        auto sc = o.load({ key + "=" + v });
        if (!sc) {
            std::cerr << "blkmqlab-cli: " << sc.error() << '\n';
            return kExitUsage;
        }
        runs.push_back(*sc);
    }
    const auto out = BatchRunner::runParallel(runs, o.threads);
    static const std::vector<std::pair<const char*, const char*>> columns = {
        { "IOPS", "/io/iops" },
        { "p99 lat us", "/latency_ns/p99" },
        { "remote %", "/completion/remote_pct" },
        { "IPIs", "/completion/ipis" },
        { "ksoftirqd", "/completion/ksoftirqd_wakeups" },
        { "restart CPU us", "/restart/cpu_ns" },
        { "stall", "/stall/detected" },
    };
    nlohmann::json doc = { { "scenario", runs.front().name }, { "vary", key }, { "runs", nlohmann::json::array() } };
    bool stalled = false;
    if (o.jsonOut != "-") {
        std::cout << "| " << key;
        for (const auto& c : columns)
            std::cout << " | " << c.first;
        std::cout << " |\n|" << std::string(1, '-') << "--";
        for (std::size_t i = 0; i < columns.size(); ++i)
            std::cout << "|---";
        std::cout << "|\n";
    }
    for (std::size_t i = 0; i < out.size(); ++i) {
        const auto& s = out[i].summary;
        nlohmann::json row = { { "value", values[i] }, { "summary", s } };
        doc["runs"].push_back(row);
        stalled |= s["stall"]["detected"].get<bool>();
        if (o.jsonOut == "-")
            continue;
        std::cout << "| " << values[i];
        for (const auto& c : columns) {
            const auto v = s.at(nlohmann::json::json_pointer(c.second));
            double x = v.is_boolean() ? (v.get<bool>() ? 1 : 0) : v.get<double>();
            if (std::string(c.second).find("_ns") != std::string::npos)
                x /= 1e3;
            std::cout << " | " << (v.is_boolean() ? (v.get<bool>() ? "yes" : "no") : formatQuantity(x));
        }
        std::cout << " |\n";
    }
    return finish(o, doc, stalled);
}

} // namespace blkmq::cli
