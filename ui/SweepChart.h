#pragma once

#include <string>
#include <vector>

namespace blkmq {

// One metric of a sweep against one axis (blkmqlab-cli sweep --chart): a line per combination of
// the other axes, each point the mean over the seeds with its min-max range. Plain data, so the
// CLI builds it without Qt; renderSweepChart draws it with QCustomPlot offscreen.
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

// Writes PNG, SVG or PDF (by suffix) at width x height, fonts and lines scaled as the GUI's chart
// exports are (1920x1080 draws a 960x540 chart twice over). Returns an error naming the path, or "".
// Needs no display: it uses Qt's offscreen platform when no application exists.
std::string renderSweepChart(const SweepChart& chart, const std::string& path, int width = 1920, int height = 1080);

} // namespace blkmq
