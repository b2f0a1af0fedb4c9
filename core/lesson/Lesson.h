#pragma once

#include "engine/Snapshot.h"
#include "engine/StopCondition.h"
#include "io/FieldTable.h"
#include "spec/Scenario.h"
#include "sim/ObjectRef.h"
#include "sim/Result.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace blkmq {

class Engine;

// What a lesson step points at on the canvas: "cpu:1", "hctx:0", "request:A" (a script id),
// "queue:1" (a device's request queue and its shared_hctx_restart), "tags:0" (the driver tags of
// hctx 0, as a tag map).
struct LessonHighlight {
    ObjectRef object; // a Request's index is found in the run, by `request`
    std::string request; // Request: the workload.script id
    std::string text; // as written
};

// A relation between two sums of values a snapshot holds ("restart_skips >= 1",
// "queue.1.shared_hctx_restart + queue.0.shared_hctx_restart == 1"); the names are
// lessonValueHelp()'s.
struct LessonExpectation {
    struct Term { // sign × number, times the value `name` names when it has one (2 * ipis)
        double sign = 1; // +1 or -1
        double number = 0;
        std::string name;
    };
    std::string text;
    std::vector<Term> lhs, rhs;
    enum class Op : std::uint8_t { Eq, Ne, Lt, Le, Gt, Ge } op = Op::Eq;
};

// One step: optionally a fresh scenario (a preset with --set overrides, at t = 0) or live switches
// on the running one, a condition to run to, what to highlight and say, and what must then hold.
struct LessonStep {
    std::string title;
    std::string text;
    std::optional<std::string> preset; // a fresh run of this preset ...
    std::vector<std::string> sets; // ... with these overrides
    std::vector<std::string> switches; // live changes, "path=value", applied when the step starts
    std::string until; // a stop condition (core/engine/StopCondition.h), "" = stay where it is
    std::vector<LessonHighlight> highlights;
    std::vector<LessonExpectation> expectations;
    // The plots the step is about, by the ids of metrics drawn in them (Metric::group); empty: none.
    // Unset: the lesson's.
    std::optional<std::vector<std::string>> plots;
};

// One checked expectation: whether it held, and its values in words ("restart_skips = 1 >= 1").
struct ExpectationResult {
    std::string text;
    bool held = false;
    std::string values; // or why it could not be evaluated
};

// What playing a step did.
struct LessonStepOutcome {
    bool reached = true; // its stop condition held (or it had none)
    std::string error; // why it could not be played (an unreachable condition, a rejected switch)
    SimTime at;
};

// A guided lesson (resources/lessons/*.json, docs/lessons.md): a sequence of steps over the same
// engine the CLI and the GUI run. The CLI checks it headless (blkmqlab-cli lesson NAME --check),
// the GUI's Lessons panel plays it; both call play() and check(), so what a class sees is what CI
// checked.
class Lesson {
public:
    static Result<Lesson> fromText(const std::string& text, const std::string& origin);
    // The same from a parsed document (the text's limits, such as its depth, are fromText's).
    static Result<Lesson> fromJson(const nlohmann::json& doc, const std::string& origin);
    static Result<Lesson> fromFile(const std::string& path);
    // A built-in lesson by name, or a file path (containing '/' or ending in .json).
    static Result<Lesson> load(const std::string& nameOrPath);
    // Every field of a lesson file, the only keys fromText() accepts (blkmqlab-cli fields lesson).
    static const FieldTable& fields();
    // A lesson that gives every field of fields() a value, as the hostile-input tests and the fuzz
    // corpus start from.
    static std::string fullDocument();
    struct Info {
        std::string name, title;
    };
    static std::vector<Info> builtin();

    const std::string& name() const { return m_name; }
    const std::string& title() const { return m_title; }
    const std::string& source() const { return m_source; }
    const std::string& summary() const { return m_summary; }
    const std::vector<LessonStep>& steps() const { return m_steps; }
    int size() const { return static_cast<int>(m_steps.size()); }

    // The plots step `step` shows (its own list, else the lesson's); unset: every plot.
    const std::optional<std::vector<std::string>>& plotsOf(int step) const;
    // The step at or before `step` that starts a fresh scenario, and that scenario.
    int segmentStart(int step) const;
    Result<Scenario> scenarioOf(int step) const;
    // Plays step `step` on an engine that has played the steps before it since segmentStart(step)
    // (or was just built from scenarioOf(step) when step == segmentStart(step)): applies its
    // switches and runs to its condition, at most `maxEvents` events.
    LessonStepOutcome play(Engine& engine, int step, std::uint64_t maxEvents = 200'000'000) const;
    // Evaluates the step's expectations on a snapshot taken where the step stopped.
    std::vector<ExpectationResult> check(const Snapshot& snap, int step) const;

private:
    std::string m_name, m_title, m_source, m_summary;
    std::optional<std::vector<std::string>> m_plots;
    std::vector<LessonStep> m_steps;
};

// The values an expectation may name, one line each: "NAME  what it is".
std::string lessonValueHelp();
// The value NAME holds in `snap`, or an error naming what is wrong (an unknown name, an index
// beyond the machine).
Result<double> lessonValue(const Snapshot& snap, const std::string& name);

} // namespace blkmq
