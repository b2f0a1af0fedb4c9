// Engine::summary(): the run summary with the stable field names of
// docs/scenario.md ("Run summary").
#include "engine/Engine.h"

#include "block/BlockLayer.h"
#include "cpu/Machine.h"
#include "workload/Workload.h"

#include <nlohmann/json.hpp>

namespace blkmq {

namespace {

nlohmann::json percentiles(const LatencyHistogram& h)
{
    return {
        { "mean", h.mean() },
        { "p50", h.percentile(0.50) },
        { "p90", h.percentile(0.90) },
        { "p99", h.percentile(0.99) },
        { "p999", h.percentile(0.999) },
        { "max", h.max() },
        { "samples", h.count() },
    };
}

double pct(std::uint64_t part, std::uint64_t whole)
{
    return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

} // namespace

nlohmann::json Engine::summary() const
{
    using nlohmann::json;
    const Counters& c = m_sim->counters;
    const double t = m_sim->now.seconds();
    const auto& by = c.complete_by_context;
    const auto ctx = [&](ExecContext e) { return by[static_cast<std::size_t>(e)]; };

    json cpus = json::array();
    std::array<std::int64_t, kExecContexts> total {};
    for (int i = 0; i < m_machine->nrCpus(); ++i) {
        json row = json::object();
        for (int k = 0; k < kExecContexts; ++k) {
            const auto ns = m_machine->cpu(i).busy[static_cast<std::size_t>(k)];
            row[std::string(execContextName(static_cast<ExecContext>(k))) + "_ns"] = ns;
            total[static_cast<std::size_t>(k)] += ns;
        }
        cpus.push_back(row);
    }
    json busy = json::object();
    const double capacity = m_sim->now.ns() > 0 ? static_cast<double>(m_sim->now.ns()) * m_machine->nrCpus() : 1.0;
    for (int k = 0; k < kExecContexts; ++k)
        busy[std::string(execContextName(static_cast<ExecContext>(k))) + "_pct"]
            = 100.0 * static_cast<double>(total[static_cast<std::size_t>(k)]) / capacity;

    const LatencyHistogram& lat = m_workload->jobs().empty() ? m_block->scriptLatency() : m_workload->latency();
    const json stall = {
        { "detected", m_stallDetected },
        { "stuck_requests", m_firstStuckNames.size() },
        { "stuck_at_end", m_stuck.size() },
        { "first_stuck_ns", m_stallDetected ? m_firstStall.ns() : 0 },
        { "explanation", m_stallExplanation },
        { "requests", m_firstStuckNames },
    };
    json markers = json::array();
    for (const Marker& m : m_markers)
        markers.push_back({ { "t_ns", m.t_ns }, { "text", m.text } });

    return {
        { "scenario", m_scenario.name },
        { "seed", m_scenario.seed },
        { "sim_time_ns", m_sim->now.ns() },
        { "topology", { { "name", m_scenario.topology.name() }, { "cpus", m_scenario.topology.nrCpus() } } },
        { "io",
            {
                { "submitted", c.submitted },
                { "completed", c.completed },
                { "reaped", c.reaped },
                { "in_flight", m_block->inFlight() },
                { "iops", t > 0 ? static_cast<double>(c.completed) / t : 0.0 },
                { "bw_mbps", t > 0 ? static_cast<double>(c.bytes) / t / 1e6 : 0.0 },
            } },
        { "latency_ns", percentiles(lat) },
        { "clat_ns", percentiles(m_block->clat()) },
        { "completion",
            {
                { "remote", c.remote },
                { "remote_pct", pct(c.remote, c.completed) },
                { "ipis", c.ipis },
                { "ipis_saved", c.remote - c.ipis },
                { "softirq_raises", c.softirq_raises },
                { "ksoftirqd_wakeups", c.ksoftirqd_wakeups },
                { "delay_ns", percentiles(m_block->completionDelay()) },
                { "by_context",
                    {
                        { "hardirq", ctx(ExecContext::Hardirq) },
                        { "softirq", ctx(ExecContext::Softirq) },
                        { "ksoftirqd", ctx(ExecContext::Ksoftirqd) },
                        { "process", ctx(ExecContext::Task) + ctx(ExecContext::Kworker) },
                        { "irq_thread", ctx(ExecContext::IrqThread) },
                    } },
            } },
        { "dispatch", { { "busy", c.dispatch_busy }, { "requeued", c.requeued } } },
        { "restart",
            {
                { "calls", c.restart_calls },
                { "hctx_visits", c.restart_hctx_visits },
                { "restarts", c.restarts },
                { "cpu_ns", c.restart_cpu_ns },
            } },
        { "stall", stall },
        { "tags",
            {
                { "allocs", c.tag_allocs },
                { "local_hit_pct", pct(c.tag_local_hits, c.tag_allocs) },
                { "steals", c.tag_steals },
                { "cacheline_transfers", c.tag_cacheline_transfers },
                { "lock_wait_ns", c.tag_lock_wait_ns },
                { "sleeps", c.tag_sleeps },
            } },
        { "cpu",
            {
                { "busy", busy },
                { "context_switches", c.context_switches },
                { "hardirqs", c.hardirqs },
                { "per_cpu", cpus },
            } },
        { "markers", markers },
        { "engine",
            {
                { "events", m_events },
                { "wall_s", m_wallSeconds },
                { "events_per_s", m_wallSeconds > 0 ? static_cast<double>(m_events) / m_wallSeconds : 0.0 },
                { "realtime_factor", m_wallSeconds > 0 ? t / m_wallSeconds : 0.0 },
            } },
        { "fingerprint", m_fingerprint.hex() },
    };
}

} // namespace blkmq
