#include "session/Session.h"

#include "engine/StopCondition.h"
#include "io/Limits.h"
#include "io/SafeFile.h"
#include "io/Text.h"
#include "scenario/ScenarioLoader.h"

#include <algorithm>
#include <cmath>

namespace blkmq {

namespace {

using json = nlohmann::json;
using SessionResult = Result<Session>;
using EngineResult = Result<std::unique_ptr<Engine>>;

constexpr auto kMaxCommands = static_cast<std::size_t>(limits::kSessionCommands);
constexpr auto kMaxBookmarks = static_cast<std::size_t>(limits::kSessionBookmarks);
constexpr auto kMaxNote = static_cast<std::size_t>(limits::kBookmarkNoteBytes);
constexpr std::size_t kMaxPlots = 64; // view.plots_hidden: indices of the window's plots
constexpr std::size_t kMaxCompareSets = 64; // view.compare: run B's kernel settings
constexpr std::size_t kMaxSetBytes = 256;

// Stops a replay when the engine has processed `events` events: where the next command was taken.
class EventsReached : public StopCondition {
public:
    explicit EventsReached(std::uint64_t events)
        : m_events(events)
    {
    }
    bool reached(const Engine& e) const override { return e.events() >= m_events; }
    std::string describe() const override { return std::to_string(m_events) + " events processed"; }

private:
    std::uint64_t m_events;
};

// Either of two conditions, saying which held (replayUntil's `until` or the next command's event).
class Either : public StopCondition {
public:
    Either(StopCondition& a, StopCondition& b)
        : m_a(a)
        , m_b(b)
    {
    }
    void arm(Engine& e) override
    {
        m_a.arm(e);
        m_b.arm(e);
    }
    void disarm(Engine& e) override
    {
        m_a.disarm(e);
        m_b.disarm(e);
    }
    bool reached(const Engine& e) const override
    {
        m_firstHeld = m_a.reached(e);
        return m_firstHeld || m_b.reached(e);
    }
    std::string describe() const override { return m_a.describe() + " or " + m_b.describe(); }
    bool firstHeld() const { return m_firstHeld; }

private:
    StopCondition& m_a;
    StopCondition& m_b;
    mutable bool m_firstHeld = false;
};

// Every key of `o` (the object at `at`, its row `parent` in Session::fields()) is in the table.
bool onlyKeys(const json& o, std::string_view parent, const std::string& at, std::string& error)
{
    error = Session::fields().unknownKey(o, parent, at);
    return error.empty();
}

// Applies the commands taken at exactly `events` events processed, from `next` on, each at its
// clock time (no event comes between: the run that took it had processed every event up to it);
// one whose time is after `limit` is left.
std::string applyAt(
    Engine& e, const std::vector<Engine::AppliedCommand>& commands, std::size_t& next, SimTime limit = SimTime::max())
{
    for (; next < commands.size() && commands[next].event == e.events(); ++next) {
        const std::int64_t t = commands[next].t_ns;
        if (t > limit.ns())
            break;
        if (t > e.now().ns()) {
            e.runUntil(SimTime(t));
            if (e.events() != commands[next].event)
                return "commands[" + std::to_string(next) + "].time_ns: the replay processed events between event "
                    + std::to_string(commands[next].event) + " and " + std::to_string(t)
                    + " ns; the session was written by another build of the lab, or edited";
        }
        const std::size_t markers = e.markers().size();
        e.inbox().post(commands[next].command);
        e.applyPendingCommands();
        if (e.markers().size() > markers && e.markers().back().text.rfind("rejected", 0) == 0)
            return "commands[" + std::to_string(next) + "].set: " + e.markers().back().text;
    }
    return {};
}

} // namespace

Session Session::of(const Engine& engine, const std::string& scenarioJson)
{
    Session s;
    s.scenario = json::parse(scenarioJson);
    s.commands = engine.appliedCommands();
    s.at_ns = engine.now().ns();
    s.events = engine.events();
    s.fingerprint = engine.fingerprint();
    return s;
}

std::string Session::toText() const
{
    json commandsJson = json::array();
    for (const auto& c : commands) {
        commandsJson.push_back({ { "event", c.event }, { "set", c.command.path + "=" + c.command.value } });
        if (c.t_ns >= 0)
            commandsJson.back()["time_ns"] = c.t_ns;
    }
    json marks = json::array();
    for (const Bookmark& b : bookmarks)
        marks.push_back({ { "time_ns", b.t_ns }, { "note", b.note } });
    json doc = { { "format", kFormat }, { "scenario", scenario }, { "commands", std::move(commandsJson) },
        { "at", { { "time_ns", at_ns }, { "events", events }, { "fingerprint", fingerprint } } },
        { "bookmarks", std::move(marks) } };
    if (!lesson.empty())
        doc["lesson"] = { { "name", lesson }, { "step", lessonStep } };
    if (!view.empty())
        doc["view"] = view;
    return doc.dump(2) + "\n";
}

const FieldTable& Session::fields()
{
    static const FieldTable table { "session",
        {
            { "format", "integer", std::to_string(kFormat) },
            { "scenario", "object", "a scenario (blkmqlab-cli fields scenario)" },
            { "commands", "array", "at most " + std::to_string(kMaxCommands) + ", in event order" },
            { "commands[].event", "integer", "events processed before it, 0..at.events" },
            { "commands[].set", "string", "path=value of a field that changes during a run" },
            { "commands[].time_ns", "integer", "the clock when it was made, 0..at.time_ns; optional" },
            { "at", "object", "required" },
            { "at.time_ns", "integer", "0..the scenario's duration" },
            { "at.events", "integer", "0 or more" },
            { "at.fingerprint", "string", "the run's fingerprint there" },
            { "bookmarks", "array", "at most " + std::to_string(kMaxBookmarks) },
            { "bookmarks[].time_ns", "integer", "0 or more" },
            { "bookmarks[].note", "text", "at most " + std::to_string(kMaxNote) + " bytes" },
            { "lesson", "object", "optional" },
            { "lesson.name", "string", "a lesson's name or file" },
            { "lesson.step", "integer", "-1..10000" },
            { "view", "object", "optional" },
            { "view.plots_hidden", "array", "plot indices 0.." + std::to_string(kMaxPlots - 1) },
            { "view.plot_columns", "integer", "1..2" },
            { "view.inspect", "string", "cpu:N or hctx:N: what the inspector shows" },
            { "view.zoom", "number", "the canvas's scale, 0.05..20, when zoomed (else fitted)" },
            { "view.center", "array", "[x, y]: the canvas point at the centre of the view, with zoom" },
            { "view.compare", "array",
                "run B's kernel settings, \"kernel.path=value\" each (at most 64): the window compares A with B" },
        } };
    return table;
}

Result<Session> Session::fromFile(const std::string& path)
{
    std::string text;
    if (const std::string e = SafeFile::read(path, limits::kScenarioFileBytes, text); !e.empty())
        return SessionResult::failure("session file: " + e);
    return fromText(text, path);
}

Result<Session> Session::fromText(const std::string& text, const std::string& origin)
{
    const auto fail = [&](const std::string& why) { return SessionResult::failure(origin + ": " + why); };
    if (ScenarioLoader::nestingDepth(text) > limits::kJsonDepth)
        return fail("nests deeper than " + std::to_string(limits::kJsonDepth) + " levels");
    const json doc = json::parse(text, nullptr, false);
    if (doc.is_discarded())
        return fail("not valid JSON");
    return fromJson(doc, origin);
}

Result<Session> Session::fromJson(const nlohmann::json& doc, const std::string& origin)
{
    const auto fail = [&](const std::string& why) { return SessionResult::failure(origin + ": " + why); };
    if (!doc.is_object())
        return fail("(top level): must be an object (a session file, docs/sessions.md)");
    if (const std::string why = jsonTextProblem(doc, { "description", "note" }); !why.empty())
        return fail(why);
    std::string error;
    if (!onlyKeys(doc, "", "", error))
        return fail(error);
    if (!doc.contains("format") || !doc["format"].is_number_integer())
        return fail("format: missing or not a whole number (this build reads format " + std::to_string(kFormat) + ")");
    if (doc["format"].get<std::int64_t>() != kFormat)
        return fail("format: " + doc["format"].dump()
            + (doc["format"].get<std::int64_t>() > kFormat ? " is newer than" : " is not")
            + " the format this build reads (" + std::to_string(kFormat) + ")");
    Session s;
    if (!doc.contains("scenario") || !doc["scenario"].is_object())
        return fail("scenario: missing or not an object (the scenario, embedded)");
    if (auto sc = ScenarioLoader::fromJson(doc["scenario"]); !sc)
        return fail("scenario: " + sc.error());
    s.scenario = doc["scenario"];
    if (doc.contains("commands")) {
        const json& list = doc["commands"];
        if (!list.is_array())
            return fail("commands: must be an array of {\"event\": N, \"set\": \"path=value\"}");
        if (list.size() > kMaxCommands)
            return fail("commands: more than " + std::to_string(kMaxCommands));
        for (std::size_t i = 0; i < list.size(); ++i) {
            const std::string path = "commands[" + std::to_string(i) + "]";
            const json& c = list[i];
            if (!c.is_object())
                return fail(path + ": must be an object {\"event\": N, \"set\": \"path=value\"}");
            if (!onlyKeys(c, "commands[]", path, error))
                return fail(error);
            if (!c.contains("event") || !c["event"].is_number_unsigned())
                return fail(path + ".event: must be the number of events processed before it, 0 or more");
            if (!c.contains("set") || !c["set"].is_string())
                return fail(path + ".set: must be a string \"path=value\"");
            const std::string set = c["set"].get<std::string>();
            const auto eq = set.find('=');
            if (eq == std::string::npos || !LiveChange::isLivePath(set.substr(0, eq)))
                return fail(path + ".set: '" + printable(set)
                    + "' is not path=value of a field that changes during a run (blkmqlab-cli patches)");
            const std::uint64_t event = c["event"].get<std::uint64_t>();
            if (!s.commands.empty() && event < s.commands.back().event)
                return fail(path + ".event: " + std::to_string(event) + " comes before the command above it ("
                    + std::to_string(s.commands.back().event) + ")");
            std::int64_t t = -1;
            if (c.contains("time_ns")) {
                if (!c["time_ns"].is_number_integer() || c["time_ns"].get<std::int64_t>() < 0)
                    return fail(path + ".time_ns: must be the simulated time in ns when it was made, 0 or more");
                t = c["time_ns"].get<std::int64_t>();
                if (!s.commands.empty() && t < s.commands.back().t_ns)
                    return fail(path + ".time_ns: " + std::to_string(t) + " comes before the command above it ("
                        + std::to_string(s.commands.back().t_ns) + ")");
            }
            s.commands.push_back({ event, { set.substr(0, eq), set.substr(eq + 1) }, t });
        }
    }
    if (!doc.contains("at") || !doc["at"].is_object())
        return fail("at: missing or not an object {\"time_ns\", \"events\", \"fingerprint\"}");
    const json& at = doc["at"];
    if (!onlyKeys(at, "at", "at", error))
        return fail(error);
    if (!at.contains("time_ns") || !at["time_ns"].is_number_integer() || at["time_ns"].get<std::int64_t>() < 0)
        return fail("at.time_ns: must be a simulated time in ns, 0 or more");
    if (!at.contains("events") || !at["events"].is_number_unsigned())
        return fail("at.events: must be the number of events processed, 0 or more");
    if (!at.contains("fingerprint") || !at["fingerprint"].is_string())
        return fail("at.fingerprint: must be the run's fingerprint there (a hex string)");
    s.at_ns = at["time_ns"].get<std::int64_t>();
    s.events = at["events"].get<std::uint64_t>();
    s.fingerprint = at["fingerprint"].get<std::string>();
    if (!s.commands.empty() && s.commands.back().event > s.events)
        return fail("commands[" + std::to_string(s.commands.size() - 1) + "].event: after at.events ("
            + std::to_string(s.events) + ")");
    if (!s.commands.empty() && s.commands.back().t_ns > s.at_ns)
        return fail("commands[" + std::to_string(s.commands.size() - 1) + "].time_ns: after at.time_ns ("
            + std::to_string(s.at_ns) + ")");
    if (auto sc = ScenarioLoader::fromJson(s.scenario); sc && s.at_ns > sc->duration.ns())
        return fail("at.time_ns: past the scenario's duration");
    if (doc.contains("bookmarks")) {
        const json& list = doc["bookmarks"];
        if (!list.is_array() || list.size() > kMaxBookmarks)
            return fail("bookmarks: must be an array of at most " + std::to_string(kMaxBookmarks)
                + " {\"time_ns\": T, \"note\": TEXT}");
        for (std::size_t i = 0; i < list.size(); ++i) {
            const std::string path = "bookmarks[" + std::to_string(i) + "]";
            const json& b = list[i];
            if (!b.is_object())
                return fail(path + ": must be an object {\"time_ns\": T, \"note\": TEXT}");
            if (!onlyKeys(b, "bookmarks[]", path, error))
                return fail(error);
            if (!b.contains("time_ns") || !b["time_ns"].is_number_integer() || b["time_ns"].get<std::int64_t>() < 0)
                return fail(path + ".time_ns: must be a simulated time in ns, 0 or more");
            if (b.contains("note") && (!b["note"].is_string() || b["note"].get<std::string>().size() > kMaxNote))
                return fail(path + ".note: must be a string of at most " + std::to_string(kMaxNote) + " bytes");
            s.bookmarks.push_back({ b["time_ns"].get<std::int64_t>(), b.value("note", std::string()) });
        }
    }
    if (doc.contains("lesson")) {
        const json& l = doc["lesson"];
        if (!l.is_object() || !onlyKeys(l, "lesson", "lesson", error))
            return fail(error.empty() ? "lesson: must be an object {\"name\": NAME, \"step\": N}" : error);
        if (!l.contains("name") || !l["name"].is_string() || l["name"].get<std::string>().empty()
            || l["name"].get<std::string>().size() > 200)
            return fail("lesson.name: must be a lesson's name (blkmqlab-cli lessons) or file");
        if (!l.contains("step") || !l["step"].is_number_integer() || l["step"].get<std::int64_t>() < -1
            || l["step"].get<std::int64_t>() > 10000)
            return fail("lesson.step: must be the step reached, 0-based (-1: before the first)");
        s.lesson = l["name"].get<std::string>();
        s.lessonStep = static_cast<int>(l["step"].get<std::int64_t>());
    }
    if (doc.contains("view")) {
        const json& v = doc["view"];
        if (!v.is_object() || !onlyKeys(v, "view", "view", error))
            return fail(
                error.empty() ? "view: must be an object {\"plots_hidden\": [...], \"plot_columns\": N}" : error);
        if (v.contains("plots_hidden")) {
            const json& hidden = v["plots_hidden"];
            if (!hidden.is_array() || hidden.size() > kMaxPlots
                || std::any_of(hidden.begin(), hidden.end(),
                    [](const json& i) { return !i.is_number_unsigned() || i.get<std::uint64_t>() >= kMaxPlots; }))
                return fail("view.plots_hidden: must be an array of plot indices 0.." + std::to_string(kMaxPlots - 1));
        }
        if (v.contains("plot_columns")
            && (!v["plot_columns"].is_number_integer() || v["plot_columns"].get<std::int64_t>() < 1
                || v["plot_columns"].get<std::int64_t>() > 2))
            return fail("view.plot_columns: must be 1 or 2");
        if (v.contains("inspect")) {
            const json& i = v["inspect"];
            const std::string what = i.is_string() ? i.get<std::string>() : std::string();
            const auto colon = what.find(':');
            const std::string kind = what.substr(0, colon),
                              n = colon == std::string::npos ? "" : what.substr(colon + 1);
            if ((kind != "cpu" && kind != "hctx") || n.empty() || n.size() > 6
                || !std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; }))
                return fail("view.inspect: must be \"cpu:N\" or \"hctx:N\"");
        }
        if (v.contains("zoom")
            && (!v["zoom"].is_number() || !(v["zoom"].get<double>() >= 0.05 && v["zoom"].get<double>() <= 20)))
            return fail("view.zoom: must be the canvas's scale, 0.05..20");
        if (v.contains("center")) {
            const json& c = v["center"];
            if (!c.is_array() || c.size() != 2 || std::any_of(c.begin(), c.end(), [](const json& x) {
                    return !x.is_number() || !(std::abs(x.get<double>()) <= 1e7);
                }))
                return fail("view.center: must be [x, y], canvas coordinates within ±1e7");
        }
        if (v.contains("compare")) { // the settings themselves are checked when the window applies them
            const json& c = v["compare"];
            const auto bad = [](const json& x) {
                if (!x.is_string())
                    return true;
                const std::string set = x.get<std::string>();
                return set.size() > kMaxSetBytes || set.rfind("kernel.", 0) != 0 || set.find('=') == std::string::npos
                    || printable(set) != set;
            };
            if (!c.is_array() || c.size() > kMaxCompareSets || std::any_of(c.begin(), c.end(), bad))
                return fail("view.compare: must be run B's kernel settings, [\"kernel.path=value\", ...], at most "
                    + std::to_string(kMaxCompareSets));
        }
        s.view = v;
    }
    return s;
}

Result<Scenario> Session::scenarioOf() const
{
    auto sc = ScenarioLoader::fromJson(scenario);
    if (!sc)
        return Result<Scenario>::failure("scenario: " + sc.error());
    return sc;
}

namespace {

Result<std::unique_ptr<Engine>> replayed(const Session& s, Session::To to, SimTime t, std::uint64_t n)
{
    auto sc = s.scenarioOf();
    if (!sc)
        return EngineResult::failure(sc.error());
    auto e = std::make_unique<Engine>(*sc);
    if (std::string err = s.replayInto(*e, to, t, n); !err.empty())
        return EngineResult::failure(err);
    return e;
}

// An engine is at a moment of the run whose commands are `all` when the commands it took are where
// `all` begin and the next of `all` is not due before where it stands.
bool takenSoFar(const Engine& e, const std::vector<Engine::AppliedCommand>& all)
{
    const auto& head = e.appliedCommands();
    return head.size() <= all.size() && std::equal(head.begin(), head.end(), all.begin())
        && (head.size() == all.size() || all[head.size()].event >= e.events());
}

// ... and a checkpoint is a moment of the run `e` replays when both were built on the same scenario, too.
bool sameRun(const Engine& checkpoint, const Engine& e, const std::vector<Engine::AppliedCommand>& all)
{
    const auto doc = [](const std::string& text) { return nlohmann::json::parse(text, nullptr, false); };
    return takenSoFar(checkpoint, all) && doc(checkpoint.loadedScenarioJson()) == doc(e.loadedScenarioJson());
}

} // namespace

Result<std::unique_ptr<Engine>> Session::replay() const { return replayed(*this, To::Moment, {}, 0); }
Result<std::unique_ptr<Engine>> Session::replayTo(SimTime t) const { return replayed(*this, To::Time, t, 0); }
Result<std::unique_ptr<Engine>> Session::replayToEvent(std::uint64_t n) const
{
    return replayed(*this, To::Event, {}, n);
}

bool Session::replayUntil(Engine& e, StopCondition& until, std::uint64_t maxEvents, std::string& error) const
{
    if (!takenSoFar(e, commands)) {
        error = "the run is not at a moment of the session's run: it took other commands";
        return false;
    }
    std::size_t next = e.appliedCommands().size();
    const std::uint64_t limit = maxEvents > UINT64_MAX - e.events() ? UINT64_MAX : e.events() + maxEvents;
    for (;;) {
        if (error = applyAt(e, commands, next); !error.empty())
            return false;
        if (next >= commands.size()) // the run's commands are made: on as the run itself goes
            return e.runUntil(until, limit - e.events());
        EventsReached command(std::min(limit, commands[next].event));
        Either stop(until, command);
        if (!e.runUntil(stop))
            return false; // the scenario ended
        if (stop.firstHeld())
            return true;
        if (e.events() >= limit)
            return false;
    }
}

std::string Session::replayInto(
    Engine& engine, To to, SimTime t, std::uint64_t n, const Checkpoints* from, std::uint64_t history) const
{
    Engine* e = &engine;
    std::size_t next = 0;
    if (e->events() > 0 || !e->appliedCommands().empty()) { // a moment of this run already: on from it
        if (!takenSoFar(*e, commands))
            return "the run is not at a moment of the session's run: it took other commands";
        next = e->appliedCommands().size();
        from = nullptr;
    }
    const Engine* start = !from ? nullptr
        : to == To::Time        ? from->atTime(t)
        : to == To::Event       ? from->atEvent(n)
                                : from->atEvent(events);
    if (start && history > 0)
        start = from->atEvent(start->events() > history ? start->events() - history : 0);
    if (start && sameRun(*start, engine, commands)) {
        e->restore(*start);
        next = start->appliedCommands().size();
    }
    if (std::string err = applyAt(*e, commands, next); !err.empty())
        return err;
    if (to == To::Time) {
        while (next < commands.size()) {
            EventsReached stop(commands[next].event);
            if (!e->runUntil(t, stop))
                break; // t comes first
            const std::size_t before = next;
            if (std::string err = applyAt(*e, commands, next, t); !err.empty())
                return err;
            if (next == before)
                break; // made after t
        }
        e->runUntil(t);
        return {};
    }
    if (to == To::Event) {
        while (e->events() < n) {
            EventsReached stop(next < commands.size() ? std::min(n, commands[next].event) : n);
            if (!e->runUntil(stop))
                break; // the scenario ended first
            if (std::string err = applyAt(*e, commands, next); !err.empty())
                return err;
        }
        return {};
    }
    const auto diverged = [&](const std::string& what) {
        const std::string after = next == 0 ? std::string("before the first command")
                                            : "after commands[" + std::to_string(next - 1) + "] (event "
                + std::to_string(commands[next - 1].event) + ")";
        return "the replay diverged " + after + ": " + what
            + "; the session was written by another build of the lab, or edited";
    };
    const SimTime at(at_ns);
    for (;;) { // to each command's event index in turn, then to the session's own
        const std::uint64_t goal = next < commands.size() ? commands[next].event : events;
        if (e->events() < goal) {
            EventsReached stop(goal);
            if (!e->runUntil(at, stop))
                return diverged("the run reached " + std::to_string(at_ns) + " ns after " + std::to_string(e->events())
                    + " events, not " + std::to_string(goal));
        }
        if (next == commands.size())
            break;
        if (std::string err = applyAt(*e, commands, next); !err.empty())
            return err;
    }
    if (e->now() < at)
        e->runUntil(at);
    if (e->events() != events)
        return diverged(
            std::to_string(e->events()) + " events by " + std::to_string(at_ns) + " ns, not " + std::to_string(events));
    if (e->fingerprint() != fingerprint)
        return diverged("fingerprint " + e->fingerprint() + " at event " + std::to_string(events) + ", not "
            + printable(fingerprint));
    return {};
}

} // namespace blkmq
