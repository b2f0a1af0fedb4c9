#include "io/Outputs.h"

#include "io/SafeFile.h"

#include <algorithm>
#include <cstring>

namespace blkmq {

const std::vector<OutputOption>& outputOptions()
{
    static const std::vector<OutputOption> table {
        { "run", "--json", "the run summary" },
        { "run", "--csv", "the time series" },
        { "run", "--trace", "a Perfetto (Chrome trace-event) trace" },
        { "run", "--save-session", "the run where it stopped, as a session file (.blkmqlab)" },
        { "explore", "--json", "the per-variant verdicts and seeds" },
        { "explore", "--save-counterexample", "the earliest stall as a scenario, or (.blkmqlab) a session at it" },
        { "check", "--json", "the verdict, the search's counts and the counterexample's choices" },
        { "check", "--save-counterexample", "the shortest violation as a scenario, or (.blkmqlab) a session at it" },
        { "sweep", "--json", "every run's summary" },
        { "sweep", "--csv", "one row per run" },
        { "sweep", "--chart", "a chart of one metric (PNG, SVG or PDF)" },
        { "merge", "--csv", "the merged CSV" },
        { "ab", "--json", "A and B per metric" },
        { "oracle", "--json", "both sides' figures and the bands" },
        { "oracle", "--console", "the guest's whole console" },
        { "blkmqlab", "--screenshot", "the window as PNG" },
        { "blkmqlab", "--export-chart", "the charts (PNG, SVG or PDF)" },
    };
    return table;
}

std::string checkOutputs(
    const std::string& command, const std::vector<std::pair<std::string, std::string>>& outputs, int& exitCode)
{
    std::vector<std::pair<std::string, std::string>> given; // option, identity
    for (const auto& output : outputs) {
        const std::string& option = output.first;
        const std::string& path = output.second;
        const bool known = std::any_of(outputOptions().begin(), outputOptions().end(),
            [&](const OutputOption& o) { return command == o.command && option == o.option; });
        if (!known) {
            exitCode = 2;
            return option + ": not an output of " + command + " (io/Outputs.cpp lists them)";
        }
        if (path.empty())
            continue;
        if (const std::string e = SafeFile::checkWritable(path); !e.empty()) {
            exitCode = 1;
            return option + ": " + e;
        }
        const std::string id = SafeFile::identity(path);
        for (const auto& [other, otherId] : given)
            if (!id.empty() && id == otherId) {
                exitCode = 2;
                return other + " and " + option + " would write the same file"
                    + (path == "-" || path.rfind("/dev/std", 0) == 0 || path.rfind("/proc/self/fd/", 0) == 0
                                || path.rfind("/dev/fd/", 0) == 0
                            ? std::string(" (standard output, or the file behind it)")
                            : " ('" + path + "')")
                    + ": give each its own";
            }
        given.emplace_back(option, id);
    }
    exitCode = 0;
    return {};
}

} // namespace blkmq
