#pragma once

#include "spec/Scenario.h"
#include "sim/Choices.h"
#include "sim/Result.h"
#include "sim/SimTime.h"
#include "sim/StateHash.h"
#include "sim/TraceSink.h"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace blkmq {

class Engine;

// What `blkmqlab-cli check` proves or refutes (docs/check.md). One row per property: its name on the
// command line, what it says, and why a scenario cannot violate it (empty: it can).
enum class CheckProperty : std::uint8_t { NoStall, NoTagLost, NoMissedWakeup, AllComplete, CompleteOnceWhereChosen };
struct PropertyInfo {
    CheckProperty id;
    const char* name;
    const char* what;
};
const std::vector<PropertyInfo>& checkProperties();
const PropertyInfo* findProperty(const std::string& name);
// "" when `s` can violate `p`; else why it cannot, in words (check refuses such a search).
std::string vacuous(CheckProperty p, const Scenario& s);

// A choice a run made, in words: "device latency 35us", "the same instant: CPU 2's action first".
std::string describeChoice(const Choice& c);

struct CheckBounds {
    std::uint64_t maxRuns = 1'000'000; // runs (paths through the choices) before the search gives up
    std::size_t maxDepth = 1000; // choices searched per run; later ones take option 0
    int latencyPoints = 2; // choices.latency_points of every run
    bool lockBoundaries = false; // choices.lock_boundaries on for every run (else as the scenario says)
    // States remembered (Engine::stateHash), so that a state reached again is not explored again;
    // past this many, new states are explored without being remembered. 0: none (every path is run).
    std::uint64_t maxStates = 4'000'000;
};

// Every ordering of a scenario's choice points, tried run by run (a depth-first search of the tree
// of choices that replays each path from the start), with the property checked after every event;
// a run that reaches a state explored before, no deeper in the tree, ends there; the shortest
// violation kept.
struct CheckResult {
    enum class Verdict : std::uint8_t { Holds, Violated, Unfinished } verdict = Verdict::Holds;
    std::uint64_t runs = 0; // paths tried (leaves of the tree, or runs cut short)
    std::uint64_t states = 0; // choice points visited: nodes of the tree
    std::uint64_t distinct = 0; // distinct states after an event that made a choice (the table's entries)
    std::uint64_t revisits = 0; // runs ended at a state explored before
    bool tableFull = false; // maxStates was reached: later states were explored without being remembered
    std::size_t tableBytes = 0; // the table's memory at the end
    std::uint64_t events = 0; // events processed over all runs
    std::size_t deepest = 0; // the most choices one run made
    bool depthCut = false; // some run made more choices than maxDepth
    double cpuSeconds = 0;
    std::size_t stateBytes = 0; // the largest run's state (Engine::stateBytes): the search's memory, with its path
    // Violated: the shortest violation (fewest choices before it, then fewest events, then the first
    // in the search's order), and the scenario that runs it (choices.taken set).
    std::vector<Choice> choices;
    std::uint64_t violationEvents = 0;
    SimTime violationTime;
    std::string violation;
    std::string counterexampleJson;
};

// Watches every ->complete of a run (a trace sink): each request completes once per submission, on
// the CPU blk_mq_complete_request() chose: the submitting CPU when it redirected the request there,
// else its own. `problem` holds the first time it did not.
class CompletionWatch : public TraceSink {
public:
    explicit CompletionWatch(const Engine& e)
        : m_engine(e)
    {
    }
    void record(const TraceRecord& r) override;
    // What it remembers of the run so far: part of the state a search compares.
    void hashState(StateHash& h) const { h(m_completed); }
    std::string problem;

private:
    const Engine& m_engine;
    std::vector<bool> m_completed; // by request index, since its last submission
};

class ModelChecker {
public:
    // `scenario`: as loaded; its choices are turned on with bounds.latencyPoints.
    ModelChecker(const Scenario& scenario, CheckProperty property, CheckBounds bounds);
    // "" when the search can end within the bounds; else why not, naming the bounds to set. It runs
    // the first path (every first option) and multiplies the options of its choices within maxDepth:
    // the paths of a tree that branches as that path does.
    std::string tooLarge() const;
    CheckResult run();
    // The violation `e` shows now, in words, or "" (`atEnd`: the run is over; AllComplete is judged then).
    // `seen`: what a CompletionWatch on the run saw (CompleteOnceWhereChosen), "" for nothing.
    static std::string violation(const Engine& e, CheckProperty p, bool atEnd, const std::string& seen = {});

private:
    struct ValueHash {
        std::size_t operator()(const StateHash::Value& v) const noexcept;
    };
    using Visited = std::unordered_map<StateHash::Value, std::uint32_t, ValueHash>;

    Scenario m_scenario;
    CheckProperty m_property;
    CheckBounds m_bounds;
};

} // namespace blkmq
