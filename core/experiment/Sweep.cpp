#include "experiment/Sweep.h"

#include "io/Limits.h"
#include "io/SafeFile.h"
#include "io/Text.h"
#include "metrics/Metrics.h"
#include "scenario/FioJobFile.h"
#include "scenario/ScenarioLoader.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <sstream>

namespace blkmq {

namespace {

constexpr int kDefaultColumns[] = { metricIndex("iops"), metricIndex("lat_p99_ns"), metricIndex("remote_pct"),
    metricIndex("ipis_per_s"), metricIndex("ksoftirqd_wakeups_per_s"), metricIndex("restart_cpu_pct") };

std::string hex64(std::uint64_t v)
{
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
}

} // namespace

std::string gridHash(const Sweep& s) // FNV-1a
{
    std::uint64_t h = 1469598103934665603ULL;
    for (const unsigned char c : s.identity) {
        h ^= c;
        h *= 1099511628211ULL;
    }
    return hex64(h);
}

namespace {

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

std::vector<int> sweepDefaultMetrics() { return { std::begin(kDefaultColumns), std::end(kDefaultColumns) }; }

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

} // namespace

// A sweep file (docs/sweep.md): {"base": ..., "axes": [...], "metrics": [...]}.
Result<Sweep> parseSweepFile(
    const std::string& path, const nlohmann::json& j, const std::vector<std::string>& sets, const std::string& fio)
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
    // The base's loader with every setting: a --fio job file's first (as ScenarioOptions::load applies
    // it), then base.set and --set, then the axes' values (`more`).
    const auto loadBase = [&](std::function<Result<Scenario>(const std::vector<std::string>&)> from) {
        s.load = [from, baseSets, fio](const std::vector<std::string>& more) -> Result<Scenario> {
            const auto loadWith = [&](const std::vector<std::string>& before) {
                auto all = before;
                all.insert(all.end(), baseSets.begin(), baseSets.end());
                all.insert(all.end(), more.begin(), more.end());
                return from(all);
            };
            if (fio.empty())
                return loadWith({});
            const Result<Scenario> plain = from({});
            if (!plain.ok())
                return plain;
            return FioJobFile::run(fio, plain.value(), loadWith, "--fio: ");
        };
    };
    if (base.is_string() || (base.is_object() && base.contains("preset"))) {
        const std::string name = base.is_string() ? base.get<std::string>() : base["preset"].get<std::string>();
        s.base = "preset " + name;
        s.origin = path + (base.is_string() ? ": base" : ": base.preset");
        identity = "preset:" + name;
        loadBase([name](const std::vector<std::string>& all) { return ScenarioLoader::fromPreset(name, all); });
    } else if (base.is_object() && base.contains("file") && base["file"].is_string()) {
        std::filesystem::path file = base["file"].get<std::string>();
        if (file.is_relative()) // beside the sweep file
            file = std::filesystem::path(path).parent_path() / file;
        std::string text;
        if (const std::string err = SafeFile::read(file.string(), limits::kScenarioFileBytes, text); !err.empty())
            return R::failure(path + ": base.file: " + err);
        s.base = terminalSafe(file.string()); // a name, its bytes that are not UTF-8 as \xNN
        s.origin = path + ": base.file";
        identity = "file:" + text;
        const std::string name = file.stem().string();
        loadBase(
            [text, name](const std::vector<std::string>& all) { return ScenarioLoader::fromText(text, name, all); });
    } else if (base.is_object() && base.contains("scenario") && base["scenario"].is_object()) {
        const std::string text = base["scenario"].dump();
        s.base = "the scenario in " + path;
        s.origin = path + ": base.scenario";
        identity = "scenario:" + text;
        loadBase([text](const std::vector<std::string>& all) { return ScenarioLoader::fromText(text, "sweep", all); });
    } else {
        return R::failure(path
            + ": base: a preset name, {\"preset\": NAME}, {\"file\": PATH} or {\"scenario\": {...}}, "
              "each with an optional \"set\" list");
    }
    if (!fio.empty()) {
        std::string text;
        if (const std::string err = SafeFile::read(fio, limits::kScenarioFileBytes, text); !err.empty())
            return R::failure("--fio: " + err);
        identity += "\nfio " + text;
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
        const std::string at = path + ": axes[" + std::to_string(i) + "].";
        s.axisSources.push_back({ at + "path",
            at
                + (a.contains("values")        ? "values"
                        : a.contains("step")   ? "from..to by step"
                        : a.contains("factor") ? "from..to by factor"
                                               : "from..to") });
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
        s.metrics = sweepDefaultMetrics();
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

namespace {

// What the loader says of a --set path that names no field (ScenarioLoader's override messages).
constexpr const char* kPathProblems[]
    = { "unknown key", "unknown patch id", "no element with that index", "empty component", "expected key=value" };

} // namespace

std::string checkAxes(const Sweep& s)
{
    if (auto base = s.load({}); !base)
        return s.origin.empty() ? base.error() : s.origin + ": " + base.error();
    for (std::size_t k = 0; k < s.axes.size(); ++k)
        for (std::uint64_t i = 0; i < s.axes[k].size(); ++i)
            if (auto sc = s.load(s.axes[k].point(i).sets); !sc) {
                // A path the scenario does not have is the axis's path field; a value it refuses, the axis's.
                const std::string& e = sc.error();
                const bool badPath = std::any_of(std::begin(kPathProblems), std::end(kPathProblems),
                    [&](const char* p) { return e.find(p) != std::string::npos; });
                const Sweep::AxisSource from = k < s.axisSources.size()
                    ? s.axisSources[k]
                    : Sweep::AxisSource { "axis " + std::to_string(k), "axis " + std::to_string(k) };
                const std::string& axis = badPath ? from.path : from.values;
                if (badPath)
                    return axis + ": " + e;
                return axis + " (" + printable(s.axes[k].name()) + " = " + printable(s.axes[k].point(i).label)
                    + "): " + e;
            }
    return {};
}

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

namespace {

std::string csvField(const std::string& v)
{
    if (v.find_first_of(",\"\n") == std::string::npos)
        return v;
    std::string out = "\"";
    for (const char c : v)
        out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

} // namespace

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

std::string ShardMerge::add(const std::string& file, std::string text)
{
    static const std::string kIdentityColumns = ",grid,grid_runs,shard,model";
    if (!text.empty() && text.back() != '\n')
        return file + ": its last row is cut short (was it interrupted?)";
    // A shard that went through Windows: CR LF line ends read as LF.
    text.erase(std::remove(text.begin(), text.end(), '\r'), text.end());
    std::istringstream in(text);
    std::string head;
    std::getline(in, head);
    if (head.rfind("index,", 0) != 0 || head.size() < kIdentityColumns.size()
        || head.compare(head.size() - kIdentityColumns.size(), kIdentityColumns.size(), kIdentityColumns) != 0)
        return file
            + ": not the CSV of blkmqlab-cli sweep (its header starts with index and ends with grid, grid_runs, "
              "shard and model)";
    if (m_header.empty())
        m_header = head;
    else if (m_header != head)
        return file + ": its column header differs from " + m_shards.begin()->second + "'s";
    const std::size_t fields = csvFieldCount(m_header);
    std::string identity; // the file's, from its first row: every row must carry the same
    std::uint64_t si = 0, sn = 0, n = 0;
    for (std::string line; std::getline(in, line); ++n) {
        // The identity: the last four fields, which never need quotes.
        std::size_t cut = line.size();
        for (int k = 0; k < 4 && cut != std::string::npos; ++k)
            cut = cut == 0 ? std::string::npos : line.rfind(',', cut - 1);
        if (cut == std::string::npos || csvFieldCount(line) != fields)
            return file + ": row " + std::to_string(n + 1) + " has not the header's columns";
        const std::string id = line.substr(cut + 1);
        if (n == 0) {
            char g[17] = {}, m[17] = {};
            unsigned long long r = 0, i = 0, c = 0;
            int used = 0;
            if (std::sscanf(id.c_str(), "%16[0-9a-f],%llu,%llu/%llu,%16[0-9a-f]%n", g, &r, &i, &c, m, &used) != 5
                || static_cast<std::size_t>(used) != id.size() || c == 0 || i >= c)
                return file + ": row 1 does not end with a grid, its size, a shard I/N and a model";
            if (r > static_cast<unsigned long long>(limits::kSweepRunsMax) || c > r)
                return file + ": row 1 says grid_runs=" + std::to_string(r) + " shard=" + std::to_string(i) + "/"
                    + std::to_string(c) + ", which no sweep writes (at most " + std::to_string(limits::kSweepRunsMax)
                    + " runs, at most one shard per run)";
            identity = id;
            si = i;
            sn = c;
            if (m_grid.empty()) {
                m_grid = g;
                m_runs = r;
                m_count = c;
                m_model = m;
            } else if (m_model != m) {
                return file + ": computed by another build of the lab (model=" + m + ", not model=" + m_model + " as "
                    + m_shards.begin()->second + "): rerun its shards with one build";
            } else if (m_grid != g || m_runs != r) {
                return file + ": a shard of another grid (grid=" + g + " grid_runs=" + std::to_string(r) + ", not grid="
                    + m_grid + " grid_runs=" + std::to_string(m_runs) + "): merge the shards of one sweep";
            } else if (m_count != c) {
                return file + ": a shard of a split into " + std::to_string(c) + ", the others are of "
                    + std::to_string(m_count);
            }
            if (!m_shards.emplace(si, file).second)
                return file + ": shard " + std::to_string(si) + "/" + std::to_string(sn) + " is given twice (also "
                    + m_shards[si] + ")";
        } else if (id != identity) {
            return file + ": row " + std::to_string(n + 1) + " is of another grid, shard or model than row 1";
        }
        std::uint64_t index = 0;
        const auto [p, ec] = std::from_chars(line.data(), line.data() + line.size(), index);
        if (ec != std::errc() || *p != ',' || index >= m_runs || index % sn != si)
            return file + ": row " + std::to_string(n + 1) + " is not a row of shard " + std::to_string(si) + "/"
                + std::to_string(sn);
        if (!m_rows.emplace(index, line.substr(0, cut)).second)
            return file + ": the row of run " + std::to_string(index) + " is there twice (row " + std::to_string(n + 1)
                + ")";
    }
    if (n == 0)
        return file + ": it has no rows (was it interrupted?)";
    const Experiment::Shard shard { si, sn };
    if (n != shard.sizeOf(m_runs))
        return file + ": shard " + std::to_string(si) + "/" + std::to_string(sn) + " has " + std::to_string(n)
            + " of its " + std::to_string(shard.sizeOf(m_runs)) + " rows (was it interrupted?)";
    return {};
}

Result<std::string> ShardMerge::finish() const
{
    using R = Result<std::string>;
    if (m_shards.empty())
        return R::failure("give the CSV files of a sharded sweep (sweep --shard I/N --csv FILE)");
    if (m_shards.size() != m_count) {
        std::string missing;
        for (std::uint64_t i = 0; i < m_count; ++i)
            if (!m_shards.count(i))
                missing += (missing.empty() ? "" : ", ") + std::to_string(i) + "/" + std::to_string(m_count);
        return R::failure("shard(s) " + missing + " missing");
    }
    // The rows as one unsharded sweep writes them: shard 0/1.
    const std::string identity = csvIdentity(m_grid, m_runs, 0, 1, m_model);
    std::string merged = m_header + "\n";
    for (const auto& [index, row] : m_rows)
        merged.append(row).append(",").append(identity).append("\n");
    return merged;
}

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

} // namespace blkmq
