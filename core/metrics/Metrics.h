#pragma once

#include "metrics/Counters.h"
#include "sim/ExecContext.h"
#include "metrics/LatencyHistogram.h"

#include <array>
#include <limits>
#include <cstdint>
#include <string>
#include <string_view>

namespace blkmq {

// The units a metric can have; the table below gives each metric one.
enum class Unit : std::uint8_t { PerSecond, MBps, Percent, Nanoseconds, Count };

struct UnitInfo {
    const char* symbol; // after a value in reports: "/s", " MB/s", "%", " ns", ""
    const char* axis; // a plot axis label (values are multiplied by plotScale first)
    double plotScale;
    int decimals; // in the CSV
};
const UnitInfo& unitInfo(Unit u);

// What every metric is computed from: the counters and busy time at both ends of one interval
// (a sample interval, or the whole run with `before` all zero), the latencies recorded in it and
// the state at its end. A share divides two counts of one event population, so it stays in 0..100.
struct MetricSample {
    Counters counters;
    std::array<std::int64_t, kExecContexts> busy_ns {}; // summed over all CPUs
};

struct MetricInput {
    const MetricSample& now;
    const MetricSample& before;
    double seconds; // length of the interval
    int nrCpus;
    const LatencyHistogram& latency; // submission to reap, recorded in the interval
    const LatencyHistogram& tagAlloc; // first blk_mq_get_tag() to the tag, recorded in the interval
    std::int64_t inFlight; // at the end
    int jobThreads = 0; // fio job threads (numjobs summed over the jobs)

    std::uint64_t delta(std::uint64_t Counters::*field) const { return now.counters.*field - before.counters.*field; }
    std::uint64_t delta(ByDistance Counters::*field, Distance d) const
    {
        const auto k = static_cast<std::size_t>(d);
        return (now.counters.*field)[k] - (before.counters.*field)[k];
    }
    std::uint64_t deltaSum(ByDistance Counters::*field) const
    {
        std::uint64_t n = 0;
        for (int d = 0; d < kDistanceClasses; ++d)
            n += delta(field, static_cast<Distance>(d));
        return n;
    }
    static double pct(std::uint64_t part, std::uint64_t whole)
    {
        return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
    }
    double rate(std::uint64_t Counters::*field) const
    {
        return seconds > 0 ? static_cast<double>(delta(field)) / seconds : 0.0;
    }
    double share(std::uint64_t Counters::*part, std::uint64_t Counters::*whole) const
    {
        const auto w = delta(whole);
        return w ? 100.0 * static_cast<double>(delta(part)) / static_cast<double>(w) : 0.0;
    }
    double cpuShareNs(std::int64_t ns) const // ns of CPU time as % of all CPUs' time in the interval
    {
        return seconds > 0 && nrCpus > 0 ? 100.0 * static_cast<double>(ns) / (seconds * 1e9 * nrCpus) : 0.0;
    }
    double cpuShare(std::uint64_t Counters::*ns) const { return cpuShareNs(static_cast<std::int64_t>(delta(ns))); }
    LockTimes jobLockNs() const // job threads' spinlock time in the interval, by caller
    {
        LockTimes d {};
        for (std::size_t k = 0; k < d.size(); ++k)
            d[k] = now.counters.job_lock_ns[k] - before.counters.job_lock_ns[k];
        return d;
    }
    // % of the job threads' spinlock time, as perf's call graph under fio's _raw_spin_lock
    double lockShare(LockCaller c) const { return lockSharePct(jobLockNs(), c); }
    double jobTimePct(std::uint64_t Counters::*ns) const // fio's usr= / sys=: % of the threads' run time
    {
        return seconds > 0 && jobThreads > 0 ? 100.0 * static_cast<double>(delta(ns)) / (seconds * 1e9 * jobThreads)
                                             : 0.0;
    }
    double busyPct(ExecContext c) const
    {
        const auto k = static_cast<std::size_t>(c);
        return cpuShareNs(now.busy_ns[k] - before.busy_ns[k]);
    }
};

// A metric of an interval in which nothing it averages happened (a latency with no request reaped):
// no value, not 0. Written "nan" in CSV files, null in JSON, a gap in a plot.
inline constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();

// One metric: its stable id (CSV column, summary "metrics" key, sweep and A/B column), what a person
// reads, its unit, the plot it is drawn in (metrics of one group share a plot and a unit; "" = not
// plotted), its curve colour, and how it is computed (in words and in code). Adding a metric is one row of kMetrics.
struct Metric {
    std::string_view id;
    std::string_view label;
    Unit unit;
    std::string_view group;
    std::uint32_t rgb;
    std::string_view how; // how it is computed, for people (docs/scenario.md, blkmqlab-cli metrics)
    double (*compute)(const MetricInput&);
};

// clang-format off
inline constexpr std::array kMetrics {
    Metric { "iops", "IOPS", Unit::PerSecond, "Throughput", 0x21618c,
        "completions / interval",
        [](const MetricInput& m) { return m.rate(&Counters::completed); } },
    Metric { "bw_mbps", "bandwidth", Unit::MBps, "", 0x21618c,
        "bytes completed / interval / 10^6",
        [](const MetricInput& m) { return m.rate(&Counters::bytes) / 1e6; } },
    Metric { "lat_mean_ns", "mean latency", Unit::Nanoseconds, "Latency, submission to reap", 0x1e8449,
        "mean of the latencies recorded in the interval (submission to reap; a script's request: to its completion); none recorded: no value (nan, a gap in the plot)",
        [](const MetricInput& m) { return m.latency.count() ? m.latency.mean() : kNoValue; } },
    Metric { "lat_p99_ns", "p99 latency", Unit::Nanoseconds, "Latency, submission to reap", 0xca6f1e,
        "99th percentile of the same",
        [](const MetricInput& m) { return m.latency.count() ? static_cast<double>(m.latency.percentile(0.99)) : kNoValue; } },
    Metric { "remote_pct", "remote completions", Unit::Percent, "Remote completions", 0xc0392b,
        "completions that had been redirected / completions (both counted at ->complete)",
        [](const MetricInput& m) { return m.share(&Counters::completed_redirected, &Counters::completed); } },
    Metric { "ipis_per_s", "IPIs", Unit::PerSecond, "IPIs, softirq raises, ksoftirqd wake-ups", 0xc0392b,
        "call-function IPIs sent / interval",
        [](const MetricInput& m) { return m.rate(&Counters::ipis); } },
    Metric { "softirq_raises_per_s", "softirq raises", Unit::PerSecond, "IPIs, softirq raises, ksoftirqd wake-ups", 0xd4ac0d,
        "BLOCK softirq raises / interval",
        [](const MetricInput& m) { return m.rate(&Counters::softirq_raises); } },
    Metric { "ksoftirqd_wakeups_per_s", "ksoftirqd wake-ups", Unit::PerSecond, "IPIs, softirq raises, ksoftirqd wake-ups", 0x7d3c98,
        "ksoftirqd wake-ups / interval",
        [](const MetricInput& m) { return m.rate(&Counters::ksoftirqd_wakeups); } },
    Metric { "tag_local_hit_pct", "local tag allocations", Unit::Percent, "Tag allocation", 0x117864,
        "driver tag allocations that touched no cacheline last written elsewhere / allocations",
        [](const MetricInput& m) { return m.share(&Counters::tag_local_hits, &Counters::tag_allocs); } },
    Metric { "tag_lock_wait_pct", "tag lock wait", Unit::Percent, "Tag allocation", 0x943126,
        "ns spent waiting for tag locks / (interval × CPUs)",
        [](const MetricInput& m) { return m.cpuShare(&Counters::tag_lock_wait_ns); } },
    Metric { "tag_steal_pct", "allocations that stole", Unit::Percent, "Tag allocation", 0xc0392b,
        "driver tag allocations that took another CPU's cached tags / allocations",
        [](const MetricInput& m) { return m.share(&Counters::tag_steals, &Counters::tag_allocs); } },
    Metric { "tag_steal_remote_pct", "steals from another node", Unit::Percent, "", 0xc0392b,
        "steals whose victim is on another NUMA node / steals",
        [](const MetricInput& m) { return m.pct(m.delta(&Counters::tag_steals_from, Distance::Remote), m.delta(&Counters::tag_steals)); } },
    Metric { "tag_lines_per_alloc", "tag cachelines moved per allocation", Unit::Count, "", 0x943126,
        "cachelines the tag allocator moved between CPUs (allocations and frees) / allocations",
        [](const MetricInput& m) {
            const auto a = m.delta(&Counters::tag_allocs);
            return a ? static_cast<double>(m.deltaSum(&Counters::tag_transfers)) / static_cast<double>(a) : 0.0;
        } },
    Metric { "tag_lines_near_pct", "tag cachelines from the own node", Unit::Percent, "", 0x943126,
        "of those cachelines, the ones that came from the CPU's own node (SMT sibling, LLC or node) / all of them",
        [](const MetricInput& m) {
            const auto all = m.deltaSum(&Counters::tag_transfers);
            return m.pct(all - m.delta(&Counters::tag_transfers, Distance::Remote), all);
        } },
    Metric { "tag_global_moves_per_s", "percpu_ida global moves", Unit::PerSecond, "", 0xd4ac0d,
        "batches moved between a CPU's cache and percpu_ida's global freelist / interval",
        [](const MetricInput& m) { return m.rate(&Counters::tag_global_moves); } },
    Metric { "tag_cas_retries_per_s", "failed cmpxchg", Unit::PerSecond, "", 0x7d3c98,
        "compare-and-swaps of the cmpxchg allocator that failed and were retried / interval",
        [](const MetricInput& m) { return m.rate(&Counters::tag_cas_retries); } },
    Metric { "tag_alloc_mean_ns", "mean tag allocation", Unit::Nanoseconds, "Tag allocation latency", 0x117864,
        "mean time from a submission's first blk_mq_get_tag() to its tag (steps and sleeps included), allocations in the interval; none: no value",
        [](const MetricInput& m) { return m.tagAlloc.count() ? m.tagAlloc.mean() : kNoValue; } },
    Metric { "tag_alloc_p99_ns", "p99 tag allocation", Unit::Nanoseconds, "Tag allocation latency", 0xca6f1e,
        "99th percentile of the same",
        [](const MetricInput& m) { return m.tagAlloc.count() ? static_cast<double>(m.tagAlloc.percentile(0.99)) : kNoValue; } },
    Metric { "tag_sleeps_per_s", "tag sleeps", Unit::PerSecond, "", 0x7d3c98,
        "allocations that found no tag and slept (or parked the hctx) / interval",
        [](const MetricInput& m) { return m.rate(&Counters::tag_sleeps); } },
    Metric { "tag_wakeups_per_s", "tag wake-ups", Unit::PerSecond, "", 0xd4ac0d,
        "sleeping submitters woken by the allocator's wake-ups / interval",
        [](const MetricInput& m) { return m.rate(&Counters::tag_wakeups); } },
    Metric { "tag_missed_wakeups", "missed tag wake-ups", Unit::Count, "", 0xc0392b,
        "allocations that failed while a CPU cache held free tags its cpus_have_tags bit hid (ida-lock-split), in the interval",
        [](const MetricInput& m) { return static_cast<double>(m.delta(&Counters::tag_missed_wakeups)); } },
    Metric { "tag_lost", "lost tags", Unit::Count, "", 0xc0392b,
        "free tags destroyed by the lock-split memcpy (ida-lock-split), in the interval",
        [](const MetricInput& m) { return static_cast<double>(m.delta(&Counters::tag_lost)); } },
    Metric { "job_usr_pct", "fio usr", Unit::Percent, "Job threads' CPU time (fio usr/sys)", 0x2874a6,
        "job threads' user time (fio_user_ns per I/O) / (interval × job threads)",
        [](const MetricInput& m) { return m.jobTimePct(&Counters::job_user_ns); } },
    Metric { "job_sys_pct", "fio sys", Unit::Percent, "Job threads' CPU time (fio usr/sys)", 0xc0392b,
        "job threads' system time (all else while one is a CPU's current task, interrupts included) / (interval × job threads)",
        [](const MetricInput& m) { return m.jobTimePct(&Counters::job_sys_ns); } },
    Metric { "job_spinlock_pct", "fio in _raw_spin_lock", Unit::Percent, "Spinlocks", 0x943126,
        "job threads' time in spin_lock (spinning, then taking the line) / their CPU time",
        [](const MetricInput& m) {
            const auto cpu = m.delta(&Counters::job_user_ns) + m.delta(&Counters::job_sys_ns);
            std::uint64_t lock = 0;
            for (const auto ns : m.jobLockNs())
                lock += ns;
            return cpu ? 100.0 * static_cast<double>(lock) / static_cast<double>(cpu) : 0.0;
        } },
    Metric { "spinlock_alloc_pct", "from percpu_ida_alloc", Unit::Percent, "Spinlock time by caller", 0x117864,
        "job threads' spinlock time taken by percpu_ida_alloc / all their spinlock time",
        [](const MetricInput& m) { return m.lockShare(LockCaller::PercpuIdaAlloc); } },
    Metric { "spinlock_free_pct", "from percpu_ida_free", Unit::Percent, "Spinlock time by caller", 0xd4ac0d,
        "job threads' spinlock time taken by percpu_ida_free / all their spinlock time",
        [](const MetricInput& m) { return m.lockShare(LockCaller::PercpuIdaFree); } },
    Metric { "spinlock_queue_rq_pct", "from ->queue_rq", Unit::Percent, "Spinlock time by caller", 0x7d3c98,
        "job threads' spinlock time taken by the driver's ->queue_rq (mtip32xx cmd_issue_lock) / all their "
        "spinlock time",
        [](const MetricInput& m) { return m.lockShare(LockCaller::QueueRq); } },
    Metric { "restart_calls_per_s", "RESTART calls", Unit::PerSecond, "RESTART calls", 0x2874a6,
        "blk_mq_sched_restart calls / interval",
        [](const MetricInput& m) { return m.rate(&Counters::restart_calls); } },
    Metric { "restart_cpu_pct", "restart walk", Unit::Percent, "RESTART walk, CPU time", 0xa04000,
        "ns spent in the restart walk / (interval × CPUs)",
        [](const MetricInput& m) { return m.cpuShare(&Counters::restart_cpu_ns); } },
    Metric { "in_flight", "in flight", Unit::Count, "Requests in flight", 0x34495e,
        "requests allocated and not yet completed, at the end of the interval",
        [](const MetricInput& m) { return static_cast<double>(m.inFlight); } },
    Metric { "busy_task_pct", "task", Unit::Percent, "CPU time by context", 0x5d6d7e,
        "ns the CPUs spent in task context / (interval × CPUs)",
        [](const MetricInput& m) { return m.busyPct(ExecContext::Task); } },
    Metric { "busy_hardirq_pct", "hardirq", Unit::Percent, "CPU time by context", 0xc0392b,
        "ns the CPUs spent in hardirq context / (interval × CPUs)",
        [](const MetricInput& m) { return m.busyPct(ExecContext::Hardirq); } },
    Metric { "busy_softirq_pct", "softirq", Unit::Percent, "CPU time by context", 0xd4ac0d,
        "ns the CPUs spent in softirq context / (interval × CPUs)",
        [](const MetricInput& m) { return m.busyPct(ExecContext::Softirq); } },
    Metric { "busy_ksoftirqd_pct", "ksoftirqd", Unit::Percent, "CPU time by context", 0x7d3c98,
        "ns the CPUs spent in ksoftirqd context / (interval × CPUs)",
        [](const MetricInput& m) { return m.busyPct(ExecContext::Ksoftirqd); } },
    Metric { "busy_irq_thread_pct", "irq thread", Unit::Percent, "CPU time by context", 0x117864,
        "ns the CPUs spent in irq thread context / (interval × CPUs)",
        [](const MetricInput& m) { return m.busyPct(ExecContext::IrqThread); } },
    Metric { "busy_kworker_pct", "kworker", Unit::Percent, "CPU time by context", 0x2874a6,
        "ns the CPUs spent in kworker context / (interval × CPUs)",
        [](const MetricInput& m) { return m.busyPct(ExecContext::Kworker); } },
};
// clang-format on

inline constexpr int kMetricCount = static_cast<int>(kMetrics.size());

// The index of a metric by id: a compile-time error for an id the table lacks.
consteval int metricIndex(std::string_view id)
{
    for (int i = 0; i < kMetricCount; ++i)
        if (kMetrics[static_cast<std::size_t>(i)].id == id)
            return i;
    throw "no such metric";
}

// The same at run time (sweep and A/B columns named on a command line); -1 if unknown.
int findMetric(std::string_view id);

// A value for people, with its unit: "1.333M/s", "47.9%", "23.76 µs", "5458.7 MB/s".
std::string formatMetric(const Metric& m, double value);

// The values of every metric over one interval, in table order.
using MetricValues = std::array<double, kMetrics.size()>;
MetricValues computeMetrics(const MetricInput& in);

} // namespace blkmq
