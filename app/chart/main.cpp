// blkmqlab-chart: draws a chart that blkmqlab-cli describes (sweep --chart) as PNG, SVG or PDF, with
// the GUI's QCustomPlot and fonts, offscreen. The command line links no Qt; this tool does.
//
//   blkmqlab-chart CHART.json OUT.png|OUT.svg|OUT.pdf [--size WIDTHxHEIGHT]
//
// CHART.json is the JSON of experiment/SweepChart.h (- reads standard input). Exit status: 0 the
// picture is written, 1 it could not be written, 2 usage or a bad chart (the message names the field).
#include "SweepChart.h"

#include "io/Limits.h"
#include "io/SafeFile.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

namespace {

int usage(const std::string& why)
{
    std::cerr << "blkmqlab-chart: " << why
              << "\nusage: blkmqlab-chart CHART.json OUT.png|OUT.svg|OUT.pdf [--size WIDTHxHEIGHT]\n";
    return 2;
}

// Standard input, up to `limit` bytes: "" or why not.
std::string readStdin(std::int64_t limit, std::string& text)
{
    char buf[65536];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, stdin)) > 0;) {
        text.append(buf, n);
        if (static_cast<std::int64_t>(text.size()) > limit)
            return "standard input: more than " + std::to_string(limit) + " bytes (docs/limits.md)";
    }
    return std::ferror(stdin) ? "standard input: cannot be read" : "";
}

} // namespace

int main(int argc, char** argv)
{
    const std::vector<std::string> args(argv + 1, argv + argc);
    std::vector<std::string> files;
    int width = 1920, height = 1080;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--size") {
            unsigned w = 0, h = 0;
            int used = 0;
            if (i + 1 >= args.size() || std::sscanf(args[i + 1].c_str(), "%ux%u%n", &w, &h, &used) != 2
                || static_cast<std::size_t>(used) != args[i + 1].size() || w < 320 || h < 200 || w > 8000 || h > 8000)
                return usage("--size needs WIDTHxHEIGHT, each from 320x200 to 8000x8000");
            width = static_cast<int>(w);
            height = static_cast<int>(h);
            ++i;
        } else if (args[i] == "--help" || args[i] == "-h") {
            std::cout << "usage: blkmqlab-chart CHART.json OUT.png|OUT.svg|OUT.pdf [--size WIDTHxHEIGHT]\n"
                         "draws a chart blkmqlab-cli describes (sweep --chart); CHART.json may be - (standard input)\n";
            return 0;
        } else if (args[i].size() > 1 && args[i][0] == '-') {
            return usage("unknown option '" + args[i] + "'");
        } else {
            files.push_back(args[i]);
        }
    }
    if (files.size() != 2)
        return usage("give the chart's JSON and the picture to write");
    std::string text;
    const std::string err = files[0] == "-" ? readStdin(blkmq::limits::kChartBytes, text)
                                            : blkmq::SafeFile::read(files[0], blkmq::limits::kChartBytes, text);
    if (!err.empty())
        return usage(err);
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded())
        return usage(files[0] + ": not JSON");
    const auto chart = blkmq::sweepChartFromJson(j);
    if (!chart)
        return usage(files[0] + ": " + chart.error());
    if (const std::string e = blkmq::renderSweepChart(*chart, files[1], width, height); !e.empty()) {
        std::cerr << "blkmqlab-chart: " << e << '\n';
        return 1;
    }
    return 0;
}
