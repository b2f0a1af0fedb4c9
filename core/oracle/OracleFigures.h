#pragma once

#include "oracle/OracleCounts.h"
#include "topo/Topology.h"

#include <optional>
#include <string>
#include <vector>

namespace blkmq {

struct FigureValue;
struct OracleTally;

// One figure the oracle derives from both sides' counts. The table (OracleFigures::all) is the
// only list: the report, --json, the case files' bands and docs/validation.md come from it.
struct OracleFigure {
    enum class Kind : std::uint8_t {
        Share, // a percentage; compared in points
        Routes, // for each submitting CPU, the CPUs that complete its requests; compared exactly
        CpuSet, // the CPUs where something happened (each with at least 1% of it); compared as sets
        Ratio, // a count per count; depends on timing (batching), so a case judges it only with a reason
        Layout, // how something is laid out, as text; compared exactly
    };
    const char* id;
    const char* label;
    Kind kind;
    const char* meaning;
    FigureValue (*of)(const OracleTally&);
};

// What the figures are computed from: one side's counts, summed once.
struct OracleTally {
    OracleTally(const OracleCounts& c, const Topology& topo, const std::string& firstDevice);
    std::uint64_t completed = 0, offSubmitter = 0, firstDevice = 0, byDevices = 0;
    std::uint64_t sentBack = 0; // completed on a CPU that took none of the devices' interrupts
    // Over the submitting CPUs (each with at least 1% of the completed requests), each counted once
    // whatever its throughput: the mean % of its requests completed elsewhere, outside its LLC.
    double offSubmitterMean = 0, crossLlcMean = 0;
    std::vector<std::vector<int>> routes; // per submitting CPU, the CPUs with at least 1% of its completions
    std::vector<std::uint64_t> byCompleter, bySubmitter;
    const OracleCounts& counts;
};

// One side's value of a figure: a number, or a set of CPUs.
struct FigureValue {
    std::optional<double> number; // none: not defined (nothing to divide by)
    std::vector<int> cpus;
    std::vector<std::vector<int>> routes; // Routes: per submitting CPU (empty: it submitted nothing)
    std::string layout; // Layout
    std::string text() const;
};

// What a case asks of a figure (tests/oracle/*.json, "figures"): the band and why it is that wide.
struct FigureBand {
    std::optional<double> within; // Share/Ratio: |kernel - lab| at most this
    bool same = false; // CpuSet, Routes, Layout: equal
    std::optional<double> atLeast, atMost; // a bound each side must meet on its own
    std::string why;
    bool judged() const { return within || same || atLeast || atMost; }
};

// One row of the comparison.
struct FigureRow {
    const OracleFigure* figure = nullptr;
    FigureValue kernel, lab;
    FigureBand band;
    bool holds = true; // within its band (true when not judged)
    std::string bandText() const;
};

class OracleFigures {
public:
    static const std::vector<OracleFigure>& all();
    static const OracleFigure* find(const std::string& id);
    // Every figure of the table, with the bands given (by figure id); unknown ids are the caller's to
    // refuse. `firstDevice`: the scenario's first device, for first_device_pct.
    static std::vector<FigureRow> compare(const OracleCounts& kernel, const OracleCounts& lab, const Topology& topo,
        const std::string& firstDevice, const std::vector<std::pair<std::string, FigureBand>>& bands);
};

} // namespace blkmq
