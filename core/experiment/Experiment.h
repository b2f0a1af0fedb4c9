#pragma once

#include "experiment/BatchRunner.h"
#include "spec/Scenario.h"
#include "sim/Result.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace blkmq {

// One value of an axis: its label and the settings (`path=value`) it applies to the base scenario.
struct AxisPoint {
    std::string label;
    std::vector<std::string> sets;
};

// One dimension of an experiment: seeds (generated on demand, so a stall hunt over a million
// seeds holds none of them), the values of any scenario field or kernel switch by dotted path,
// or named kernel configurations (A/B: each point a list of settings).
class Axis {
public:
    static Axis seeds(std::uint64_t first, std::uint64_t count);
    static Axis values(std::string path, std::vector<std::string> values);
    static Axis configurations(std::string name, std::vector<AxisPoint> points);

    const std::string& name() const { return m_name; }
    std::uint64_t size() const { return m_points.empty() ? m_count : m_points.size(); }
    AxisPoint point(std::uint64_t i) const;

private:
    std::string m_name;
    std::vector<AxisPoint> m_points; // empty for seeds
    std::uint64_t m_first = 0; // seeds
    std::uint64_t m_count = 0;
};

// What one run of an experiment yields: the typed outcome (the summary JSON only with
// keepSummaries) and where in the grid it ran.
struct RunResult : RunOutcome {
    std::uint64_t index = 0; // in the experiment's grid order
    std::vector<std::string> labels; // one per axis
    std::uint64_t seed = 0;
};

// A base scenario and axes; the grid is their product, the last axis varying fastest. Runs go
// through BatchRunner (one engine per run, spread over TBB workers) a chunk at a time, and come
// back in grid order, so the results do not depend on the thread count. Clients: blkmqlab-cli
// explore and sweep, the GUI's A/B comparison.
class Experiment {
public:
    // Builds the base scenario with extra settings applied (e.g. ScenarioLoader over a preset).
    using Loader = std::function<Result<Scenario>(const std::vector<std::string>& sets)>;

    Experiment(Loader base, std::vector<Axis> axes);

    std::uint64_t size() const;
    const std::vector<Axis>& axes() const { return m_axes; }
    std::vector<std::string> labels(std::uint64_t index) const;
    Result<Scenario> scenario(std::uint64_t index) const;

    // A deterministic slice of the grid: the points whose index % count == index (round robin, so
    // the slow and the fast corners of a grid spread over the shards). {0, 1}: all of it.
    struct Shard {
        std::uint64_t index = 0;
        std::uint64_t count = 1;
        // "I/N" with 0 <= I < N; an error names what is wrong with it.
        static Result<Shard> parse(const std::string& text);
        std::uint64_t sizeOf(std::uint64_t gridSize) const;
    };
    struct Options {
        int threads = 0; // <= 0: TBB's default
        bool keepSummaries = false;
        std::size_t chunk = 256; // runs built and held at a time (and ordered by cost within)
        BatchRunner::Schedule schedule = BatchRunner::Schedule::CostFirst;
        Shard shard;
        std::uint64_t skip = 0; // the shard's first points already done (a resumed sweep): not run again
        // The results of the shard's next points from an earlier run that was killed (its journal),
        // in order: given to the sink as they are (labels filled in), not run again.
        std::vector<RunResult> resumed;
        // Called with every result this run computes (not the resumed ones) before the sink takes it:
        // a client's journal.
        std::function<void(const RunResult&)> finished;
        const std::atomic<bool>* stop = nullptr; // set (by a signal): no further run starts
        std::function<void(std::uint64_t done, std::uint64_t total)> progress; // after each chunk
    };
    struct Status {
        std::string error; // "" or the error of the first point whose scenario does not load
        bool interrupted = false; // *stop was set: the results given are a prefix of the grid order
        std::uint64_t done = 0;
    };
    // Calls `sink` with every result of the shard in grid order (nothing of a chunk runs if one of
    // its points does not load). Interrupted, it gives the results up to the first run that did not
    // run, so what a client writes is complete rows in order.
    Status run(const Options& options, const std::function<void(RunResult&&)>& sink) const;
    // The index of the shard's i-th point in the grid.
    static std::uint64_t gridIndex(const Shard& shard, std::uint64_t i) { return shard.index + i * shard.count; }

private:
    Loader m_base;
    std::vector<Axis> m_axes;
};

} // namespace blkmq
