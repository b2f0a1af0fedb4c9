#include "engine/StopCondition.h"

#include "block/BlockLayer.h"
#include "engine/Engine.h"
#include "io/Text.h"
#include "sim/Duration.h"

#include <algorithm>

namespace blkmq::stop {

namespace {

class At final : public StopCondition {
public:
    explicit At(SimTime t)
        : m_t(t)
    {
    }
    bool reached(const Engine& e) const override { return e.now() >= m_t; }
    std::string describe() const override { return "the clock reaches " + formatDuration(m_t); }

private:
    SimTime m_t;
};

class CounterChanges final : public StopCondition {
public:
    explicit CounterChanges(const CounterField& c)
        : m_counter(c)
    {
    }
    void arm(Engine& e) override { m_base = e.counters().*m_counter.field; }
    bool reached(const Engine& e) const override { return e.counters().*m_counter.field != m_base; }
    std::string describe() const override { return std::string(m_counter.name) + " changes"; }

private:
    CounterField m_counter;
    std::uint64_t m_base = 0;
};

// A trace sink for the length of the run: it sees every record, so any kind can be waited for.
class Event final : public StopCondition, TraceSink {
public:
    explicit Event(TraceKind k)
        : m_kind(k)
    {
    }
    void arm(Engine& e) override
    {
        m_seen = false;
        m_attached = e.addTraceSink(this);
    }
    void disarm(Engine& e) override
    {
        if (m_attached)
            e.removeTraceSink(this);
        m_attached = false;
    }
    bool reached(const Engine&) const override { return m_seen; }
    std::string describe() const override { return "the next " + std::string(traceKindName(m_kind).label) + " event"; }
    void record(const TraceRecord& r) override { m_seen |= r.kind == m_kind; }

private:
    TraceKind m_kind;
    bool m_seen = false;
    bool m_attached = false;
};

class Stall final : public StopCondition {
public:
    void arm(Engine& e) override { m_before = e.stallDetected(); }
    bool reached(const Engine& e) const override { return e.stallDetected() && !m_before; }
    std::string describe() const override { return "the stall detector fires"; }

private:
    bool m_before = false; // it fires once per run
};

class RestartSet final : public StopCondition {
public:
    explicit RestartSet(int hctx)
        : m_hctx(hctx)
    {
    }
    bool reached(const Engine& e) const override
    {
        const auto& r = e.block().restart();
        if (m_hctx >= 0)
            return m_hctx < static_cast<int>(e.block().hctxs().size()) && r.marked(m_hctx);
        for (int h = 0; h < static_cast<int>(e.block().hctxs().size()); ++h)
            if (r.marked(h))
                return true;
        return false;
    }
    std::string describe() const override
    {
        return m_hctx >= 0 ? "RESTART is set on hctx " + std::to_string(m_hctx) : "RESTART is set on an hctx";
    }

private:
    int m_hctx;
};

class AnyOf final : public StopCondition {
public:
    explicit AnyOf(std::vector<StopPtr> c)
        : m_conditions(std::move(c))
    {
    }
    void arm(Engine& e) override
    {
        for (auto& c : m_conditions)
            c->arm(e);
    }
    void disarm(Engine& e) override
    {
        for (auto& c : m_conditions)
            c->disarm(e);
    }
    bool reached(const Engine& e) const override
    {
        return std::any_of(m_conditions.begin(), m_conditions.end(), [&](const StopPtr& c) { return c->reached(e); });
    }
    std::string describe() const override
    {
        std::string s;
        for (const auto& c : m_conditions)
            s.append(s.empty() ? "" : ", or ").append(c->describe());
        return s;
    }

private:
    std::vector<StopPtr> m_conditions;
};

const CounterField* findCounter(std::string_view name)
{
    for (const CounterField& c : kCounterFields)
        if (c.name == name)
            return &c;
    return nullptr;
}

std::string counterNames()
{
    std::string s;
    for (const CounterField& c : kCounterFields)
        s.append(s.empty() ? "" : ", ").append(c.name);
    return s;
}

std::string eventNames()
{
    std::string s;
    for (const TraceKindName& k : kTraceKindNames)
        s.append(s.empty() ? "" : ", ").append(k.id);
    return s;
}

// The registered forms: adding a condition is one class above and one row here.
struct Form {
    std::string_view name;
    std::string_view arg; // "" = takes none
    std::string_view what;
    Result<StopPtr> (*make)(std::string_view arg);
};

const Form kForms[] = {
    { "time", "DURATION", "the clock reaches DURATION (e.g. 2ms)",
        [](std::string_view a) -> Result<StopPtr> {
            const auto d = parseDuration(a);
            if (!d)
                return Result<StopPtr>::failure("time: '" + printable(a) + "' is not a duration (e.g. 250us, 2ms)");
            return StopPtr(at(*d));
        } },
    { "counter", "NAME", "the counter NAME changes",
        [](std::string_view a) -> Result<StopPtr> {
            const CounterField* c = findCounter(a);
            if (!c)
                return Result<StopPtr>::failure(
                    "counter: '" + printable(a) + "' is not a counter; valid values are: " + counterNames());
            return StopPtr(counterChanges(*c));
        } },
    { "event", "KIND", "the next trace event of KIND",
        [](std::string_view a) -> Result<StopPtr> {
            for (std::size_t k = 0; k < std::size(kTraceKindNames); ++k)
                if (kTraceKindNames[k].id == a)
                    return StopPtr(event(static_cast<TraceKind>(k)));
            return Result<StopPtr>::failure(
                "event: '" + printable(a) + "' is not an event kind; valid values are: " + eventNames());
        } },
    { "stall", "", "the stall detector fires", [](std::string_view) -> Result<StopPtr> { return StopPtr(stall()); } },
    { "restart-set", "[HCTX]", "RESTART is set on hctx HCTX (global index; any hctx without one)",
        [](std::string_view a) -> Result<StopPtr> {
            if (a.empty())
                return StopPtr(restartSet(-1));
            if (a.size() > 9 || a.find_first_not_of("0123456789") != std::string_view::npos)
                return Result<StopPtr>::failure("restart-set: '" + printable(a) + "' is not an hctx index");
            return StopPtr(restartSet(std::stoi(std::string(a))));
        } },
    { "interesting", "",
        "an IPI, a ksoftirqd wake-up, RESTART set, a restart or a skipped one, a requeue or a stall (the GUI's Next "
        "interesting)",
        [](std::string_view) -> Result<StopPtr> { return StopPtr(interesting()); } },
};

Result<StopPtr> parseOne(std::string_view text)
{
    const auto colon = text.find(':');
    const std::string_view name = text.substr(0, colon);
    const std::string_view arg = colon == std::string_view::npos ? std::string_view {} : text.substr(colon + 1);
    for (const Form& f : kForms) {
        if (f.name != name)
            continue;
        if (f.arg.empty() && !arg.empty())
            return Result<StopPtr>::failure(printable(name) + " takes no argument");
        if (!f.arg.empty() && f.arg.front() != '[' && arg.empty())
            return Result<StopPtr>::failure(printable(name) + " needs :" + std::string(f.arg));
        return f.make(arg);
    }
    std::string message = "'";
    message.append(printable(name)).append("' is not a stop condition; valid values are: ");
    for (const Form& f : kForms)
        message.append(&f == kForms ? "" : ", ").append(f.name);
    return Result<StopPtr>::failure(message);
}

} // namespace

StopPtr at(SimTime t) { return std::make_unique<At>(t); }
StopPtr counterChanges(const CounterField& counter) { return std::make_unique<CounterChanges>(counter); }
StopPtr event(TraceKind kind) { return std::make_unique<Event>(kind); }
StopPtr stall() { return std::make_unique<Stall>(); }
StopPtr restartSet(int hctx) { return std::make_unique<RestartSet>(hctx); }
StopPtr anyOf(std::vector<StopPtr> conditions) { return std::make_unique<AnyOf>(std::move(conditions)); }

const std::vector<InterestingCounter>& interestingCounters()
{
    static const std::vector<InterestingCounter> table {
        { "ipis", "an IPI was sent" },
        { "ksoftirqd_wakeups", "ksoftirqd was woken" },
        { "restart_marks", "RESTART was set" },
        { "restarts", "a marked hctx was restarted" },
        { "restart_skips", "blk_mq_sched_restart() returned early" },
        { "requeued", "a request was requeued" },
    };
    return table;
}

StopPtr interesting()
{
    std::vector<StopPtr> c;
    for (const InterestingCounter& i : interestingCounters())
        c.push_back(counterChanges(*findCounter(i.counter)));
    c.push_back(stall());
    return anyOf(std::move(c));
}

Result<StopPtr> parse(std::string_view text)
{
    if (text.empty())
        return Result<StopPtr>::failure("an empty stop condition; valid forms: " + help());
    std::vector<StopPtr> all;
    for (std::size_t begin = 0; begin <= text.size();) {
        const auto bar = std::min(text.find('|', begin), text.size());
        auto one = parseOne(text.substr(begin, bar - begin));
        if (!one)
            return one;
        all.push_back(std::move(*one));
        begin = bar + 1;
    }
    if (all.size() == 1)
        return std::move(all.front());
    return anyOf(std::move(all));
}

std::string help()
{
    std::string s;
    for (const Form& f : kForms) {
        std::string form(f.name);
        if (f.arg.starts_with('['))
            form.append("[:").append(f.arg.substr(1));
        else if (!f.arg.empty())
            form.append(":").append(f.arg);
        form.resize(std::max<std::size_t>(form.size() + 2, 22), ' ');
        s.append("  ").append(form).append(f.what).append("\n");
    }
    return s;
}

} // namespace blkmq::stop
