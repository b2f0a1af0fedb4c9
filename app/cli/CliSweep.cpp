// blkmqlab-cli sweep (a grid over scenario fields, kernel switches and seeds, from a sweep file or
// the --vary shorthand) and merge (the shards of one grid, run apart, joined into what one
// unsharded sweep writes). Runs go through core/experiment's Experiment on TBB workers and come
// back in grid order, so every output is the same at any thread count and in any shard split.
#include "Cli.h"
#include "CliJournal.h"
#include "ModelId.h"
#include "CliOptions.h"
#include "CliProgress.h"

#include "experiment/Experiment.h"
#include "experiment/Sweep.h"
#include "io/Limits.h"
#include "io/SafeFile.h"
#include "io/Text.h"
#include "metrics/Format.h"
#include "metrics/Metrics.h"
#include "scenario/ScenarioLoader.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <functional>
#include <cstdlib>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

namespace blkmq::cli {

namespace {

int sweepUsage(const std::string& err)
{
    std::cerr << "blkmqlab-cli sweep: " << err << " (see blkmqlab-cli help)\n";
    return kExitUsage;
}

// blkmqlab-chart, which draws the charts (the command line links no Qt): beside this executable,
// as the build and the install put it, or else on PATH. "" if neither has it.
std::string findChartTool()
{
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        const auto beside = self.parent_path() / "blkmqlab-chart";
        if (::access(beside.c_str(), X_OK) == 0)
            return beside.string();
    }
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "");
    for (std::string dir; std::getline(dirs, dir, ':');)
        if (!dir.empty() && ::access((std::filesystem::path(dir) / "blkmqlab-chart").c_str(), X_OK) == 0)
            return (std::filesystem::path(dir) / "blkmqlab-chart").string();
    return {};
}

// Runs `tool` on the chart (its JSON on the tool's standard input) to write `out`: "" or why not.
std::string drawChart(const std::string& tool, const SweepChart& chart, const std::string& out)
{
    int fds[2];
    if (::pipe(fds) != 0)
        return "cannot start blkmqlab-chart: " + std::string(std::strerror(errno));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[0], STDIN_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[1]);
    std::string dash = "-", target = out;
    char* argv[] = { const_cast<char*>(tool.c_str()), dash.data(), target.data(), nullptr };
    pid_t pid = -1;
    const int spawned = posix_spawn(&pid, tool.c_str(), &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[0]);
    if (spawned != 0) {
        ::close(fds[1]);
        return "cannot start " + tool + ": " + std::strerror(spawned);
    }
    // A tool that stops reading early must not kill this process with SIGPIPE: its status says why.
    struct sigaction ignore {
    }, old {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ignore, &old);
    const std::string text = toJson(chart).dump();
    for (std::size_t done = 0; done < text.size();) {
        const ssize_t n = ::write(fds[1], text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        done += static_cast<std::size_t>(n);
    }
    ::close(fds[1]);
    ::sigaction(SIGPIPE, &old, nullptr);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) { }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return {};
    return "blkmqlab-chart did not write it (" + tool + ", "
        + (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status)) : std::string("killed")) + ")";
}

} // namespace

int sweepCommand(const std::vector<std::string>& args)
{
    InterruptGuard interrupt; // from the start: Ctrl-C while the grid is checked stops it before any run
    ScenarioOptions o;
    std::string vary, csvOut, shardText, chartOut, chartMetric, chartX;
    bool yes = false, resume = false;
    const auto err
        = parseScenarioOptions(args, o, [&](const std::string& a, const NextValue& value, std::string& error) {
              if (a == "--vary") {
                  if (!value(vary) || vary.find('=') == std::string::npos)
                      error = "--vary needs key=v1,v2,...";
                  else
                      error = settingsProblem(a, vary.substr(0, vary.find('=')));
              } else if (a == "--csv") {
                  if (!value(csvOut) || csvOut.empty())
                      error = "--csv needs a file name or -";
              } else if (a == "--shard") {
                  if (!value(shardText))
                      error = "--shard needs I/N";
              } else if (a == "--yes") {
                  yes = true;
              } else if (a == "--resume") {
                  resume = true;
              } else if (a == "--chart" || a == "--metric" || a == "--x") {
                  std::string& target = a == "--chart" ? chartOut : a == "--metric" ? chartMetric : chartX;
                  if (!value(target) || target.empty())
                      error = a == "--chart" ? "--chart needs FILE.png, FILE.svg or FILE.pdf"
                          : a == "--metric"  ? "--metric needs a metric id (blkmqlab-cli metrics)"
                                             : "--x needs the name of an axis";
              } else {
                  return false;
              }
              return true;
          });
    if (!err.empty())
        return sweepUsage(err);
    // A sweep file (it has "axes"), or a scenario (FILE or --preset) with --vary.
    Sweep sweep;
    bool fromFile = false;
    if (o.hasFile && vary.empty()) {
        std::string text;
        if (const std::string e = SafeFile::read(o.file, limits::kScenarioFileBytes, text); !e.empty())
            return sweepUsage(e);
        const auto j = nlohmann::json::parse(text, nullptr, false);
        if (j.is_discarded() || !j.is_object() || !j.contains("axes"))
            return sweepUsage(o.file
                + " is not a sweep file ({\"base\": ..., \"axes\": [...]}; docs/sweep.md); "
                  "a scenario file takes --vary");
        if (!o.preset.empty())
            return sweepUsage("a sweep file names its base: give it or --preset, not both");
        auto parsed = parseSweepFile(o.file, j, o.sets, o.fio);
        if (!parsed)
            return sweepUsage(parsed.error());
        sweep = std::move(*parsed);
        fromFile = true;
    } else {
        if (vary.empty())
            return sweepUsage("give a sweep file, or a scenario with --vary key=v1,v2,...");
        const std::string key = vary.substr(0, vary.find('='));
        std::vector<std::string> values;
        std::stringstream ss(vary.substr(vary.find('=') + 1));
        for (std::string v; std::getline(ss, v, ',');)
            values.push_back(v);
        if (key.empty() || values.empty())
            return sweepUsage(
                "--vary '" + vary + "' names no " + (key.empty() ? "key" : "values") + " (use key=v1,v2,...)");
        if (static_cast<std::int64_t>(values.size()) > limits::kSweepValues)
            return sweepUsage("--vary gives " + std::to_string(values.size()) + " values, more than the limit of "
                + std::to_string(limits::kSweepValues) + " (docs/limits.md)");
        sweep.base = o.hasFile ? o.file : "preset " + (o.preset.empty() ? std::string("default") : o.preset);
        sweep.load = [&o](const std::vector<std::string>& sets) { return o.load(sets); };
        sweep.axes.push_back(Axis::values(key, values));
        sweep.axisSources.push_back({ "--vary", "--vary" });
        sweep.metrics = sweepDefaultMetrics();
        std::string text;
        if (o.hasFile)
            (void)SafeFile::read(o.file, limits::kScenarioFileBytes, text);
        sweep.identity = (o.hasFile ? "file:" + text : "preset:" + (o.preset.empty() ? "default" : o.preset));
        if (!o.fio.empty() && SafeFile::read(o.fio, limits::kScenarioFileBytes, text).empty())
            sweep.identity += "\nfio " + text; // a job file that cannot be read is refused by the first load
        for (const auto& v : o.sets)
            sweep.identity += "\nset " + v;
    }
    finishIdentity(sweep);
    Experiment::Shard shard;
    if (!shardText.empty()) {
        auto s = Experiment::Shard::parse(shardText);
        if (!s)
            return sweepUsage("--shard: " + s.error());
        shard = *s;
    }
    // --chart FILE --metric ID [--x AXIS]: one metric against one axis (default the first that is
    // not the seed).
    int chartMetricIndex = -1;
    std::size_t chartAxis = 0;
    std::string chartTool;
    if (chartOut.empty() && (!chartMetric.empty() || !chartX.empty()))
        return sweepUsage("--metric and --x go with --chart FILE");
    if (!chartOut.empty()) {
        chartTool = findChartTool();
        if (chartTool.empty())
            return sweepUsage("--chart: blkmqlab-chart, which draws the charts, is neither beside blkmqlab-cli nor on "
                              "PATH (it is built and installed with the GUI; BLKMQLAB_BUILD_GUI=OFF builds none)");
        const std::string ext = std::filesystem::path(chartOut).extension().string();
        if (ext != ".png" && ext != ".svg" && ext != ".pdf")
            return sweepUsage("--chart: '" + chartOut + "' is not a .png, .svg or .pdf file");
        if (chartMetric.empty())
            return sweepUsage("--chart needs --metric ID (blkmqlab-cli metrics)");
        chartMetricIndex = findMetric(chartMetric);
        if (chartMetricIndex < 0)
            return sweepUsage("--metric: '" + chartMetric + "' is not a metric id (blkmqlab-cli metrics lists them)");
        if (!shardText.empty())
            return sweepUsage("--chart draws the whole grid: run it unsharded, or merge the shards first");
        std::size_t k = 0;
        if (chartX.empty()) {
            while (k < sweep.axes.size() && sweep.axes[k].name() == "seed")
                ++k;
            if (k == sweep.axes.size())
                return sweepUsage("--chart: every axis is the seed; give the grid an axis to draw against");
        } else {
            while (k < sweep.axes.size() && sweep.axes[k].name() != chartX)
                ++k;
            if (k == sweep.axes.size())
                return sweepUsage("--x: '" + chartX + "' is not an axis of this sweep");
        }
        chartAxis = k;
    }
    const Experiment experiment(sweep.load, sweep.axes);
    const std::uint64_t size = experiment.size();
    if (size > static_cast<std::uint64_t>(limits::kSweepRunsMax))
        return sweepUsage("the grid has " + (size == UINT64_MAX ? std::string("more than 2^64") : std::to_string(size))
            + " runs, more than the limit of " + std::to_string(limits::kSweepRunsMax) + " (docs/limits.md)");
    if (size > static_cast<std::uint64_t>(limits::kSweepRuns) && !yes)
        return sweepUsage("the grid has " + std::to_string(size) + " runs, more than "
            + std::to_string(limits::kSweepRuns)
            + " (docs/limits.md): add --yes to run it, or --shard I/N to run a part");
    if (const std::string e = checkAxes(sweep); !e.empty()) {
        std::cerr << "blkmqlab-cli: " << e << '\n';
        return kExitUsage;
    }
    if (o.jsonOut == "-" && csvOut == "-")
        return sweepUsage("only one of --json and --csv can be - (standard output)");
    if (int code = 0;
        !outputsUsable("sweep", { { "--json", o.jsonOut }, { "--csv", csvOut }, { "--chart", chartOut } }, code))
        return code;
    if (resume && (csvOut.empty() || csvOut == "-"))
        return sweepUsage("--resume continues the CSV of --csv FILE from its journal (FILE.journal)");
    if (resume && (!o.jsonOut.empty() || !chartOut.empty()))
        return sweepUsage("--resume continues the CSV only: --json and --chart need every run, so run them without it");
    const int onStdout = (o.jsonOut == "-") + (csvOut == "-");
    const bool table = onStdout == 0; // the human table on stdout unless a format has it
    const std::string hash = gridHash(sweep);
    std::string csv = csvHeader(sweep);
    const std::string identity = csvIdentity(hash, size, shard.index, shard.count, kModelId);
    Journal journal;
    std::uint64_t resumed = 0;
    if (!csvOut.empty() && csvOut != "-") {
        std::string rows;
        // The journal's rows: the CSV's, each the shard's next grid index with every column. Its first
        // line names the work, so a journal of other work is refused rather than run again.
        const std::size_t fields = csvFieldCount(csv);
        const auto accept = [&](const std::string& line, std::uint64_t n) {
            std::uint64_t index = 0;
            const auto [p, ec] = std::from_chars(line.data(), line.data() + line.size(), index);
            return ec == std::errc() && *p == ',' && index == Experiment::gridIndex(shard, n)
                && csvFieldCount(line) == fields && line.size() > identity.size()
                && line.compare(line.size() - identity.size(), identity.size(), identity) == 0;
        };
        // What the runs depend on, each named when a resumed sweep's differs. The grid's hash covers
        // the base's bytes, --set, the --fio file's bytes, the axes and the columns; the scenario's
        // covers what the base loads to, the job files it includes too.
        std::string fioText;
        if (!o.fio.empty())
            (void)SafeFile::read(o.fio, limits::kScenarioFileBytes, fioText);
        const auto first = experiment.scenario(0);
        const std::vector<JournalPart> parts { { "grid", hash,
                                                   "the grid (its base's bytes, --set, --fio, axes or columns)" },
            { "runs", std::to_string(size), "the number of runs" },
            { "shard", std::to_string(shard.index) + "/" + std::to_string(shard.count), "the shard (--shard)" },
            { "fio", o.fio.empty() ? "none" : journalHash(fioText), "--fio (the job file's bytes)" },
            { "scenario", first.ok() ? journalHash(first->sourceJson) : "none",
                "the scenario the grid's first run loads" },
            { "model", kModelId, "the lab's model (another build of the lab)" } };
        if (const std::string e = journal.open(csvOut + ".journal", "sweep", parts, csv, resume, accept, rows, resumed);
            !e.empty()) {
            std::cerr << "blkmqlab-cli sweep: --csv: " << e << '\n';
            return resume ? kExitUsage : kExitIo;
        }
        csv += rows;
        if (resume && resumed > 0)
            std::cerr << "blkmqlab-cli sweep: resuming after " << resumed << " of " << shard.sizeOf(size)
                      << " runs done\n";
    }
    nlohmann::json doc = { { "base", sweep.base }, { "grid", hash }, { "runs_in_grid", size },
        { "shard", std::to_string(shard.index) + "/" + std::to_string(shard.count) },
        { "runs", nlohmann::json::array() } };
    if (!fromFile) // the --vary form's document, as before: each value with its run summary
        doc = { { "scenario", experiment.scenario(0)->name }, { "vary", sweep.axes.front().name() },
            { "runs", nlohmann::json::array() } };
    if (table) {
        std::cout << "|";
        for (const Axis& a : sweep.axes)
            std::cout << " " << a.name() << " |";
        for (const int c : sweep.metrics)
            std::cout << " " << kMetrics[static_cast<std::size_t>(c)].id << " |";
        std::cout << " stall |\n|";
        for (std::size_t i = 0; i < sweep.axes.size() + sweep.metrics.size() + 1; ++i)
            std::cout << "---|";
        std::cout << "\n";
    }
    bool stalled = false;
    const int threads = o.threads > 0 ? o.threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    Progress progress("sweep");
    Experiment::Options options;
    options.threads = o.threads;
    options.keepSummaries = !fromFile && !o.jsonOut.empty();
    // Chunks long enough that longest-first scheduling evens out an uneven grid (BatchRunner).
    options.chunk = static_cast<std::size_t>(threads) * 16;
    options.shard = shard;
    options.skip = resumed;
    options.stop = interrupt.flag();
    options.progress = [&](std::uint64_t done, std::uint64_t total) { progress.update(done, total); };
    std::vector<ChartPoint> chartPoints;
    const auto status = experiment.run(options, [&](RunResult&& r) {
        stalled |= r.stalled;
        const std::string row = csvRow(sweep, r, identity);
        csv += row;
        journal.append(row);
        if (chartMetricIndex >= 0)
            chartPoints.push_back({ r.labels, r.metrics[static_cast<std::size_t>(chartMetricIndex)] });
        if (table) {
            std::cout << "|";
            for (const auto& l : r.labels)
                std::cout << " " << l << " |";
            for (const int c : sweep.metrics)
                std::cout << " "
                          << formatMetric(kMetrics[static_cast<std::size_t>(c)], r.metrics[static_cast<std::size_t>(c)])
                          << " |";
            std::cout << " " << (r.stalled ? "yes" : "no") << " |\n";
        }
        if (o.jsonOut.empty())
            return;
        if (!fromFile) {
            doc["runs"].push_back({ { "value", r.labels.front() }, { "summary", std::move(r.summary) } });
            return;
        }
        nlohmann::json run = { { "index", r.index }, { "stalled", r.stalled }, { "first_stuck_ns", r.firstStallNs },
            { "fingerprint", r.fingerprint } };
        for (std::size_t k = 0; k < sweep.axes.size(); ++k)
            run["point"][sweep.axes[k].name()] = r.labels[k];
        for (const int c : sweep.metrics)
            run["metrics"][std::string(kMetrics[static_cast<std::size_t>(c)].id)]
                = r.metrics[static_cast<std::size_t>(c)];
        doc["runs"].push_back(std::move(run));
    });
    progress.done();
    if (!status.error.empty()) {
        std::cerr << "blkmqlab-cli: " << status.error << '\n';
        return kExitUsage;
    }
    if (!csvOut.empty()) {
        if (const std::string e = SafeFile::write(csvOut, csv); !e.empty()) {
            std::cerr << "blkmqlab-cli: --csv: " << e << '\n';
            return kExitIo;
        }
        if (!status.interrupted)
            journal.remove(); // an interrupted sweep keeps it: --resume goes on from there
    }
    if (!o.jsonOut.empty())
        if (const std::string e = SafeFile::write(o.jsonOut, doc.dump(2) + "\n"); !e.empty()) {
            std::cerr << "blkmqlab-cli: --json: " << e << '\n';
            return kExitIo;
        }
    if (chartMetricIndex >= 0 && !status.interrupted)
        if (const std::string e
            = drawChart(chartTool, chartOf(sweep, chartAxis, chartMetricIndex, chartPoints), chartOut);
            !e.empty()) {
            std::cerr << "blkmqlab-cli: --chart: " << e << '\n';
            return kExitIo;
        }
    if (!flushStdout())
        return kExitIo;
    if (status.interrupted) {
        std::cerr << "blkmqlab-cli sweep: interrupted after " << status.done << " of " << shard.sizeOf(size)
                  << " runs; the outputs hold those rows\n";
        return kExitInterrupted;
    }
    return o.failOnStall && stalled ? kExitStall : kExitOk;
}

int mergeCommand(const std::vector<std::string>& args)
{
    std::vector<std::string> files;
    std::string out = "-";
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--csv") {
            if (i + 1 >= args.size() || args[i + 1].empty()) {
                std::cerr << "blkmqlab-cli merge: --csv needs a file name or -\n";
                return kExitUsage;
            }
            out = args[++i];
        } else if (!args[i].empty() && args[i][0] == '-') {
            std::cerr << "blkmqlab-cli merge: unknown option '" << args[i] << "' (see blkmqlab-cli help)\n";
            return kExitUsage;
        } else {
            files.push_back(args[i]);
        }
    }
    const auto fail = [](const std::string& why) {
        std::cerr << "blkmqlab-cli merge: " << why << '\n';
        return kExitUsage;
    };
    if (int code = 0; !outputsUsable("merge", { { "--csv", out == "-" ? std::string() : out } }, code))
        return code;
    ShardMerge merge;
    for (const std::string& file : files) {
        std::string text;
        if (const std::string e = SafeFile::read(file, limits::kMergeInputBytes, text); !e.empty())
            return fail(e);
        if (const std::string e = merge.add(file, std::move(text)); !e.empty())
            return fail(e);
    }
    const auto mergedOr = merge.finish();
    if (!mergedOr)
        return fail(mergedOr.error());
    const std::string& merged = *mergedOr;
    if (out == "-") {
        std::cout << merged;
        return flushStdout() ? kExitOk : kExitIo;
    }
    if (const std::string e = SafeFile::write(out, merged); !e.empty()) {
        std::cerr << "blkmqlab-cli: --csv: " << e << '\n';
        return kExitIo;
    }
    return kExitOk;
}

} // namespace blkmq::cli
