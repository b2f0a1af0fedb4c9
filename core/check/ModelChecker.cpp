// blkmqlab-cli check: every ordering of a small configuration's choice points (sim/Choices.h),
// run by run, with the property checked after every event (docs/check.md).
#include "check/ModelChecker.h"

#include "block/BlockLayer.h"
#include "engine/Engine.h"
#include "engine/StopCondition.h"
#include "scenario/ScenarioLoader.h"
#include "sim/Duration.h"
#include "workload/Workload.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace blkmq {

const std::vector<PropertyInfo>& checkProperties()
{
    static const std::vector<PropertyInfo> table {
        { CheckProperty::NoStall, "no-stall",
            "the stall detector never fires: no request waits longer than stall_age, none is left where nothing "
            "will ever dispatch it, and no submitter sleeps for a tag longer than stall_age" },
        { CheckProperty::NoTagLost, "no-tag-lost",
            "every driver tag is always either in use or free where an allocation can find it (counted from the "
            "allocator's free lists, not from its lost-tag counter)" },
        { CheckProperty::NoMissedWakeup, "no-missed-wakeup",
            "no allocation fails and sleeps while another CPU's cache holds free tags its cpus_have_tags bit hides" },
        { CheckProperty::AllComplete, "all-complete",
            "at the end of the run every request has completed and every job has submitted all of its number_ios" },
        { CheckProperty::CompleteOnceWhereChosen, "complete-once",
            "every request's ->complete runs once per submission, on the CPU blk_mq_complete_request() chose (the "
            "submitting CPU when it redirected the request, else its own), and at the end all have completed" },
    };
    return table;
}

const PropertyInfo* findProperty(const std::string& name)
{
    for (const PropertyInfo& p : checkProperties())
        if (name == p.name)
            return &p;
    return nullptr;
}

std::string vacuous(CheckProperty p, const Scenario& s)
{
    switch (p) {
    case CheckProperty::NoStall:
        return {};
    case CheckProperty::NoTagLost:
    case CheckProperty::NoMissedWakeup:
        if (s.kernel.tags != "percpu_ida")
            return "the tags are " + s.kernel.tags
                + ", which keep no free tag in a per-CPU cache; only percpu_ida (kernel.tags=percpu_ida) can "
                  "lose a tag or hide one from a waiter";
        return {};
    case CheckProperty::AllComplete:
    case CheckProperty::CompleteOnceWhereChosen:
        for (const JobSpec& j : s.jobs)
            if (j.number_ios == 0)
                return "job '" + j.name
                    + "' has no number_ios, so it submits until the run ends and never completes all of its "
                      "I/O; give every job a number_ios";
        return {};
    }
    return {};
}

std::string describeChoice(const Choice& c)
{
    switch (c.kind) {
    case ChoiceKind::Latency:
        return "the device takes " + formatDuration(SimTime(c.value));
    case ChoiceKind::Bypass:
        return c.value ? "the request bypasses the scheduler onto hctx->dispatch"
                       : "the request goes into the scheduler";
    case ChoiceKind::NetGap:
        return "the next packet comes " + formatDuration(SimTime(c.value)) + " later";
    case ChoiceKind::Hold: {
        const std::string cpu = "CPU " + std::to_string(c.value & 0xffff);
        if (c.taken == 0)
            return cpu + " goes on from its lock boundary at once";
        return cpu + " is held at its lock boundary for " + formatDuration(SimTime(c.value >> 16))
            + ", until the next pending event has happened";
    }
    case ChoiceKind::SameTime: {
        const auto kind = static_cast<EventKind>(c.value >> 32);
        const int a = static_cast<std::int32_t>(static_cast<std::uint32_t>(c.value));
        std::string what;
        switch (kind) {
        case EventKind::CpuBoundary:
            what = "CPU " + std::to_string(a) + "'s next action";
            break;
        case EventKind::IrqRaise:
            what = "the interrupt on CPU " + std::to_string(a);
            break;
        case EventKind::DeviceDone:
            what = "the device's completion of request #" + std::to_string(a);
            break;
        case EventKind::TaskWake:
            what = "the wake-up of task " + std::to_string(a);
            break;
        case EventKind::NetPacket:
            what = "a packet on CPU " + std::to_string(a);
            break;
        case EventKind::RtPeriod:
            what = "the end of CPU " + std::to_string(a) + "'s RT throttling period";
            break;
        default:
            what = "event kind " + std::to_string(static_cast<int>(kind));
            break;
        }
        return "of " + std::to_string(c.options) + " things due at this instant, " + what + " comes first";
    }
    }
    return "?";
}

void CompletionWatch::record(const TraceRecord& r)
{
    if (r.kind != TraceKind::Submit && r.kind != TraceKind::Complete)
        return;
    if (r.rq < 0)
        return;
    const auto rq = static_cast<std::size_t>(r.rq);
    if (rq >= m_completed.size())
        m_completed.resize(rq + 1, false);
    if (r.kind == TraceKind::Submit) {
        m_completed[rq] = false;
        return;
    }
    if (!problem.empty())
        return;
    const BlockLayer& b = m_engine.block();
    const Request& q = b.request(r.rq);
    const std::string name = b.requestName(r.rq);
    if (m_completed[rq]) {
        problem = name + "'s ->complete ran a second time, on CPU " + std::to_string(r.cpu);
        return;
    }
    m_completed[rq] = true;
    if (q.completeCpu < 0)
        return; // completed in ->queue_rq or by a driver thread: no choice was made
    const int chosen = q.redirected ? q.cpu : q.completeCpu;
    if (r.cpu != chosen)
        problem = name + "'s ->complete ran on CPU " + std::to_string(r.cpu) + ", but blk_mq_complete_request() on CPU "
            + std::to_string(q.completeCpu) + " chose CPU " + std::to_string(chosen)
            + (q.redirected ? " (the submitting CPU)" : " (its own)");
}

std::string ModelChecker::violation(const Engine& e, CheckProperty p, bool atEnd, const std::string& seen)
{
    switch (p) {
    case CheckProperty::NoStall:
        return e.stallDetected() ? e.stallExplanation() : std::string();
    case CheckProperty::NoTagLost: {
        const BlockLayer& b = e.block();
        for (std::size_t t = 0; t < b.tagsCount(); ++t) {
            const TagAllocator& a = b.tags(static_cast<int>(t)).alloc();
            const int missing = a.depth() - a.inUse() - a.findableFree();
            if (missing > 0) {
                for (const Marker& m : e.tagRaces())
                    if (m.text.find("lost") != std::string::npos)
                        return m.text;
                return std::to_string(missing) + " tag(s) of " + b.tagsName(static_cast<int>(t))
                    + " neither in use nor on any free list";
            }
        }
        return {};
    }
    case CheckProperty::NoMissedWakeup:
        if (e.counters().tag_missed_wakeups == 0)
            return {};
        for (const Marker& m : e.tagRaces())
            if (m.text.find("went to sleep") != std::string::npos)
                return m.text;
        return "an allocation slept while free tags were hidden (tags.missed_wakeups)";
    case CheckProperty::CompleteOnceWhereChosen:
        if (!seen.empty())
            return seen;
        [[fallthrough]];
    case CheckProperty::AllComplete: {
        if (!atEnd)
            return {};
        const int inFlight = e.block().inFlight();
        std::int64_t left = 0;
        for (const Job& j : e.workload().jobs())
            left += std::max<std::int64_t>(0, j.ioLeft);
        if (inFlight == 0 && left == 0)
            return {};
        return "at the end, " + std::to_string(inFlight) + " request(s) had not completed and the jobs had "
            + std::to_string(left) + " I/O(s) left to submit";
    }
    }
    return {};
}

ModelChecker::ModelChecker(const Scenario& scenario, CheckProperty property, CheckBounds bounds)
    : m_scenario(scenario)
    , m_property(property)
    , m_bounds(bounds)
{
    m_scenario.choices.on = true;
    m_scenario.choices.latency_points = bounds.latencyPoints;
    m_scenario.choices.lock_boundaries = m_scenario.choices.lock_boundaries || bounds.lockBoundaries;
    m_scenario.choices.taken.clear();
}

namespace {
constexpr double kMaxLog10Events = 10; // about an hour at 3 M events/s
}

std::string ModelChecker::tooLarge() const
{
    Engine e(m_scenario);
    e.limitChoices(m_bounds.maxDepth);
    e.run();
    const std::vector<Choice>& made = e.choices().made;
    double log10Paths = 0;
    for (const Choice& c : made)
        log10Paths += std::log10(static_cast<double>(c.options));
    // A search may prune (a violation found early bounds the rest), so up to a thousand times the
    // run bound is let through, to end as unfinished if it must. Its work: as many runs as that (at
    // most --max-runs), each as long as the first.
    const double log10Events = std::min(log10Paths, std::log10(static_cast<double>(m_bounds.maxRuns)))
        + std::log10(static_cast<double>(std::max<std::uint64_t>(1, e.events())));
    if (log10Paths <= std::log10(static_cast<double>(m_bounds.maxRuns)) + 3 && log10Events <= kMaxLog10Events)
        return {};
    char paths[32];
    if (log10Paths <= std::log10(static_cast<double>(m_bounds.maxRuns)) + 3) {
        std::snprintf(paths, sizeof paths, "%.0f", log10Events);
        return "its first run takes " + std::to_string(e.events()) + " events: the search would take about 10^" + paths
            + " events, more than an hour: shorten the duration, make the configuration smaller, or "
            + "lower --max-runs";
    }
    std::snprintf(paths, sizeof paths, "%.0f", log10Paths);
    return "its first run makes " + std::to_string(made.size()) + " choices within --max-depth "
        + std::to_string(m_bounds.maxDepth) + ", about 10^" + paths + " orderings, more than --max-runs "
        + std::to_string(m_bounds.maxRuns)
        + " can try: make the configuration smaller (fewer I/Os with number_ios, a shorter duration, fewer "
          "latency points), or bound the choices searched per run with --max-depth";
}

namespace {
double cpuNow() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }
}

std::size_t ModelChecker::ValueHash::operator()(const StateHash::Value& v) const noexcept
{
    return static_cast<std::size_t>(v.a);
}

CheckResult ModelChecker::run()
{
    const double t0 = cpuNow();
    CheckResult out;
    std::vector<std::uint8_t> path; // the options to take first; every later choice takes 0
    bool found = false;
    std::size_t bestChoices = SIZE_MAX; // of the best violation so far
    std::uint64_t bestEvents = UINT64_MAX;
    std::size_t visitedPrefix = 0; // choices of this run that an earlier run already made
    Visited visited; // every state explored (after an event that made a choice), with its fewest choices
    for (;;) {
        if (out.runs >= m_bounds.maxRuns) {
            out.verdict = CheckResult::Verdict::Unfinished;
            break;
        }
        ++out.runs;
        m_scenario.choices.taken = path;
        Engine e(m_scenario);
        e.limitChoices(m_bounds.maxDepth);
        CompletionWatch watch(e);
        if (m_property == CheckProperty::CompleteOnceWhereChosen)
            e.addTraceSink(&watch);
        // After every event: the property; whether the run is already longer than the best violation;
        // and, after an event that made a choice beyond the path's forced prefix, whether the state
        // was explored before, no deeper (then everything that can follow it was tried too).
        struct Watch : StopCondition {
            ModelChecker& checker;
            Visited& visited;
            CheckResult& out;
            const CompletionWatch& completions;
            std::size_t longest; // choices a run may make and still be shorter than the best
            std::size_t forced; // the path's choices: the states up to its last one were explored before
            mutable std::size_t lastMade = 0;
            mutable std::string why;
            mutable bool cut = false; // past the best violation's length: it cannot be shorter
            mutable bool seen = false; // at a state explored before
            Watch(ModelChecker& c, Visited& v, CheckResult& o, const CompletionWatch& w, std::size_t l, std::size_t f)
                : checker(c)
                , visited(v)
                , out(o)
                , completions(w)
                , longest(l)
                , forced(f)
            {
            }
            bool reached(const Engine& run) const override
            {
                const std::size_t made = run.choices().made.size();
                if (made > longest) {
                    cut = true;
                    return true;
                }
                why = violation(run, checker.m_property, false, completions.problem);
                if (!why.empty())
                    return true;
                if (made == lastMade || made < forced || checker.m_bounds.maxStates == 0)
                    return false;
                lastMade = made;
                StateHash h;
                run.hashState(h);
                completions.hashState(h);
                const auto depth = static_cast<std::uint32_t>(made);
                const auto [it, isNew] = visited.try_emplace(h.value(), depth);
                if (isNew) {
                    if (visited.size() > checker.m_bounds.maxStates) {
                        visited.erase(it);
                        out.tableFull = true;
                    } else {
                        ++out.distinct;
                    }
                    return false;
                }
                if (it->second <= depth) {
                    seen = true;
                    return true;
                }
                it->second = depth; // reached by a shorter path: explored again, to keep the shortest violation
                return false;
            }
            std::string describe() const override { return "a violation"; }
        } stop(*this, visited, out, watch, found ? bestChoices : SIZE_MAX, path.size());
        e.runUntil(stop);
        std::string why = stop.why;
        const bool cut = stop.cut || stop.seen;
        out.revisits += stop.seen ? 1 : 0;
        if (why.empty() && !cut) {
            e.run(); // the end: the clock at the duration, the stall detector's last look
            why = violation(e, m_property, true, watch.problem);
        }
        const std::vector<Choice>& made = e.choices().made;
        out.stateBytes = std::max(out.stateBytes, e.stateBytes());
        out.events += e.events();
        out.states += made.size() - std::min(visitedPrefix, made.size());
        out.deepest = std::max(out.deepest, made.size());
        if (made.size() >= m_bounds.maxDepth)
            out.depthCut = true;
        if (!why.empty() && !cut
            && (!found || made.size() < bestChoices || (made.size() == bestChoices && e.events() < bestEvents))) {
            found = true;
            bestChoices = made.size();
            bestEvents = e.events();
            out.choices = made;
            out.violationEvents = e.events();
            out.violationTime = e.now();
            out.violation = why;
        }
        // The next path: the last choice (within the bound, and before the best violation's length)
        // that has an option left takes it; everything after it starts again from option 0.
        std::size_t limit = std::min(made.size(), m_bounds.maxDepth);
        if (found)
            limit = std::min(limit, bestChoices);
        std::size_t p = limit;
        while (p > 0 && made[p - 1].taken + 1 >= made[p - 1].options)
            --p;
        if (p == 0)
            break; // every path tried
        path.assign(p, 0);
        for (std::size_t i = 0; i + 1 < p; ++i)
            path[i] = made[i].taken;
        path[p - 1] = static_cast<std::uint8_t>(made[p - 1].taken + 1);
        visitedPrefix = p - 1;
    }
    m_scenario.choices.taken.clear();
    // An unordered_map node: the key, the depth and the next pointer, rounded to the allocator's 16
    // bytes, plus its bucket.
    out.tableBytes = visited.empty() ? 0 : visited.size() * 48 + visited.bucket_count() * sizeof(void*);
    if (found) {
        out.verdict = CheckResult::Verdict::Violated;
        nlohmann::json doc = nlohmann::json::parse(m_scenario.sourceJson);
        std::vector<int> taken;
        for (const Choice& c : out.choices)
            taken.push_back(c.taken);
        doc["choices"] = { { "latency_points", m_bounds.latencyPoints },
            { "lock_boundaries", m_scenario.choices.lock_boundaries }, { "taken", taken } };
        const std::string property = [this] {
            for (const PropertyInfo& p : checkProperties())
                if (p.id == m_property)
                    return std::string(p.name);
            return std::string();
        }();
        doc["name"] = m_scenario.name + "-" + property + "-counterexample";
        doc["description"] = "The shortest run of " + m_scenario.name + " that violates " + property
            + " (blkmqlab-cli check, " + std::to_string(out.runs) + " runs searched): " + std::to_string(taken.size())
            + " choices (choices.taken), then the first option of every later one. "
            + doc.value("description", std::string());
        out.counterexampleJson = doc.dump();
    }
    out.cpuSeconds = cpuNow() - t0;
    return out;
}

} // namespace blkmq
