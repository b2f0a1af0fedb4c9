// Guided lessons: the format (docs/lessons.md), the values an expectation reads from a snapshot,
// and playing a step on an engine. The CLI's `lesson --check` and the GUI's Lessons panel share
// all of it.
#include "lesson/Lesson.h"

#include "engine/Engine.h"
#include "io/Limits.h"
#include "io/SafeFile.h"
#include "io/Text.h"
#include "lesson/LessonData.h"
#include "metrics/Metrics.h"
#include "scenario/ScenarioLoader.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

namespace blkmq {

using nlohmann::json;

namespace {

std::vector<std::string> split(const std::string& s, char sep)
{
    std::vector<std::string> out;
    std::string part;
    std::istringstream in(s);
    while (std::getline(in, part, sep))
        out.push_back(part);
    return out;
}

std::optional<int> index(const std::string& s)
{
    int v = -1;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (r.ec != std::errc() || r.ptr != s.data() + s.size() || v < 0)
        return std::nullopt;
    return v;
}

std::string str(double v)
{
    std::ostringstream o;
    o << v;
    return o.str();
}

using ValueResult = Result<double>;

ValueResult beyond(const std::string& what, int i, std::size_t n)
{
    return ValueResult::failure(
        what + " " + std::to_string(i) + " does not exist (there are " + std::to_string(n) + ")");
}

// The indexed objects of a snapshot an expectation can name: "<prefix>.N.<field>".
struct IndexedValue {
    std::string_view prefix;
    std::string_view field;
    std::string_view what;
    std::size_t (*count)(const Snapshot&);
    double (*get)(const Snapshot&, std::size_t i);
};

std::size_t hctxCount(const Snapshot& s) { return s.hctxs.size(); }
std::size_t cpuCount(const Snapshot& s) { return s.cpus.size(); }
std::size_t queueCount(const Snapshot& s) { return s.queueRestartCounters.size(); }
std::size_t tagSetCount(const Snapshot& s) { return s.tagSetRestartCounters.size(); }

// clang-format off
const IndexedValue kIndexed[] = {
    { "hctx", "restart", "1 while BLK_MQ_S_SCHED_RESTART is set on global hctx N",
        hctxCount, [](const Snapshot& s, std::size_t i) { return s.hctxs[i].restart ? 1.0 : 0.0; } },
    { "hctx", "dispatch", "requests on hctx->dispatch",
        hctxCount, [](const Snapshot& s, std::size_t i) { return double(s.hctxs[i].dispatchLen); } },
    { "hctx", "sched", "requests in the scheduler's FIFO",
        hctxCount, [](const Snapshot& s, std::size_t i) { return double(s.hctxs[i].schedLen); } },
    { "hctx", "at_device", "requests the device holds",
        hctxCount, [](const Snapshot& s, std::size_t i) { return double(s.hctxs[i].atDevice); } },
    { "hctx", "tags_in_use", "driver tags in use in the tags this hctx uses",
        hctxCount, [](const Snapshot& s, std::size_t i) { return double(s.hctxs[i].tagsInUse); } },
    { "queue", "shared_hctx_restart", "q->shared_hctx_restart of device N (8e8320c9315c)",
        queueCount, [](const Snapshot& s, std::size_t i) { return double(s.queueRestartCounters[i]); } },
    { "tagset", "shared_hctx_restart", "the tag set's counter (Roman Pen's RFC)",
        tagSetCount, [](const Snapshot& s, std::size_t i) { return double(s.tagSetRestartCounters[i]); } },
    { "cpu", "done_list", "requests on CPU N's blk_cpu_done",
        cpuCount, [](const Snapshot& s, std::size_t i) { return double(s.cpus[i].doneListLen); } },
    { "cpu", "csd_queue", "requests on CPU N's call_single_queue: sent by IPI, their call not yet run",
        cpuCount, [](const Snapshot& s, std::size_t i) { return double(s.cpus[i].callSingleLen); } },
    { "cpu", "idle", "1 while CPU N is idle",
        cpuCount, [](const Snapshot& s, std::size_t i) { return s.cpus[i].idle ? 1.0 : 0.0; } },
};
// clang-format on

const char* const kRequestFields[] = { "in_flight", "stuck" };

ValueResult requestValue(const Snapshot& s, const std::vector<std::string>& parts)
{
    if (parts.size() != 3
        || std::find(std::begin(kRequestFields), std::end(kRequestFields), parts[2]) == std::end(kRequestFields))
        return ValueResult::failure("request values are request.ID.in_flight and request.ID.stuck");
    static const std::vector<std::string> kNone;
    const auto& ids = s.scriptIds ? *s.scriptIds : kNone;
    if (std::find(ids.begin(), ids.end(), parts[1]) == ids.end())
        return ValueResult::failure("no workload.script step submits a request '" + printable(parts[1]) + "'");
    const auto it = std::find_if(s.requests.begin(), s.requests.end(), [&](const RequestSnapshot& r) {
        return r.script >= 0 && static_cast<std::size_t>(r.script) < ids.size()
            && ids[static_cast<std::size_t>(r.script)] == parts[1];
    });
    if (parts[2] == "in_flight")
        return it != s.requests.end() ? 1.0 : 0.0;
    return it != s.requests.end() && it->stuck ? 1.0 : 0.0;
}

} // namespace

std::string lessonValueHelp()
{
    std::string s;
    s += "  COUNTER                      a counter of the run (blkmqlab-cli run --until counter: names them)\n";
    s += "  metric.ID                    a metric over the run so far (blkmqlab-cli metrics)\n";
    s += "  time_us                      the simulated clock\n";
    s += "  stalled                      1 once the stall detector fired\n";
    s += "  stuck                        requests the stall detector names\n";
    s += "  in_flight                    requests submitted and not yet freed\n";
    for (const IndexedValue& v : kIndexed) {
        std::string name = std::string(v.prefix) + ".N." + std::string(v.field);
        name.resize(std::max<std::size_t>(name.size() + 1, 29), ' ');
        s.append("  ").append(name).append(v.what).append("\n");
    }
    s += "  request.ID.in_flight         1 while the request of workload.script id ID is in flight\n";
    s += "  request.ID.stuck             1 while the stall detector names it\n";
    return s;
}

Result<double> lessonValue(const Snapshot& s, const std::string& name)
{
    for (const CounterField& c : kCounterFields)
        if (c.name == name)
            return static_cast<double>(s.counters.*c.field);
    if (name == "time_us")
        return static_cast<double>(s.now.ns()) / 1e3;
    if (name == "stalled")
        return s.stalled ? 1.0 : 0.0;
    if (name == "stuck")
        return static_cast<double>(
            std::count_if(s.requests.begin(), s.requests.end(), [](const RequestSnapshot& r) { return r.stuck; }));
    if (name == "in_flight")
        return static_cast<double>(s.requests.size());
    const auto parts = split(name, '.');
    if (parts.size() == 2 && parts[0] == "metric") {
        for (std::size_t i = 0; i < kMetrics.size(); ++i)
            if (kMetrics[i].id == parts[1])
                return s.totals[i];
        return ValueResult::failure("'" + printable(parts[1]) + "' is not a metric (blkmqlab-cli metrics lists them)");
    }
    if (!parts.empty() && parts[0] == "request")
        return requestValue(s, parts);
    if (parts.size() == 3)
        for (const IndexedValue& v : kIndexed)
            if (v.prefix == parts[0] && v.field == parts[2]) {
                const auto i = index(parts[1]);
                if (!i)
                    return ValueResult::failure("'" + printable(parts[1]) + "' is not an index");
                if (static_cast<std::size_t>(*i) >= v.count(s))
                    return beyond(std::string(v.prefix), *i, v.count(s));
                return v.get(s, static_cast<std::size_t>(*i));
            }
    return ValueResult::failure("unknown value; the values are:\n" + lessonValueHelp());
}

namespace {

using LessonResult = Result<Lesson>;

// "a + b - 2 * c" into terms: names and numbers joined by + and -, a number may scale a name.
std::optional<std::vector<LessonExpectation::Term>> parseSum(const std::string& text)
{
    std::vector<LessonExpectation::Term> terms;
    std::istringstream in(text);
    std::string tok;
    double sign = 1;
    enum { Term, Joiner, Scaled } want = Term;
    const auto isName = [](const std::string& t) {
        return !t.empty() && std::isalpha(static_cast<unsigned char>(t[0]))
            && std::all_of(t.begin(), t.end(),
                [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-'; });
    };
    while (in >> tok) {
        if (want == Joiner) {
            if (tok == "*" && terms.back().name.empty()) {
                want = Scaled;
                continue;
            }
            if (tok != "+" && tok != "-")
                return std::nullopt;
            sign = tok == "-" ? -1 : 1;
            want = Term;
            continue;
        }
        if (want == Scaled) { // NUMBER * NAME
            if (!isName(tok))
                return std::nullopt;
            terms.back().name = tok;
            want = Joiner;
            continue;
        }
        LessonExpectation::Term t;
        t.sign = sign;
        double number = 0;
        const auto r = std::from_chars(tok.data(), tok.data() + tok.size(), number);
        if (r.ec == std::errc() && r.ptr == tok.data() + tok.size())
            t.number = number;
        else if (isName(tok)) {
            t.name = tok;
            t.number = 1;
        } else
            return std::nullopt;
        terms.push_back(t);
        want = Joiner;
    }
    if (want != Joiner)
        return std::nullopt;
    return terms;
}

Result<LessonExpectation> parseExpectation(const std::string& text)
{
    using R = Result<LessonExpectation>;
    static const std::pair<const char*, LessonExpectation::Op> kOps[] = { { "==", LessonExpectation::Op::Eq },
        { "!=", LessonExpectation::Op::Ne }, { "<=", LessonExpectation::Op::Le }, { ">=", LessonExpectation::Op::Ge },
        { "<", LessonExpectation::Op::Lt }, { ">", LessonExpectation::Op::Gt } };
    LessonExpectation e;
    e.text = text;
    for (const auto& [sym, op] : kOps) {
        const auto at = text.find(std::string(" ") + sym + " ");
        if (at == std::string::npos)
            continue;
        auto lhs = parseSum(text.substr(0, at));
        auto rhs = parseSum(text.substr(at + std::string(sym).size() + 2));
        if (!lhs || !rhs)
            break;
        e.lhs = std::move(*lhs);
        e.rhs = std::move(*rhs);
        e.op = op;
        return e;
    }
    return R::failure("'" + printable(text)
        + "' is not a relation: write A OP B with spaces around OP (==, !=, <, <=, >, >=), A and B sums of names "
          "and numbers joined by ' + ' or ' - ', a number may scale a name (2 * ipis)");
}

Result<LessonHighlight> parseHighlight(const std::string& text)
{
    using R = Result<LessonHighlight>;
    static const std::pair<const char*, ObjectRef::Kind> kKinds[]
        = { { "cpu", ObjectRef::Kind::Cpu }, { "hctx", ObjectRef::Kind::Hctx }, { "request", ObjectRef::Kind::Request },
              { "queue", ObjectRef::Kind::Queue }, { "tags", ObjectRef::Kind::Tags } };
    const auto colon = text.find(':');
    const std::string kind = text.substr(0, colon);
    const std::string arg = colon == std::string::npos ? std::string() : text.substr(colon + 1);
    for (const auto& [name, k] : kKinds) {
        if (kind != name)
            continue;
        LessonHighlight h;
        h.object.kind = k;
        h.text = text;
        if (k == ObjectRef::Kind::Request) {
            if (arg.empty())
                return R::failure("'" + printable(text) + "': request:ID names a workload.script id");
            h.request = arg;
        } else {
            const auto i = index(arg);
            if (!i)
                return R::failure("'" + printable(text) + "': " + kind + ":N takes an index");
            h.object.index = *i;
        }
        return h;
    }
    return R::failure("'" + printable(text) + "' is not cpu:N, hctx:N, request:ID, queue:N or tags:N");
}

// Strict field reading: every key known, every value of its type, errors naming the path.
struct Reader {
    const std::string& origin;
    std::string error;

    bool fail(const std::string& path, const std::string& why)
    {
        if (error.empty())
            error = origin + ": " + path + ": " + why;
        return false;
    }
    // Every key of `o` (the object at `at`, its row `parent` in Lesson::fields()) is in the table.
    bool onlyKeys(const json& o, std::string_view parent, const std::string& at)
    {
        const std::string why = Lesson::fields().unknownKey(o, parent, at);
        return why.empty() || fail(why.substr(0, why.find(": ")), why.substr(why.find(": ") + 2));
    }
    bool text(const json& o, const std::string& path, const char* key, std::string& out, bool required)
    {
        if (!o.contains(key))
            return required ? fail(path + key, "missing") : true;
        if (!o[key].is_string())
            return fail(path + key, "must be a string");
        out = o[key].get<std::string>();
        if (required && out.empty())
            return fail(path + key, "must not be empty");
        return true;
    }
    bool texts(const json& o, const std::string& path, const char* key, std::vector<std::string>& out)
    {
        if (!o.contains(key))
            return true;
        if (!o[key].is_array())
            return fail(path + key, "must be an array of strings");
        for (std::size_t i = 0; i < o[key].size(); ++i) {
            if (!o[key][i].is_string())
                return fail(path + key + "[" + std::to_string(i) + "]", "must be a string");
            out.push_back(o[key][i].get<std::string>());
        }
        return true;
    }
    // A list of metric ids, each drawn in a plot (Metric::group not empty).
    bool plots(const json& o, const std::string& path, std::optional<std::vector<std::string>>& out)
    {
        if (!o.contains("plots"))
            return true;
        std::vector<std::string> ids;
        if (!texts(o, path, "plots", ids))
            return false;
        for (std::size_t i = 0; i < ids.size(); ++i) {
            const int m = findMetric(ids[i]);
            if (m < 0 || kMetrics[static_cast<std::size_t>(m)].group.empty()) {
                std::string plotted;
                for (const Metric& metric : kMetrics)
                    if (!metric.group.empty())
                        plotted += (plotted.empty() ? "" : ", ") + std::string(metric.id);
                return fail(path + "plots[" + std::to_string(i) + "]",
                    "'" + printable(ids[i]) + "' is not a plotted metric (one of " + plotted + ")");
            }
        }
        out = std::move(ids);
        return true;
    }
};

constexpr std::size_t kMaxSteps = 200;

} // namespace

Result<Lesson> Lesson::fromText(const std::string& text, const std::string& origin)
{
    if (ScenarioLoader::nestingDepth(text) > limits::kJsonDepth)
        return LessonResult::failure(origin + ": nests deeper than " + std::to_string(limits::kJsonDepth) + " levels");
    const json doc = json::parse(text, nullptr, false);
    if (doc.is_discarded())
        return LessonResult::failure(origin + ": not valid JSON");
    return fromJson(doc, origin);
}

Result<Lesson> Lesson::fromJson(const nlohmann::json& doc, const std::string& origin)
{
    if (!doc.is_object())
        return LessonResult::failure(origin + ": (top level): must be an object");
    // Names and titles reach the terminal and the window: no control characters (io/Text.h);
    // the prose may hold newlines.
    if (const std::string why = jsonTextProblem(doc, { "text", "summary", "source" }); !why.empty())
        return LessonResult::failure(origin + ": " + why);
    Reader rd { origin, {} };
    Lesson l;
    if (!rd.onlyKeys(doc, "", ""))
        return LessonResult::failure(rd.error);
    if (!doc.contains("format") || doc["format"] != 1)
        return LessonResult::failure(origin + ": format: must be 1");
    if (!rd.text(doc, "", "name", l.m_name, true) || !rd.text(doc, "", "title", l.m_title, true)
        || !rd.text(doc, "", "source", l.m_source, false) || !rd.text(doc, "", "summary", l.m_summary, false)
        || !rd.plots(doc, "", l.m_plots))
        return LessonResult::failure(rd.error);
    if (!doc.contains("steps") || !doc["steps"].is_array() || doc["steps"].empty())
        return LessonResult::failure(origin + ": steps: must be a non-empty array");
    if (doc["steps"].size() > kMaxSteps)
        return LessonResult::failure(origin + ": steps: more than " + std::to_string(kMaxSteps));
    for (std::size_t i = 0; i < doc["steps"].size(); ++i) {
        const json& st = doc["steps"][i];
        const std::string path = "steps[" + std::to_string(i) + "].";
        if (!st.is_object())
            return LessonResult::failure(origin + ": " + path.substr(0, path.size() - 1) + ": must be an object");
        if (!rd.onlyKeys(st, "steps[]", path.substr(0, path.size() - 1)))
            return LessonResult::failure(rd.error);
        LessonStep step;
        std::vector<std::string> highlights, expects;
        if (!rd.text(st, path, "title", step.title, true) || !rd.text(st, path, "text", step.text, true)
            || !rd.text(st, path, "until", step.until, false) || !rd.texts(st, path, "switch", step.switches)
            || !rd.texts(st, path, "highlight", highlights) || !rd.texts(st, path, "expect", expects)
            || !rd.plots(st, path, step.plots))
            return LessonResult::failure(rd.error);
        if (st.contains("scenario")) {
            const json& sc = st["scenario"];
            if (!sc.is_object())
                return LessonResult::failure(origin + ": " + path + "scenario: must be an object");
            if (!rd.onlyKeys(sc, "steps[].scenario", path + "scenario"))
                return LessonResult::failure(rd.error);
            std::string preset;
            if (!rd.text(sc, path + "scenario.", "preset", preset, true)
                || !rd.texts(sc, path + "scenario.", "set", step.sets))
                return LessonResult::failure(rd.error);
            step.preset = preset;
            if (auto s = ScenarioLoader::fromPreset(preset, step.sets); !s)
                return LessonResult::failure(origin + ": " + path + "scenario: " + s.error());
        } else if (i == 0) {
            return LessonResult::failure(origin + ": steps[0].scenario: missing (the first step starts a scenario)");
        }
        for (const std::string& sw : step.switches) {
            const auto eq = sw.find('=');
            if (eq == std::string::npos || !LiveChange::isLivePath(sw.substr(0, eq)))
                return LessonResult::failure(origin + ": " + path + "switch: '" + printable(sw)
                    + "' is not path=value of a field that changes during a run (a live kernel switch, a cost, "
                      "devices.N.rq_affinity); start a scenario for the others");
            if (const LiveChange c = LiveChange::read({ sw.substr(0, eq), sw.substr(eq + 1) }); !c.refused().empty())
                return LessonResult::failure(origin + ": " + path + "switch: " + c.refused());
        }
        if (!step.until.empty())
            if (auto c = stop::parse(step.until); !c)
                return LessonResult::failure(origin + ": " + path + "until: " + c.error());
        for (const std::string& h : highlights) {
            auto r = parseHighlight(h);
            if (!r)
                return LessonResult::failure(origin + ": " + path + "highlight: " + r.error());
            step.highlights.push_back(std::move(*r));
        }
        for (const std::string& e : expects) {
            auto r = parseExpectation(e);
            if (!r)
                return LessonResult::failure(origin + ": " + path + "expect: " + r.error());
            step.expectations.push_back(std::move(*r));
        }
        l.m_steps.push_back(std::move(step));
    }
    return l;
}

const FieldTable& Lesson::fields()
{
    static const FieldTable table { "lesson",
        {
            { "format", "integer", "1" },
            { "name", "string", "required, not empty" },
            { "title", "string", "required, not empty" },
            { "source", "text", "optional, may hold newlines" },
            { "summary", "text", "optional, may hold newlines" },
            { "plots", "array",
                "ids of metrics whose plots the lesson shows (blkmqlab-cli metrics), [] for none; without it, every "
                "plot" },
            { "steps", "array", "1.." + std::to_string(kMaxSteps) + " steps" },
            { "steps[].title", "string", "required, not empty" },
            { "steps[].text", "text", "required, may hold newlines" },
            { "steps[].scenario", "object", "required on the first step" },
            { "steps[].scenario.preset", "string", "a preset name (blkmqlab-cli presets)" },
            { "steps[].scenario.set", "array", "path=value overrides (--set syntax)" },
            { "steps[].switch", "array", "path=value of fields that change during a run" },
            { "steps[].until", "string", "a stop condition (run --until syntax)" },
            { "steps[].highlight", "array", "cpu:N, hctx:N, tags:N, queue:N, request:ID" },
            { "steps[].expect", "array", "A OP B relations of snapshot values (blkmqlab-cli lessons)" },
            { "steps[].plots", "array", "the plots this step shows, in place of the lesson's" },
        } };
    return table;
}

std::string Lesson::fullDocument()
{
    const json step0 = { { "title", "t" }, { "text", "x" },
        { "scenario", { { "preset", "shared-hctx-stall" }, { "set", { "seed=1" } } } },
        { "switch", { "kernel.restart=rr-shared" } }, { "until", "time:1ms" },
        { "highlight", { "hctx:0", "request:A" } }, { "expect", { "restart_skips >= 0" } }, { "plots", { "iops" } } };
    return json {
        { "format", 1 }, { "name", "n" }, { "title", "t" }, { "source", "s" }, { "summary", "s" },
        { "plots", json::array() }, { "steps", { step0 } }
    }.dump(2);
}

const std::optional<std::vector<std::string>>& Lesson::plotsOf(int step) const
{
    const auto& own = m_steps[static_cast<std::size_t>(step)].plots;
    return own ? own : m_plots;
}

Result<Lesson> Lesson::fromFile(const std::string& path)
{
    std::string text;
    if (const std::string err = SafeFile::read(path, limits::kScenarioFileBytes, text); !err.empty())
        return LessonResult::failure("lesson file: " + err);
    return fromText(text, path);
}

Result<Lesson> Lesson::load(const std::string& nameOrPath)
{
    for (const BuiltinLesson& b : builtinLessons())
        if (b.name == nameOrPath)
            return fromText(std::string(b.json), "lesson " + nameOrPath);
    if (nameOrPath.find('/') != std::string::npos
        || (nameOrPath.size() > 5 && nameOrPath.compare(nameOrPath.size() - 5, 5, ".json") == 0))
        return fromFile(nameOrPath);
    std::string list;
    for (const BuiltinLesson& b : builtinLessons())
        list.append(list.empty() ? "" : ", ").append(b.name);
    return LessonResult::failure("lesson: unknown lesson '" + printable(nameOrPath) + "' (lessons: " + list + ")");
}

std::vector<Lesson::Info> Lesson::builtin()
{
    std::vector<Info> out;
    for (const BuiltinLesson& b : builtinLessons()) {
        const json doc = json::parse(b.json, nullptr, false);
        out.push_back({ std::string(b.name), doc.is_object() ? doc.value("title", std::string()) : std::string() });
    }
    return out;
}

int Lesson::segmentStart(int step) const
{
    int s = std::clamp(step, 0, size() - 1);
    while (s > 0 && !m_steps[static_cast<std::size_t>(s)].preset)
        --s;
    return s;
}

Result<Scenario> Lesson::scenarioOf(int step) const
{
    const LessonStep& s = m_steps[static_cast<std::size_t>(segmentStart(step))];
    return ScenarioLoader::fromPreset(*s.preset, s.sets);
}

LessonStepOutcome Lesson::play(Engine& engine, int step, std::uint64_t maxEvents) const
{
    const LessonStep& s = m_steps[static_cast<std::size_t>(step)];
    LessonStepOutcome out;
    const std::size_t markersBefore = engine.markers().size();
    for (const std::string& sw : s.switches) {
        const auto eq = sw.find('=');
        engine.inbox().post({ sw.substr(0, eq), sw.substr(eq + 1) });
    }
    engine.applyPendingCommands();
    for (std::size_t m = markersBefore; m < engine.markers().size(); ++m)
        if (engine.markers()[m].text.rfind("rejected", 0) == 0)
            out.error = engine.markers()[m].text;
    if (out.error.empty() && !s.until.empty()) {
        auto until = stop::parse(s.until);
        out.reached = engine.runUntil(**until, maxEvents);
        if (!out.reached)
            out.error = "never reached '" + printable(s.until) + "' (" + (*until)->describe() + ") before "
                + (engine.finished() || engine.nothingDue() ? "the scenario ended" : "the event limit");
    }
    engine.publishSnapshot();
    out.at = engine.now();
    const auto snap = engine.snapshot();
    for (const LessonHighlight& h : s.highlights) {
        if (!out.error.empty())
            break;
        const std::size_t count = h.object.kind == ObjectRef::Kind::Cpu ? snap->cpus.size()
            : h.object.kind == ObjectRef::Kind::Queue                   ? snap->queueRestartCounters.size()
                                                                        : snap->hctxs.size();
        if (h.object.kind == ObjectRef::Kind::Request) {
            if (auto v = lessonValue(*snap, "request." + h.request + ".in_flight"); !v)
                out.error = "highlight '" + printable(h.text) + "': " + v.error();
        } else if (static_cast<std::size_t>(h.object.index) >= count) {
            out.error = "highlight '" + printable(h.text) + "': there are " + std::to_string(count);
        }
    }
    return out;
}

std::vector<ExpectationResult> Lesson::check(const Snapshot& snap, int step) const
{
    std::vector<ExpectationResult> out;
    for (const LessonExpectation& e : m_steps[static_cast<std::size_t>(step)].expectations) {
        ExpectationResult r;
        r.text = e.text;
        std::string shown;
        const auto sum = [&](const std::vector<LessonExpectation::Term>& terms) -> std::optional<double> {
            double v = 0;
            for (const auto& t : terms) {
                if (t.name.empty()) {
                    v += t.sign * t.number;
                    continue;
                }
                auto value = lessonValue(snap, t.name);
                if (!value) {
                    r.values = t.name + ": " + value.error();
                    return std::nullopt;
                }
                shown.append(shown.empty() ? "" : ", ").append(t.name + " = " + str(*value));
                v += t.sign * t.number * *value;
            }
            return v;
        };
        const auto a = sum(e.lhs);
        const auto b = a ? sum(e.rhs) : std::nullopt;
        if (a && b) {
            switch (e.op) {
            case LessonExpectation::Op::Eq:
                r.held = *a == *b;
                break;
            case LessonExpectation::Op::Ne:
                r.held = *a != *b;
                break;
            case LessonExpectation::Op::Lt:
                r.held = *a < *b;
                break;
            case LessonExpectation::Op::Le:
                r.held = *a <= *b;
                break;
            case LessonExpectation::Op::Gt:
                r.held = *a > *b;
                break;
            case LessonExpectation::Op::Ge:
                r.held = *a >= *b;
                break;
            }
            r.values = shown;
        }
        out.push_back(std::move(r));
    }
    return out;
}

} // namespace blkmq
