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
#include "io/Limits.h"
#include "io/SafeFile.h"
#include "io/Text.h"
#include "metrics/Format.h"
#include "metrics/Metrics.h"
#include "scenario/ScenarioLoader.h"

#if BLKMQLAB_CHARTS
#include "SweepChart.h"
#endif

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

#include <unistd.h>

namespace blkmq::cli {

namespace {

// One grid: what it runs on, its axes (the last varies fastest) and the metric columns.
struct Sweep {
    std::string base; // in words, for the report
    std::string origin; // a sweep file's "FILE: base" (its errors name the field), or "" for --vary
    Experiment::Loader load;
    std::vector<Axis> axes;
    std::vector<std::string>
        axisFields; // a sweep file's, where each axis's values come from: "values", "from..to by step"
    std::vector<int> metrics; // indices into kMetrics
    std::string identity; // base, axes and columns as text: its hash names the grid
};

constexpr int kDefaultColumns[] = { metricIndex("iops"), metricIndex("lat_p99_ns"), metricIndex("remote_pct"),
    metricIndex("ipis_per_s"), metricIndex("ksoftirqd_wakeups_per_s"), metricIndex("restart_cpu_pct") };

std::string hex64(std::uint64_t v)
{
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
}

// FNV-1a: the grid's name in its outputs, so shards of different grids are never merged.
std::string gridHash(const Sweep& s)
{
    std::uint64_t h = 1469598103934665603ULL;
    for (const unsigned char c : s.identity) {
        h ^= c;
        h *= 1099511628211ULL;
    }
    return hex64(h);
}

// The shortest text that reads back as the same double: the same bytes on every machine and run.
std::string number(double v)
{
    if (std::isnan(v))
        return "nan";
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

// An axis value as a --set value (JSON) and as a label (a string without its quotes).
std::string label(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

} // namespace

const FieldTable& sweepFields()
{
    static const FieldTable table { "sweep",
        {
            { "base", "string or object", "a preset name, or one of preset, file, scenario (default: default)" },
            { "base.preset", "string", "a preset name (blkmqlab-cli presets)" },
            { "base.file", "path", "a scenario file, relative to the sweep file" },
            { "base.scenario", "object", "a scenario (blkmqlab-cli fields scenario)" },
            { "base.set", "array", "path=value overrides (--set syntax)" },
            { "axes", "array", "required, not empty" },
            { "axes[].path", "string", "a scenario field or kernel switch, no commas or quotes" },
            { "axes[].values", "array",
                "numbers, strings or true/false; at most " + std::to_string(limits::kSweepValues) },
            { "axes[].from", "number", "with to: a range" },
            { "axes[].to", "number", "from or more" },
            { "axes[].step", "number", "more than 0 (a linear range)" },
            { "axes[].factor", "number", "more than 1 (a log range, from > 0)" },
            { "metrics", "array", "metric ids (blkmqlab-cli metrics)" },
            { "comment", "text", "anything, for the reader" },
        } };
    return table;
}

namespace {

Result<Axis> parseAxis(const nlohmann::json& a, const std::string& where)
{
    using R = Result<Axis>;
    if (!a.is_object())
        return R::failure(where + ": an axis is an object such as {\"path\": \"seed\", \"values\": [1, 2]}");
    if (const std::string why = sweepFields().unknownKey(a, "axes[]", where); !why.empty())
        return R::failure(why);
    if (!a.contains("path") || !a["path"].is_string() || a["path"].get<std::string>().empty())
        return R::failure(where + ".path: the dotted path of a scenario field or kernel switch is required");
    const std::string path = a["path"];
    // The path names a CSV column: a comma, a quote or a control character would break the file.
    if (std::any_of(path.begin(), path.end(),
            [](char c) { return c == ',' || c == '"' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }))
        return R::failure(where + ".path: a dotted path has no commas, quotes or control characters");
    std::vector<nlohmann::json> values;
    if (a.contains("values")) {
        if (a.contains("from") || a.contains("to") || a.contains("step") || a.contains("factor"))
            return R::failure(where + ": give values or a range (from, to, step or factor), not both");
        if (!a["values"].is_array() || a["values"].empty())
            return R::failure(where + ".values: a non-empty list is required");
        for (std::size_t i = 0; i < a["values"].size(); ++i) {
            const auto& v = a["values"][i];
            if (!v.is_primitive() || v.is_null())
                return R::failure(where + ".values[" + std::to_string(i) + "]: a number, string or true/false");
            for (std::size_t k = 0; k < values.size(); ++k)
                if (values[k] == v)
                    return R::failure(where + ".values[" + std::to_string(i) + "]: repeats values[" + std::to_string(k)
                        + "] (each value is one column of runs)");
            values.push_back(v);
        }
    } else {
        for (const char* k : { "from", "to" })
            if (!a.contains(k) || !a[k].is_number())
                return R::failure(where + "." + k + ": a number is required (or give values)");
        if (a.contains("step") && a.contains("factor"))
            return R::failure(where + ": give step (a linear range) or factor (a log range), not both");
        const double from = a["from"], to = a["to"];
        const bool integral = a["from"].is_number_integer() && a["to"].is_number_integer()
            && (!a.contains("step") || a["step"].is_number_integer()) && !a.contains("factor");
        if (to < from)
            return R::failure(where + ".to: the range " + number(from) + " to " + number(to) + " is empty (from > to)");
        const auto push = [&](double v) {
            if (integral || (a.contains("factor") && a["from"].is_number_integer() && a["factor"].is_number_integer()))
                values.emplace_back(static_cast<std::int64_t>(std::llround(v)));
            else
                values.emplace_back(v);
        };
        if (a.contains("factor")) {
            if (!a["factor"].is_number() || a["factor"].get<double>() <= 1 || from <= 0)
                return R::failure(where + ".factor: a log range needs factor > 1 and from > 0");
            const double f = a["factor"];
            for (double v = from; v <= to * (1 + 1e-12) && values.size() <= limits::kSweepValues; v *= f)
                push(v);
        } else {
            if (a.contains("step") && (!a["step"].is_number() || !(a["step"].get<double>() > 0)))
                return R::failure(where + ".step: a positive number is required");
            const double step = a.contains("step") ? a["step"].get<double>() : 1.0;
            // How many values, counted once: a loop adding steps to 1e300 would never reach `to`.
            const double span = (to - from) / step;
            if (!(span < static_cast<double>(limits::kSweepValues)))
                return R::failure(where + ".to: the range gives more than " + std::to_string(limits::kSweepValues)
                    + " values, the limit of an axis (docs/limits.md)");
            const auto count = static_cast<std::int64_t>(std::floor(span + 1e-9)) + 1;
            for (std::int64_t i = 0; i < count; ++i) {
                const double v = from + static_cast<double>(i) * step;
                if (i > 0 && v == from + static_cast<double>(i - 1) * step)
                    return R::failure(where + ".step: " + number(step) + " is below the precision of " + number(from)
                        + ": the values would repeat");
                push(v);
            }
        }
    }
    if (static_cast<std::int64_t>(values.size()) > limits::kSweepValues)
        return R::failure(where + (a.contains("values") ? ".values" : ".to") + ": " + std::to_string(values.size())
            + " values, more than the limit of " + std::to_string(limits::kSweepValues) + " (docs/limits.md)");
    std::vector<AxisPoint> points;
    for (const auto& v : values)
        points.push_back({ label(v), { path + "=" + v.dump() } });
    return Axis::configurations(path, std::move(points));
}

// A sweep file (docs/sweep.md): {"base": ..., "axes": [...], "metrics": [...]}.
Result<Sweep> parseSweepFile(const std::string& path, const nlohmann::json& j, const std::vector<std::string>& sets)
{
    using R = Result<Sweep>;
    // Labels reach the terminal and the CSV: no control characters (io/Text.h), but in the comment.
    if (const std::string why = jsonTextProblem(j, { "comment" }); !why.empty())
        return R::failure(path + ": " + why);
    if (const std::string why = sweepFields().unknownKey(j, "", ""); !why.empty())
        return R::failure(path + ": " + why);
    if (j.contains("comment") && !j["comment"].is_string())
        return R::failure(path + ": comment: must be a string (text for the reader)");
    Sweep s;
    // The base: a preset name, {"preset", "set"}, {"file", "set"} or {"scenario": {...}, "set"}.
    const nlohmann::json base = j.contains("base") ? j["base"] : nlohmann::json("default");
    const std::string baseForms = path
        + ": base: a preset name, {\"preset\": NAME}, {\"file\": PATH} or {\"scenario\": {...}}, "
          "each with an optional \"set\" list";
    if (base.is_object()) {
        int forms = 0;
        if (const std::string why = sweepFields().unknownKey(base, "base", "base"); !why.empty())
            return R::failure(path + ": " + why);
        for (const auto& item : base.items())
            forms += item.key() != "set" ? 1 : 0;
        if (forms != 1)
            return R::failure(baseForms);
        if ((base.contains("preset") && !base["preset"].is_string())
            || (base.contains("file") && !base["file"].is_string())
            || (base.contains("scenario") && !base["scenario"].is_object()))
            return R::failure(baseForms);
    } else if (!base.is_string()) {
        return R::failure(baseForms);
    }
    std::vector<std::string> baseSets;
    if (base.is_object() && base.contains("set")) {
        if (!base["set"].is_array())
            return R::failure(path + ": base.set: a list of \"path=value\" strings");
        for (const auto& v : base["set"]) {
            if (!v.is_string())
                return R::failure(path + ": base.set: a list of \"path=value\" strings");
            baseSets.push_back(v);
        }
    }
    baseSets.insert(baseSets.end(), sets.begin(), sets.end());
    std::string identity;
    if (base.is_string() || (base.is_object() && base.contains("preset"))) {
        const std::string name = base.is_string() ? base.get<std::string>() : base["preset"].get<std::string>();
        s.base = "preset " + name;
        s.origin = path + (base.is_string() ? ": base" : ": base.preset");
        identity = "preset:" + name;
        s.load = [name, baseSets](const std::vector<std::string>& more) {
            auto all = baseSets;
            all.insert(all.end(), more.begin(), more.end());
            return ScenarioLoader::fromPreset(name, all);
        };
    } else if (base.is_object() && base.contains("file") && base["file"].is_string()) {
        std::filesystem::path file = base["file"].get<std::string>();
        if (file.is_relative()) // beside the sweep file
            file = std::filesystem::path(path).parent_path() / file;
        std::string text;
        if (const std::string err = SafeFile::read(file.string(), limits::kScenarioFileBytes, text); !err.empty())
            return R::failure(path + ": base.file: " + err);
        s.base = file.string();
        s.origin = path + ": base.file";
        identity = "file:" + text;
        const std::string name = file.stem().string();
        s.load = [text, name, baseSets](const std::vector<std::string>& more) {
            auto all = baseSets;
            all.insert(all.end(), more.begin(), more.end());
            return ScenarioLoader::fromText(text, name, all);
        };
    } else if (base.is_object() && base.contains("scenario") && base["scenario"].is_object()) {
        const std::string text = base["scenario"].dump();
        s.base = "the scenario in " + path;
        s.origin = path + ": base.scenario";
        identity = "scenario:" + text;
        s.load = [text, baseSets](const std::vector<std::string>& more) {
            auto all = baseSets;
            all.insert(all.end(), more.begin(), more.end());
            return ScenarioLoader::fromText(text, "sweep", all);
        };
    } else {
        return R::failure(path
            + ": base: a preset name, {\"preset\": NAME}, {\"file\": PATH} or {\"scenario\": {...}}, "
              "each with an optional \"set\" list");
    }
    for (const auto& v : baseSets)
        identity += "\nset " + v;
    if (!j.contains("axes") || !j["axes"].is_array() || j["axes"].empty())
        return R::failure(path + ": axes: a non-empty list of axes is required");
    for (std::size_t i = 0; i < j["axes"].size(); ++i) {
        auto axis = parseAxis(j["axes"][i], path + ": axes[" + std::to_string(i) + "]");
        if (!axis)
            return R::failure(axis.error());
        s.axes.push_back(std::move(*axis));
        const auto& a = j["axes"][i];
        s.axisFields.push_back(a.contains("values") ? "values"
                : a.contains("step")                ? "from..to by step"
                : a.contains("factor")              ? "from..to by factor"
                                                    : "from..to");
    }
    if (j.contains("metrics")) {
        if (!j["metrics"].is_array() || j["metrics"].empty())
            return R::failure(path + ": metrics: a non-empty list of metric ids (blkmqlab-cli metrics)");
        for (const auto& m : j["metrics"]) {
            const int i = m.is_string() ? findMetric(m.get<std::string>()) : -1;
            if (i < 0)
                return R::failure(path + ": metrics: '" + (m.is_string() ? m.get<std::string>() : m.dump())
                    + "' is not a metric id (blkmqlab-cli metrics lists them)");
            if (std::find(s.metrics.begin(), s.metrics.end(), i) != s.metrics.end())
                return R::failure(path + ": metrics: '" + m.get<std::string>() + "' is named twice");
            s.metrics.push_back(i);
        }
    } else {
        s.metrics.assign(std::begin(kDefaultColumns), std::end(kDefaultColumns));
    }
    s.identity = identity;
    return s;
}

void finishIdentity(Sweep& s)
{
    for (const Axis& a : s.axes) {
        s.identity.append("\naxis ").append(a.name());
        for (std::uint64_t i = 0; i < a.size(); ++i)
            s.identity.append(i ? "," : "=").append(a.point(i).label);
    }
    s.identity += "\ncolumns";
    for (const int m : s.metrics)
        s.identity.append(" ").append(kMetrics[static_cast<std::size_t>(m)].id);
}

// What the loader says of a --set path that names no field (ScenarioLoader's override messages).
constexpr const char* kPathProblems[]
    = { "unknown key", "unknown patch id", "no element with that index", "empty component", "expected key=value" };

// Every axis value on the base alone: an unknown path or a bad value is refused before anything runs.
std::string checkAxes(const Sweep& s)
{
    if (auto base = s.load({}); !base)
        return s.origin.empty() ? base.error() : s.origin + ": " + base.error();
    const std::string file = s.origin.substr(0, s.origin.rfind(": base"));
    for (std::size_t k = 0; k < s.axes.size(); ++k)
        for (std::uint64_t i = 0; i < s.axes[k].size(); ++i)
            if (auto sc = s.load(s.axes[k].point(i).sets); !sc) {
                // A path the scenario does not have is the axis's path field; a value it refuses, the axis's.
                const std::string& e = sc.error();
                const bool badPath = std::any_of(std::begin(kPathProblems), std::end(kPathProblems),
                    [&](const char* p) { return e.find(p) != std::string::npos; });
                const std::string axis = k < s.axisFields.size()
                    ? file + ": axes[" + std::to_string(k) + "]." + (badPath ? "path" : s.axisFields[k])
                    : std::string("--vary");
                if (badPath)
                    return axis + ": " + e;
                return axis + " (" + printable(s.axes[k].name()) + " = " + printable(s.axes[k].point(i).label)
                    + "): " + e;
            }
    return {};
}

// The CSV (docs/sweep.md): a header, then one row per run in grid order. Each row ends with the
// grid's identity: the grid (a hash of its base, axes and columns), its size, the shard and the model
// that computed the row (kModelId, a hash of core's sources), so that a CSV tool reads the file as it
// is and merge refuses rows of another grid or build. One unsharded run and the merge of its shards
// write the same bytes.
std::string csvHeader(const Sweep& s)
{
    std::string out = "index";
    for (const Axis& a : s.axes)
        out.append(",").append(a.name());
    for (const int m : s.metrics)
        out.append(",").append(kMetrics[static_cast<std::size_t>(m)].id);
    return out + ",stalled,first_stuck_ns,fingerprint,grid,grid_runs,shard,model\n";
}

std::string csvIdentity(const std::string& hash, std::uint64_t size, std::uint64_t shardIndex, std::uint64_t shards,
    const std::string& model)
{
    return hash + "," + std::to_string(size) + "," + std::to_string(shardIndex) + "/" + std::to_string(shards) + ","
        + model;
}

std::string csvField(const std::string& v)
{
    if (v.find_first_of(",\"\n") == std::string::npos)
        return v;
    std::string out = "\"";
    for (const char c : v)
        out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

std::string csvRow(const Sweep& s, const RunResult& r, const std::string& identity)
{
    std::string out = std::to_string(r.index);
    for (const auto& l : r.labels)
        out.append(",").append(csvField(l));
    for (const int m : s.metrics)
        out.append(",").append(number(r.metrics[static_cast<std::size_t>(m)]));
    return out.append(r.stalled ? ",1," : ",0,")
        .append(std::to_string(r.firstStallNs))
        .append(",")
        .append(r.fingerprint)
        .append(",")
        .append(identity)
        .append("\n");
}

// The fields of one CSV line, as csvField() quotes them (a comma inside quotes is not a separator).
std::size_t csvFieldCount(const std::string& line)
{
    std::size_t n = 1;
    bool quoted = false;
    for (const char c : line) {
        if (c == '"')
            quoted = !quoted;
        else if (c == ',' && !quoted)
            ++n;
    }
    return n;
}

// One point of a chart: the run's value of the charted metric, and its coordinates.
struct ChartPoint {
    std::vector<std::string> labels;
    double value;
};

#if BLKMQLAB_CHARTS
// The metric against axis `x`: a line per combination of the other axes but the seed, each point
// the mean over the seeds with its min and max.
SweepChart chartOf(const Sweep& s, std::size_t x, int metric, const std::vector<ChartPoint>& points)
{
    const Metric& m = kMetrics[static_cast<std::size_t>(metric)];
    const UnitInfo& unit = unitInfo(m.unit);
    SweepChart chart;
    chart.title = std::string(m.label);
    chart.xLabel = s.axes[x].name();
    chart.yLabel = std::string(m.label) + (std::string(unit.axis).empty() ? "" : " (" + std::string(unit.axis) + ")");
    bool numeric = true;
    std::vector<double> xs;
    for (std::uint64_t i = 0; i < s.axes[x].size(); ++i) {
        const std::string l = s.axes[x].point(i).label;
        char* end = nullptr;
        const double v = std::strtod(l.c_str(), &end);
        numeric &= !l.empty() && end && *end == '\0';
        xs.push_back(v);
    }
    if (!numeric) {
        for (std::uint64_t i = 0; i < s.axes[x].size(); ++i) {
            chart.xTicks.push_back(s.axes[x].point(i).label);
            xs[i] = static_cast<double>(i);
        }
    }
    std::map<std::string, std::size_t> xIndex;
    for (std::uint64_t i = 0; i < s.axes[x].size(); ++i)
        xIndex[s.axes[x].point(i).label] = static_cast<std::size_t>(i);
    // line key -> x -> values over the seeds
    std::map<std::string, std::map<std::size_t, std::vector<double>>> lines;
    std::vector<std::string> order;
    for (const ChartPoint& p : points) {
        std::string key;
        for (std::size_t k = 0; k < s.axes.size(); ++k)
            if (k != x && s.axes[k].name() != "seed")
                key += (key.empty() ? "" : ", ") + s.axes[k].name() + "=" + p.labels[k];
        if (!lines.count(key))
            order.push_back(key);
        lines[key][xIndex[p.labels[x]]].push_back(p.value * unit.plotScale);
    }
    for (const std::string& key : order) {
        SweepChartLine line;
        line.label = key;
        for (const auto& [xi, values] : lines[key]) {
            double sum = 0;
            for (const double v : values)
                sum += v;
            line.x.push_back(xs[xi]);
            line.mean.push_back(sum / static_cast<double>(values.size()));
            line.min.push_back(*std::min_element(values.begin(), values.end()));
            line.max.push_back(*std::max_element(values.begin(), values.end()));
            chart.seeds = static_cast<int>(values.size());
        }
        chart.lines.push_back(std::move(line));
    }
    return chart;
}
#endif

int sweepUsage(const std::string& err)
{
    std::cerr << "blkmqlab-cli sweep: " << err << " (see blkmqlab-cli help)\n";
    return kExitUsage;
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
        auto parsed = parseSweepFile(o.file, j, o.sets);
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
        sweep.metrics.assign(std::begin(kDefaultColumns), std::end(kDefaultColumns));
        std::string text;
        if (o.hasFile)
            (void)SafeFile::read(o.file, limits::kScenarioFileBytes, text);
        sweep.identity = (o.hasFile ? "file:" + text : "preset:" + (o.preset.empty() ? "default" : o.preset));
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
    [[maybe_unused]] std::size_t chartAxis = 0; // read only where the build has charts
    if (chartOut.empty() && (!chartMetric.empty() || !chartX.empty()))
        return sweepUsage("--metric and --x go with --chart FILE");
    if (!chartOut.empty()) {
#if !BLKMQLAB_CHARTS
        return sweepUsage("--chart: this build has no charts (it was built without the GUI, BLKMQLAB_BUILD_GUI=OFF)");
#endif
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
        const std::string preamble = "# blkmqlab-cli sweep journal " + identity + "\n" + csv;
        if (const std::string e = journal.open(csvOut + ".journal", preamble, resume, accept, rows, resumed);
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
#if BLKMQLAB_CHARTS
    if (chartMetricIndex >= 0 && !status.interrupted)
        if (const std::string e = renderSweepChart(chartOf(sweep, chartAxis, chartMetricIndex, chartPoints), chartOut);
            !e.empty()) {
            std::cerr << "blkmqlab-cli: --chart: " << e << '\n';
            return kExitIo;
        }
#endif
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
    if (files.empty())
        return fail("give the CSV files of a sharded sweep (sweep --shard I/N --csv FILE)");
    if (int code = 0; !outputsUsable("merge", { { "--csv", out == "-" ? std::string() : out } }, code))
        return code;
    static const std::string kIdentityColumns = ",grid,grid_runs,shard,model";
    std::string grid, header, model;
    std::uint64_t runs = 0, count = 0;
    std::map<std::uint64_t, std::string> shards; // shard index -> file
    std::map<std::uint64_t, std::string> rows; // grid index -> the row without its identity
    for (const std::string& file : files) {
        std::string text;
        if (const std::string e = SafeFile::read(file, limits::kMergeInputBytes, text); !e.empty())
            return fail(e);
        if (!text.empty() && text.back() != '\n')
            return fail(file + ": its last row is cut short (was it interrupted?)");
        // A shard that went through Windows: CR LF line ends read as LF.
        text.erase(std::remove(text.begin(), text.end(), '\r'), text.end());
        std::istringstream in(text);
        std::string head;
        std::getline(in, head);
        if (head.rfind("index,", 0) != 0 || head.size() < kIdentityColumns.size()
            || head.compare(head.size() - kIdentityColumns.size(), kIdentityColumns.size(), kIdentityColumns) != 0)
            return fail(file
                + ": not the CSV of blkmqlab-cli sweep (its header starts with index and ends with grid, grid_runs, "
                  "shard and model)");
        if (header.empty())
            header = head;
        else if (header != head)
            return fail(file + ": its column header differs from " + shards.begin()->second + "'s");
        const std::size_t fields = csvFieldCount(header);
        std::string identity; // the file's, from its first row: every row must carry the same
        std::uint64_t si = 0, sn = 0, n = 0;
        for (std::string line; std::getline(in, line); ++n) {
            // The identity: the last four fields, which never need quotes.
            std::size_t cut = line.size();
            for (int k = 0; k < 4 && cut != std::string::npos; ++k)
                cut = cut == 0 ? std::string::npos : line.rfind(',', cut - 1);
            if (cut == std::string::npos || csvFieldCount(line) != fields)
                return fail(file + ": row " + std::to_string(n + 1) + " has not the header's columns");
            const std::string id = line.substr(cut + 1);
            if (n == 0) {
                char g[17] = {}, m[17] = {};
                unsigned long long r = 0, i = 0, c = 0;
                int used = 0;
                if (std::sscanf(id.c_str(), "%16[0-9a-f],%llu,%llu/%llu,%16[0-9a-f]%n", g, &r, &i, &c, m, &used) != 5
                    || static_cast<std::size_t>(used) != id.size() || c == 0 || i >= c)
                    return fail(file + ": row 1 does not end with a grid, its size, a shard I/N and a model");
                if (r > static_cast<unsigned long long>(limits::kSweepRunsMax) || c > r)
                    return fail(file + ": row 1 says grid_runs=" + std::to_string(r) + " shard=" + std::to_string(i)
                        + "/" + std::to_string(c) + ", which no sweep writes (at most "
                        + std::to_string(limits::kSweepRunsMax) + " runs, at most one shard per run)");
                identity = id;
                si = i;
                sn = c;
                if (grid.empty()) {
                    grid = g;
                    runs = r;
                    count = c;
                    model = m;
                } else if (model != m) {
                    return fail(file + ": computed by another build of the lab (model=" + m + ", not model=" + model
                        + " as " + shards.begin()->second + "): rerun its shards with one build");
                } else if (grid != g || runs != r) {
                    return fail(file + ": a shard of another grid (grid=" + g + " grid_runs=" + std::to_string(r)
                        + ", not grid=" + grid + " grid_runs=" + std::to_string(runs)
                        + "): merge the shards of one sweep");
                } else if (count != c) {
                    return fail(file + ": a shard of a split into " + std::to_string(c) + ", the others are of "
                        + std::to_string(count));
                }
                if (!shards.emplace(si, file).second)
                    return fail(file + ": shard " + std::to_string(si) + "/" + std::to_string(sn)
                        + " is given twice (also " + shards[si] + ")");
            } else if (id != identity) {
                return fail(file + ": row " + std::to_string(n + 1) + " is of another grid, shard or model than row 1");
            }
            std::uint64_t index = 0;
            const auto [p, ec] = std::from_chars(line.data(), line.data() + line.size(), index);
            if (ec != std::errc() || *p != ',' || index >= runs || index % sn != si)
                return fail(file + ": row " + std::to_string(n + 1) + " is not a row of shard " + std::to_string(si)
                    + "/" + std::to_string(sn));
            if (!rows.emplace(index, line.substr(0, cut)).second)
                return fail(file + ": the row of run " + std::to_string(index) + " is there twice (row "
                    + std::to_string(n + 1) + ")");
        }
        if (n == 0)
            return fail(file + ": it has no rows (was it interrupted?)");
        const Experiment::Shard shard { si, sn };
        if (n != shard.sizeOf(runs))
            return fail(file + ": shard " + std::to_string(si) + "/" + std::to_string(sn) + " has " + std::to_string(n)
                + " of its " + std::to_string(shard.sizeOf(runs)) + " rows (was it interrupted?)");
    }
    if (shards.size() != count) {
        std::string missing;
        for (std::uint64_t i = 0; i < count; ++i)
            if (!shards.count(i))
                missing += (missing.empty() ? "" : ", ") + std::to_string(i) + "/" + std::to_string(count);
        return fail("shard(s) " + missing + " missing");
    }
    // The rows as one unsharded sweep writes them: shard 0/1.
    const std::string identity = csvIdentity(grid, runs, 0, 1, model);
    std::string merged = header + "\n";
    for (const auto& [index, row] : rows)
        merged.append(row).append(",").append(identity).append("\n");
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
