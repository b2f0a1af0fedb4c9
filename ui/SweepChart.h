#pragma once

#include "experiment/SweepChart.h"

#include <string>

namespace blkmq {

// Writes PNG, SVG or PDF (by suffix) at width x height, fonts and lines scaled as the GUI's chart
// exports are (1920x1080 draws a 960x540 chart twice over). Returns an error naming the path, or "".
// Needs no display: it uses Qt's offscreen platform when no application exists.
std::string renderSweepChart(const SweepChart& chart, const std::string& path, int width = 1920, int height = 1080);

} // namespace blkmq
