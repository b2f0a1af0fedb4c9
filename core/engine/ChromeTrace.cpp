#include "engine/ChromeTrace.h"

#include "block/BlockLayer.h"
#include "cpu/Machine.h"
#include "engine/Engine.h"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace blkmq {

namespace {

// Microseconds with the nanoseconds kept: the trace-event format's unit.
std::string us(std::int64_t ns)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%lld.%03lld", ns < 0 ? "-" : "", static_cast<long long>(std::llabs(ns) / 1000),
        static_cast<long long>(std::llabs(ns) % 1000));
    return buf;
}

std::string quoted(const std::string& s) { return nlohmann::json(s).dump(); }

// The interrupt level a slice runs at: 2 hardirq, 1 the softirq irq_exit runs (no task), 0 a task
// (ksoftirqd, an irq thread or a task's local_bh_enable run their softirqs at task level).
int levelOf(const TraceSlice& s)
{
    if (s.context == ExecContext::Hardirq)
        return 2;
    return s.task < 0 && s.context == ExecContext::Softirq ? 1 : 0;
}

} // namespace

ChromeTrace::ChromeTrace(const Engine& engine, Options options)
    : m_engine(engine)
    , m_options(options)
{
    const Topology& topo = engine.scenario().topology;
    const int cpus = topo.nrCpus();
    int nodes = 0;
    for (int c = 0; c < cpus; ++c) {
        m_node.push_back(topo.cpu(c).node);
        nodes = std::max(nodes, topo.cpu(c).node + 1);
    }
    m_counterPid = nodes;
    m_spans.assign(static_cast<std::size_t>(cpus) * 2, {});
    m_lastEnd.assign(static_cast<std::size_t>(cpus), 0);
    m_pending.assign(static_cast<std::size_t>(cpus), {});
    // Names first (metadata events do not count against the cap).
    std::string meta;
    for (int n = 0; n < nodes; ++n)
        meta += "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + std::to_string(n) + ",\"args\":{\"name\":\"node "
            + std::to_string(n) + "\"}},\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":" + std::to_string(n)
            + ",\"args\":{\"sort_index\":" + std::to_string(n) + "}},\n";
    meta += "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + std::to_string(m_counterPid)
        + ",\"args\":{\"name\":\"blk-mq\"}},\n";
    for (int c = 0; c < cpus; ++c)
        meta += "{\"ph\":\"M\",\"name\":\"thread_name\"," + where(c) + ",\"args\":{\"name\":\"CPU " + std::to_string(c)
            + "\"}},\n{\"ph\":\"M\",\"name\":\"thread_sort_index\"," + where(c)
            + ",\"args\":{\"sort_index\":" + std::to_string(c) + "}},\n";
    m_body = std::move(meta);
}

std::string ChromeTrace::where(int cpu) const
{
    return "\"pid\":" + std::to_string(m_node[static_cast<std::size_t>(cpu)]) + ",\"tid\":" + std::to_string(cpu);
}

bool ChromeTrace::inWindow(std::int64_t begin, std::int64_t end) const
{
    return end >= m_options.from.ns() && begin <= m_options.to.ns();
}

void ChromeTrace::add(const std::string& event)
{
    if (m_events >= m_options.maxEvents) {
        m_truncated = true;
        return;
    }
    ++m_events;
    m_body.append(event).append(",\n");
}

void ChromeTrace::closeSpan(int cpu, int level)
{
    Span& span = m_spans[static_cast<std::size_t>(cpu) * 2 + static_cast<std::size_t>(level - 1)];
    if (!span.open)
        return;
    span.open = false;
    if (inWindow(span.begin, span.end))
        add("{\"ph\":\"X\",\"name\":\"" + std::string(level == 2 ? "hardirq" : "softirq (irq_exit)") + "\",\"cat\":\""
            + (level == 2 ? "hardirq" : "softirq") + "\"," + where(cpu) + ",\"ts\":" + us(span.begin)
            + ",\"dur\":" + us(span.end - span.begin) + "}");
}

void ChromeTrace::slice(const TraceSlice& s)
{
    const int level = levelOf(s);
    // Spans above this level end; so do all when the CPU was idle since its last action. A softirq
    // that resumes after a hardirq keeps its span, which then holds the hardirq's.
    std::int64_t& lastEnd = m_lastEnd[static_cast<std::size_t>(s.cpu)];
    const bool idleBefore = s.begin > lastEnd;
    lastEnd = s.end;
    for (int l = 2; l >= 1; --l) {
        const Span& span = m_spans[static_cast<std::size_t>(s.cpu) * 2 + static_cast<std::size_t>(l - 1)];
        if (span.open && (l > level || idleBefore))
            closeSpan(s.cpu, l);
    }
    if (level > 0) {
        Span& span = m_spans[static_cast<std::size_t>(s.cpu) * 2 + static_cast<std::size_t>(level - 1)];
        if (!span.open) {
            span.open = true;
            span.begin = s.begin;
        }
        span.end = s.end;
    }
    if (!inWindow(s.begin, s.end))
        return;
    const Machine& m = m_engine.machine();
    const OpName name = m.opName({ s.owner, s.code, s.arg, 0 });
    std::string args = "\"context\":\"" + std::string(execContextName(s.context)) + "\"";
    if (s.task >= 0)
        args += ",\"task\":\"" + std::string(taskKindName(m.task(s.task).kind)) + "\"";
    add("{\"ph\":\"X\",\"name\":" + quoted(name.path) + ",\"cat\":\"" + execContextName(s.context) + "\","
        + where(s.cpu) + ",\"ts\":" + us(s.begin) + ",\"dur\":" + us(s.end - s.begin) + ",\"args\":{" + args + "}}");
}

void ChromeTrace::flow(const char* name, std::uint64_t id, int from, std::int64_t fromAt, int to, std::int64_t toAt)
{
    if (!inWindow(fromAt, fromAt) || !inWindow(toAt, toAt) || m_events + 2 > m_options.maxEvents) {
        m_truncated |= m_events + 2 > m_options.maxEvents;
        return;
    }
    const std::string common
        = std::string("\"name\":\"") + name + "\",\"cat\":\"" + name + "\",\"id\":" + std::to_string(id);
    add("{\"ph\":\"s\"," + common + "," + where(from) + ",\"ts\":" + us(fromAt) + "}");
    add("{\"ph\":\"f\",\"bp\":\"e\"," + common + "," + where(to) + ",\"ts\":" + us(toAt) + "}");
}

void ChromeTrace::record(const TraceRecord& r)
{
    const int cpus = static_cast<int>(m_node.size());
    switch (r.kind) {
    case TraceKind::IpiSend: // ends at the target's next call-function interrupt
        if (r.cpu >= 0 && r.arg >= 0 && r.arg < cpus)
            m_pending[static_cast<std::size_t>(r.arg)].push_back({ m_nextFlow++, r.cpu, r.time });
        break;
    case TraceKind::IrqEnter:
        if (r.cpu >= 0 && r.arg == static_cast<int>(IrqKind::CallFunction)) {
            for (const PendingFlow& f : m_pending[static_cast<std::size_t>(r.cpu)])
                flow("IPI", f.id, f.from, f.at, r.cpu, r.time);
            m_pending[static_cast<std::size_t>(r.cpu)].clear();
        }
        break;
    case TraceKind::TagSteal: // from the victim's cache to the stealer
        if (r.cpu >= 0 && r.arg >= 0 && r.arg < cpus && r.arg != r.cpu)
            flow("tag steal", m_nextFlow++, r.arg, r.time, r.cpu, r.time);
        break;
    case TraceKind::Marker:
        m_markers.emplace_back(r.time, r.arg);
        break;
    default:
        break;
    }
}

void ChromeTrace::sample(const Engine& engine)
{
    const std::int64_t now = engine.now().ns();
    if (now <= m_lastSampleNs && m_lastSampleNs > 0)
        return;
    int tags = 0;
    const BlockLayer& block = engine.block();
    for (const auto& set : block.tagSets())
        for (int i = 0; i < set.nrHwQueues; ++i)
            tags += block.tags(set.firstTags + i).alloc().inUse();
    const std::uint64_t completed = engine.counters().completed;
    const double seconds = static_cast<double>(now - m_lastSampleNs) / 1e9;
    const double iops = seconds > 0 ? static_cast<double>(completed - m_lastCompleted) / seconds : 0;
    m_lastSampleNs = now;
    m_lastCompleted = completed;
    if (!inWindow(now, now))
        return;
    const std::string at = "\"pid\":" + std::to_string(m_counterPid) + ",\"ts\":" + us(now);
    add("{\"ph\":\"C\",\"name\":\"requests in flight\"," + at
        + ",\"args\":{\"requests\":" + std::to_string(block.inFlight()) + "}}");
    add("{\"ph\":\"C\",\"name\":\"driver tags in use\"," + at + ",\"args\":{\"tags\":" + std::to_string(tags) + "}}");
    add("{\"ph\":\"C\",\"name\":\"IOPS\"," + at + ",\"args\":{\"iops\":" + nlohmann::json(iops).dump() + "}}");
}

std::string ChromeTrace::finish(const Engine& engine)
{
    for (int c = 0; c < static_cast<int>(m_node.size()); ++c) {
        closeSpan(c, 2);
        closeSpan(c, 1);
    }
    for (const auto& [t, index] : m_markers)
        if (inWindow(t, t) && index >= 0 && static_cast<std::size_t>(index) < engine.markers().size())
            add("{\"ph\":\"i\",\"s\":\"g\",\"name\":" + quoted(engine.markers()[static_cast<std::size_t>(index)].text)
                + ",\"pid\":" + std::to_string(m_counterPid) + ",\"tid\":0,\"ts\":" + us(t) + "}");
    m_markers.clear();
    std::string body = m_body;
    while (!body.empty() && (body.back() == '\n' || body.back() == ','))
        body.pop_back();
    const nlohmann::json other = { { "scenario", engine.scenario().name }, { "seed", engine.scenario().seed },
        { "fingerprint", engine.fingerprint() }, { "simulated_ns", engine.now().ns() }, { "events", m_events },
        { "truncated", m_truncated }, { "window_ns", { m_options.from.ns(), m_options.to.ns() } },
        { "producer", "BlkMQ Lab (docs/trace.md)" } };
    return "{\"displayTimeUnit\":\"ns\",\"otherData\":" + other.dump() + ",\"traceEvents\":[\n" + body + "\n]}\n";
}

} // namespace blkmq
