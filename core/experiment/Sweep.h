#pragma once

// A sweep (docs/sweep.md): a grid over scenario fields, kernel switches and seeds, read from a
// sweep file or built from one axis; its CSV, one row per run in grid order, each ending with the
// grid's identity; the merge of the shards of one grid into what one unsharded sweep writes; and
// the chart of one metric against one axis. blkmqlab-cli sweep and merge are these, plus the
// command line and the runs (experiment/Experiment).
#include "experiment/Experiment.h"
#include "experiment/SweepChart.h"
#include "io/FieldTable.h"
#include "sim/Result.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace blkmq {

// One grid: what it runs on, its axes (the last varies fastest) and the metric columns.
struct Sweep {
    std::string base; // in words, for the report
    std::string origin; // a sweep file's "FILE: base" (its errors name the field), or "" for one axis
    Experiment::Loader load;
    std::vector<Axis> axes;
    // Where each axis was given, for messages: the field of its path and of its values ("FILE:
    // axes[0].path", "FILE: axes[0].from..to by step"; the command line's "--vary" for both).
    struct AxisSource {
        std::string path, values;
    };
    std::vector<AxisSource> axisSources;
    std::vector<int> metrics; // indices into kMetrics
    std::string identity; // base, axes and columns as text: its hash names the grid
};

// The sweep file's fields (blkmqlab-cli fields sweep), which its reading checks.
const FieldTable& sweepFields();
// The metric columns of a sweep that names none.
std::vector<int> sweepDefaultMetrics();
// A sweep file's JSON, `path` its name in messages; `sets` (--set) apply after the base's own. A
// `fio` job file (--fio) gives the base its workload, before base.set and --set, as it does a
// scenario (FioJobFile::run); its bytes are part of the grid's identity. An error names the file
// and the field.
Result<Sweep> parseSweepFile(const std::string& path, const nlohmann::json& j, const std::vector<std::string>& sets,
    const std::string& fio = {});
// Appends the axes and the columns to the identity (after the base's part).
void finishIdentity(Sweep& s);
// Every axis value loaded on the base alone: "" or why one is refused, naming the axis's field.
std::string checkAxes(const Sweep& s);
// The grid's name in its outputs (FNV-1a of its identity), so shards of different grids never merge.
std::string gridHash(const Sweep& s);

// The CSV: a header, then one row per run in grid order. Each row ends with the grid's identity:
// the grid (gridHash), its size, the shard and the model that computed the row (a hash of core's
// sources), so that a CSV tool reads the file as it is and the merge refuses rows of another grid
// or build. One unsharded run and the merge of its shards give the same bytes.
std::string csvHeader(const Sweep& s);
std::string csvIdentity(const std::string& grid, std::uint64_t size, std::uint64_t shardIndex, std::uint64_t shards,
    const std::string& model);
std::string csvRow(const Sweep& s, const RunResult& r, const std::string& identity);
// The fields of one CSV line, as the rows quote them (a comma inside quotes is not a separator).
std::size_t csvFieldCount(const std::string& line);

// The shards of one grid, added one file at a time (a file's text is not kept, only its rows),
// merged into the rows one unsharded sweep writes (shard 0/1), in grid order.
class ShardMerge {
public:
    // One shard's CSV (`file`: how messages call it). "" or why it is refused, naming the file and
    // the row: not a sweep's CSV, another grid, build or split, a shard given twice, a row cut
    // short, out of place or repeated, a shard with rows missing.
    std::string add(const std::string& file, std::string text);
    // The merged CSV, or why not: no shard, or shards of the split missing.
    Result<std::string> finish() const;

private:
    std::string m_grid, m_header, m_model;
    std::uint64_t m_runs = 0, m_count = 0;
    std::map<std::uint64_t, std::string> m_shards; // shard index -> file
    std::map<std::uint64_t, std::string> m_rows; // grid index -> the row without its identity
};

// One run's value of the charted metric, and its coordinates (the run's labels, by axis).
struct ChartPoint {
    std::vector<std::string> labels;
    double value;
};
// The metric (an index into kMetrics) against axis `x`: a line per combination of the other axes
// but the seed, each point the mean over the seeds with its min and max.
SweepChart chartOf(const Sweep& s, std::size_t x, int metric, const std::vector<ChartPoint>& points);

} // namespace blkmq
