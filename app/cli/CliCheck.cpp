// blkmqlab-cli check: every ordering of a small configuration's choice points, and the verdict
// (docs/check.md).
#include "Cli.h"
#include "CliOptions.h"

#include "check/ModelChecker.h"
#include "engine/Engine.h"
#include "io/Limits.h"
#include "io/SafeFile.h"
#include "io/Text.h"
#include "scenario/ScenarioLoader.h"
#include "session/Session.h"
#include "sim/Duration.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

namespace blkmq::cli {

namespace {

bool countOption(const std::string& a, const NextValue& value, std::string& error, std::int64_t lo, std::int64_t hi,
    std::int64_t& out)
{
    std::string v;
    if (!value(v) || v.empty() || v.size() > 12 || v.find_first_not_of("0123456789") != std::string::npos) {
        error = a + " needs a count";
        return true;
    }
    const long long n = std::stoll(v);
    if (n < lo || n > hi)
        error = a + ": " + v + " is outside " + std::to_string(lo) + ".." + std::to_string(hi) + " (docs/limits.md)";
    else
        out = n;
    return true;
}

std::string thousands(std::uint64_t n)
{
    std::string s = std::to_string(n);
    for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3)
        s.insert(static_cast<std::size_t>(i), ",");
    return s;
}

} // namespace

int checkCommand(const std::vector<std::string>& args)
{
    if (args.size() == 1 && args[0] == "--properties") {
        for (const PropertyInfo& p : checkProperties())
            std::cout << p.name << std::string(18 - std::string(p.name).size(), ' ') << p.what << '\n';
        return flushStdout() ? kExitOk : kExitIo;
    }
    ScenarioOptions o;
    std::string propertyName = "no-stall", counterexample;
    std::int64_t maxRuns = 1'000'000, maxDepth = 1000, points = -1;
    std::int64_t maxStates = static_cast<std::int64_t>(CheckBounds {}.maxStates);
    bool lockBoundaries = false;
    const auto err
        = parseScenarioOptions(args, o, [&](const std::string& a, const NextValue& value, std::string& error) {
              if (a == "--property") {
                  if (!value(propertyName) || !findProperty(propertyName)) {
                      std::string list;
                      for (const PropertyInfo& p : checkProperties())
                          list += (list.empty() ? "" : ", ") + std::string(p.name);
                      error = "--property needs one of " + list;
                  }
                  return true;
              }
              if (a == "--properties") {
                  error = "--properties lists the properties and takes nothing else";
                  return true;
              }
              if (a == "--max-runs")
                  return countOption(a, value, error, 1, limits::kCheckRuns, maxRuns);
              if (a == "--max-depth")
                  return countOption(a, value, error, 1, limits::kCheckDepth, maxDepth);
              if (a == "--max-states")
                  return countOption(a, value, error, 0, limits::kCheckStates, maxStates);
              if (a == "--lock-boundaries") {
                  lockBoundaries = true;
                  return true;
              }
              if (a == "--latency-points")
                  return countOption(a, value, error, 1, limits::kLatencyPoints, points);
              if (a == "--save-counterexample") {
                  if (!value(counterexample) || counterexample.empty() || counterexample == "-")
                      error = "--save-counterexample needs a file name (.blkmqlab: a session at the violation)";
                  return true;
              }
              return false;
          });
    if (!err.empty()) {
        std::cerr << "blkmqlab-cli check: " << err << " (see blkmqlab-cli help)\n";
        return kExitUsage;
    }
    if (int code = 0;
        !outputsUsable("check", { { "--json", o.jsonOut }, { "--save-counterexample", counterexample } }, code))
        return code;
    const auto scenario = o.load();
    if (!scenario) {
        std::cerr << "blkmqlab-cli: " << scenario.error() << '\n';
        return kExitUsage;
    }
    const PropertyInfo& property = *findProperty(propertyName);
    if (const std::string why = vacuous(property.id, *scenario); !why.empty()) {
        std::cerr << "blkmqlab-cli check: --property " << property.name << ": " << scenario->name
                  << " cannot violate it: " << why << '\n';
        return kExitUsage;
    }
    CheckBounds bounds;
    bounds.maxRuns = static_cast<std::uint64_t>(maxRuns);
    bounds.maxDepth = static_cast<std::size_t>(maxDepth);
    bounds.maxStates = static_cast<std::uint64_t>(maxStates);
    bounds.lockBoundaries = lockBoundaries;
    bounds.latencyPoints = points > 0 ? static_cast<int>(points) : scenario->choices.latency_points;

    ModelChecker checker(*scenario, property.id, bounds);
    if (const std::string why = checker.tooLarge(); !why.empty()) {
        std::cerr << "blkmqlab-cli check: " << scenario->name << ": " << why << '\n';
        return kExitUsage;
    }
    const CheckResult r = checker.run();

    const char* verdict = r.verdict == CheckResult::Verdict::Holds ? "holds"
        : r.verdict == CheckResult::Verdict::Violated              ? "violated"
                                                                   : "unfinished";
    nlohmann::json doc = { { "scenario", scenario->name }, { "property", property.name }, { "verdict", verdict },
        { "runs", r.runs }, { "choice_points", r.states }, { "distinct_states", r.distinct },
        { "runs_ended_at_seen_state", r.revisits }, { "events", r.events }, { "deepest", r.deepest },
        { "depth_cut", r.depthCut }, { "cpu_seconds", r.cpuSeconds }, { "state_bytes", r.stateBytes },
        { "table_bytes", r.tableBytes }, { "table_full", r.tableFull },
        { "bounds",
            { { "max_runs", bounds.maxRuns }, { "max_depth", bounds.maxDepth }, { "max_states", bounds.maxStates },
                { "latency_points", bounds.latencyPoints },
                { "lock_boundaries", bounds.lockBoundaries || scenario->choices.lock_boundaries },
                { "duration_ns", scenario->duration.ns() } } } };
    if (r.verdict == CheckResult::Verdict::Violated) {
        nlohmann::json steps = nlohmann::json::array();
        for (const Choice& c : r.choices)
            steps.push_back({ { "kind", choiceKindName(c.kind) }, { "options", c.options }, { "taken", c.taken },
                { "event", c.events }, { "time_ns", c.t_ns }, { "what", describeChoice(c) } });
        doc["counterexample"] = { { "choices", steps }, { "events", r.violationEvents },
            { "time_ns", r.violationTime.ns() }, { "violation", r.violation } };
    }

    if (o.jsonOut != "-") {
        std::cout << "check " << scenario->name << ": " << property.name << " (" << property.what << ")\n";
        std::cout << "  bounds: the scenario's " << formatDuration(scenario->duration) << ", " << bounds.latencyPoints
                  << " point(s) per device latency, "
                  << (bounds.lockBoundaries || scenario->choices.lock_boundaries ? "CPUs held at lock boundaries, "
                                                                                 : "")
                  << "at most " << thousands(bounds.maxRuns) << " runs and " << bounds.maxDepth << " choices per run\n";
        std::cout << "  searched: " << thousands(r.runs) << " runs, " << thousands(r.states) << " choice points, "
                  << thousands(r.events) << " events; the longest run made " << r.deepest << " choices\n";
        if (bounds.maxStates > 0)
            std::cout << "  states: " << thousands(r.distinct) << " distinct; " << thousands(r.revisits)
                      << " runs ended at a state already explored"
                      << (r.tableFull ? " (the table filled at --max-states: later states were not remembered)" : "")
                      << '\n';
        else
            std::cout << "  states: not remembered (--max-states 0): every path was run to its end\n";
        char rate[200];
        const double per = r.cpuSeconds > 0 ? 1 / r.cpuSeconds : 0.0;
        std::snprintf(rate, sizeof rate, "  time: %.2f s of CPU (%.0f runs/s, %.0f choice points/s, %.2f M events/s)\n",
            r.cpuSeconds, static_cast<double>(r.runs) * per, static_cast<double>(r.states) * per,
            static_cast<double>(r.events) * per / 1e6);
        std::cout << rate;
        std::cout << "  memory: " << (r.stateBytes + 1023) / 1024 << " KiB for the run on the path, "
                  << (r.tableBytes + 1023) / 1024 << " KiB for the states explored\n";
        switch (r.verdict) {
        case CheckResult::Verdict::Holds:
            std::cout << "  verdict: HOLDS for every ordering within the bounds"
                      << (r.depthCut ? " (choices past the depth bound took their first option)" : "") << '\n';
            break;
        case CheckResult::Verdict::Unfinished:
            std::cout << "  verdict: UNFINISHED: --max-runs " << bounds.maxRuns
                      << " ended the search before every ordering was tried; raise it, or make the configuration "
                         "smaller (fewer requests, fewer latency points)\n";
            break;
        case CheckResult::Verdict::Violated:
            std::cout << "  verdict: VIOLATED; the shortest counterexample takes " << r.choices.size()
                      << " choice(s) and " << r.violationEvents << " events, to " << formatDuration(r.violationTime)
                      << ":\n";
            for (std::size_t i = 0; i < r.choices.size(); ++i) {
                const Choice& c = r.choices[i];
                std::cout << "    " << i + 1 << ". at " << formatDuration(SimTime(c.t_ns)) << " (event " << c.events + 1
                          << "): " << describeChoice(c) << '\n';
            }
            std::cout << "  what happened: " << r.violation << '\n';
            break;
        }
    }
    int rc = r.verdict == CheckResult::Verdict::Holds ? kExitOk
        : r.verdict == CheckResult::Verdict::Violated ? kExitStall
                                                      : kExitUnfinished;
    if (!counterexample.empty()) {
        if (r.verdict != CheckResult::Verdict::Violated) {
            std::cerr << "blkmqlab-cli check: --save-counterexample: no violation, nothing written\n";
        } else {
            auto cx = ScenarioLoader::fromText(r.counterexampleJson, "the counterexample");
            if (!cx) {
                std::cerr << "blkmqlab-cli: " << cx.error() << '\n';
                return kExitUsage;
            }
            std::string text;
            const bool asSession
                = counterexample.size() > 9 && counterexample.compare(counterexample.size() - 9, 9, ".blkmqlab") == 0;
            if (asSession) {
                // The run replayed to the event after which the violation showed.
                Engine engine(*cx);
                while (engine.events() < r.violationEvents && engine.step()) { }
                if (engine.events() == r.violationEvents && r.violationTime > engine.now())
                    engine.runUntil(r.violationTime);
                text = Session::of(engine, cx->sourceJson).toText();
            } else {
                text = nlohmann::json::parse(r.counterexampleJson).dump(2) + "\n";
            }
            if (auto e = SafeFile::write(counterexample, text); !e.empty()) {
                std::cerr << "blkmqlab-cli: --save-counterexample: " << e << '\n';
                return kExitIo;
            }
            if (o.jsonOut != "-")
                std::cout << "  counterexample: " << counterexample
                          << (asSession ? " (blkmqlab-cli run --session, or the GUI, opens it at the violation)\n"
                                        : " (a scenario: blkmqlab-cli run replays it)\n");
        }
    }
    if (!o.jsonOut.empty()) {
        const std::string text = doc.dump(2) + "\n";
        if (o.jsonOut == "-")
            std::cout << text;
        else if (auto e = SafeFile::write(o.jsonOut, text); !e.empty()) {
            std::cerr << "blkmqlab-cli: --json: " << e << '\n';
            return kExitIo;
        }
    }
    if (!flushStdout())
        return kExitIo;
    return rc;
}

} // namespace blkmq::cli
