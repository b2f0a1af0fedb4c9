#pragma once

#include "sim/Result.h"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace blkmq {

// One metric of a sweep against one axis (blkmqlab-cli sweep --chart): a line per combination of
// the other axes, each point the mean over the seeds with its min-max range. Plain data: the CLI
// builds it without Qt and hands it, as JSON, to blkmqlab-chart, which draws it with QCustomPlot.
struct SweepChartLine {
    std::string label; // "kernel.patches.complete-llist=true" (empty: the only line)
    std::vector<double> x, mean, min, max;
};
struct SweepChart {
    std::string title; // the metric
    std::string xLabel, yLabel;
    std::vector<std::string> xTicks; // when the axis is not numeric: its values, at x = 0, 1, ...
    std::vector<SweepChartLine> lines;
    int seeds = 1; // runs per point
};

nlohmann::json toJson(const SweepChart& chart);
// The chart a JSON document describes, as toJson() writes it. An error names the field: a missing
// or mistyped one, lines whose lists differ in length, a number that is not finite, more lines or
// points than a sweep can have (docs/limits.md).
Result<SweepChart> sweepChartFromJson(const nlohmann::json& j);

} // namespace blkmq
