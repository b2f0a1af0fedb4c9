// Engine::summary(): the run summary with the stable field names of
// docs/scenario.md ("Run summary").
#include "engine/Engine.h"

#include "block/BlockLayer.h"
#include "cpu/Machine.h"
#include "workload/Workload.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <numeric>

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

// A count by distance class, named as topology specs name them (self is never a move).
nlohmann::json byDistance(const ByDistance& n)
{
    nlohmann::json out = nlohmann::json::object();
    for (int d = 1; d < kDistanceClasses; ++d)
        out[distanceName(static_cast<Distance>(d))] = n[static_cast<std::size_t>(d)];
    return out;
}

// ftrace's function profile: per CPU that entered the function, as trace_stat prints it; and
// the share of the run each CPU spent inside it (`elapsed`: the simulated time so far).
nlohmann::json functionProfile(const FunctionProfile& p, SimTime elapsed)
{
    nlohmann::json perCpu = nlohmann::json::array();
    std::vector<double> avgs, shares;
    for (std::size_t cpu = 0; cpu < p.cpus().size(); ++cpu) {
        const auto& c = p.cpus()[cpu];
        if (c.hits == 0)
            continue;
        perCpu.push_back({ { "cpu", cpu }, { "hits", c.hits }, { "total_ns", c.total_ns }, { "avg_ns", c.avg_ns() },
            { "s2_us2", c.s2_us2() } });
        avgs.push_back(c.avg_ns());
        if (elapsed.ns() > 0)
            shares.push_back(100.0 * static_cast<double>(c.total_ns) / static_cast<double>(elapsed.ns()));
    }
    // the spread of the per-CPU figures, as one compares them with a trace_stat table
    const auto spread = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v.empty() ? nlohmann::json { { "min", 0 }, { "median", 0 }, { "max", 0 } }
                         : nlohmann::json { { "min", v.front() }, { "median", v[v.size() / 2] }, { "max", v.back() } };
    };
    return { { p.function(),
        { { "hits", p.hits() }, { "total_ns", p.total_ns() }, { "cpu_avg_ns", spread(avgs) },
            { "cpu_time_pct", spread(shares) }, { "per_cpu", perCpu } } } };
}

} // namespace

std::vector<Marker> Engine::tagRaces() const
{
    TagRace loss, miss;
    int lossTags = -1, missTags = -1;
    for (std::size_t t = 0; t < m_block->tagsCount(); ++t) {
        const BlkMqTags& tags = m_block->tags(static_cast<int>(t));
        if (tags.firstLoss().seen() && (!loss.seen() || tags.firstLoss().at < loss.at)) {
            loss = tags.firstLoss();
            lossTags = static_cast<int>(t);
        }
        if (tags.firstMiss().seen() && (!miss.seen() || tags.firstMiss().at < miss.at)) {
            miss = tags.firstMiss();
            missTags = static_cast<int>(t);
        }
    }
    std::vector<Marker> out;
    const auto where = [&](int tags) { return m_block->tagsName(tags); };
    if (loss.seen())
        out.push_back({ loss.at.ns(),
            "CPU " + std::to_string(loss.cpu) + "'s steal_tags() copied CPU " + std::to_string(loss.other)
                + "'s cached tags over its own cache, which an interrupt had refilled between its steps: "
                + std::to_string(loss.count) + " tag(s) of " + where(lossTags)
                + " lost, neither free nor in use again (tags.lost_tags)" });
    if (miss.seen())
        out.push_back({ miss.at.ns(),
            "CPU " + std::to_string(miss.cpu) + " found no tag of " + where(missTags) + " and went to sleep while CPU "
                + std::to_string(miss.other) + "'s cache held " + std::to_string(miss.count)
                + " free tag(s): a second stealer had cleared the cpus_have_tags bit a free had just set "
                  "(tags.missed_wakeups)" });
    std::sort(out.begin(), out.end(), [](const Marker& a, const Marker& b) { return a.t_ns < b.t_ns; });
    return out;
}

MetricValues Engine::totals() const
{
    const MetricSample now = metricSample();
    const MetricSample zero;
    const LatencyHistogram lat = m_workload->latency();
    return computeMetrics({ now, zero, m_sim->now.seconds(), m_machine->nrCpus(), lat, m_workload->tagAllocLatency(),
        m_block->inFlight(), static_cast<int>(m_workload->jobs().size()) });
}

nlohmann::json Engine::summary() const
{
    using nlohmann::json;
    const Counters& c = m_sim->counters;
    const auto& by = c.complete_by_context;
    const auto ctx = [&](ExecContext e) { return by[static_cast<std::size_t>(e)]; };

    json cpus = json::array();
    for (int i = 0; i < m_machine->nrCpus(); ++i) {
        json row = json::object();
        for (int k = 0; k < kExecContexts; ++k) {
            const auto ns = m_machine->cpu(i).busy[static_cast<std::size_t>(k)];
            row[std::string(execContextName(static_cast<ExecContext>(k))) + "_ns"] = ns;
        }
        const CpuState& cpu = m_machine->cpu(i);
        row["tag_allocs"] = cpu.tagAllocs;
        row["tag_local_hit_pct"]
            = cpu.tagAllocs ? 100.0 * static_cast<double>(cpu.tagLocalHits) / static_cast<double>(cpu.tagAllocs) : 0.0;
        cpus.push_back(row);
    }
    // Every rate, share and mean is a metric, under "metrics" by its table id and nowhere else;
    // the sections hold counts, distributions and what happened.
    const MetricValues totals = this->totals();
    json metrics = json::object();
    for (std::size_t i = 0; i < kMetrics.size(); ++i)
        metrics[std::string(kMetrics[i].id)] = totals[i];

    const LatencyHistogram lat = m_workload->latency();
    const json stall = {
        { "detected", m_stallDetected },
        { "stuck_requests", m_firstStuckNames.size() },
        { "stuck_submitters", m_firstStuckSubmitters.size() },
        { "stuck_at_end", m_stuck.size() + m_stuckSubmitters.size() },
        { "first_stuck_ns", m_stallDetected ? m_firstStall.ns() : 0 },
        { "explanation", m_stallExplanation },
        { "requests", m_firstStuckNames },
        { "submitters", m_firstStuckSubmitters },
    };
    json markers = json::array();
    for (const Marker& m : m_markers)
        markers.push_back({ { "t_ns", m.t_ns }, { "text", m.text } });

    json races = json::array();
    for (const Marker& m : tagRaces())
        races.push_back({ { "t_ns", m.t_ns }, { "text", m.text } });

    // perf's view of _raw_spin_lock: time by caller and each caller's share, on every CPU and in the job
    // threads (perf's report for fio's comm: what ran while a job thread was current).
    nlohmann::json byCaller = nlohmann::json::object();
    nlohmann::json jobByCaller = nlohmann::json::object();
    std::uint64_t lockAll = 0;
    std::uint64_t jobLockAll = 0;
    for (int k = 0; k < kLockCallers; ++k) {
        const auto ns = c.lock_ns[static_cast<std::size_t>(k)];
        const auto jobNs = c.job_lock_ns[static_cast<std::size_t>(k)];
        lockAll += ns;
        jobLockAll += jobNs;
        byCaller[std::string(kLockCallerNames[k])]
            = { { "ns", ns }, { "pct", lockSharePct(c.lock_ns, static_cast<LockCaller>(k)) } };
        jobByCaller[std::string(kLockCallerNames[k])]
            = { { "ns", jobNs }, { "pct", lockSharePct(c.job_lock_ns, static_cast<LockCaller>(k)) } };
    }
    const nlohmann::json spinlocks = { { "total_ns", lockAll }, { "by_caller", byCaller },
        { "job_total_ns", jobLockAll }, { "job_by_caller", jobByCaller } };

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
            } },
        { "latency_ns", percentiles(lat) },
        { "clat_ns", percentiles(m_block->clat()) },
        { "completion",
            {
                { "remote", c.remote },
                { "remote_completed", c.completed_redirected },
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
        { "function_profile", functionProfile(m_block->restart().profile(), m_sim->now) },
        { "stall", stall },
        { "tags",
            {
                { "allocs", c.tag_allocs },
                { "steals", c.tag_steals },
                { "steals_by_distance", byDistance(c.tag_steals_from) },
                { "global_moves", c.tag_global_moves },
                { "cacheline_transfers", std::accumulate(c.tag_transfers.begin(), c.tag_transfers.end(), 0ULL) },
                { "cacheline_transfers_by_distance", byDistance(c.tag_transfers) },
                { "cas_retries", c.tag_cas_retries },
                { "lost_tags", c.tag_lost },
                { "missed_wakeups", c.tag_missed_wakeups },
                { "races", races },
                { "lock_wait_ns", c.tag_lock_wait_ns },
                { "sleeps", c.tag_sleeps },
                { "wakeups", c.tag_wakeups },
                { "alloc_latency_ns", percentiles(m_workload->tagAllocLatency()) },
            } },
        { "spinlocks", spinlocks },
        { "jobs",
            {
                { "threads", m_workload->jobs().size() },
            } },
        { "cpu",
            {
                { "context_switches", c.context_switches },
                { "migrations", c.migrations },
                { "rt_throttled", c.rt_throttled },
                { "hardirqs", c.hardirqs },
                { "per_cpu", cpus },
            } },
        { "metrics", metrics },
        { "markers", markers },
        { "engine",
            {
                { "events", m_events },
                { "wall_s", m_wallSeconds },
                { "events_per_s", m_wallSeconds > 0 ? static_cast<double>(m_events) / m_wallSeconds : 0.0 },
                { "realtime_factor", m_wallSeconds > 0 ? m_sim->now.seconds() / m_wallSeconds : 0.0 },
            } },
        { "fingerprint", m_fingerprint.hex() },
    };
}

} // namespace blkmq
