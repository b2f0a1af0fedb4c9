#pragma once

#include "sim/Distance.h"
#include "sim/ExecContext.h"

#include <array>
#include <cstdint>
#include <string_view>

namespace blkmq {

// Who took a spinlock, as perf's call graph under _raw_spin_lock names the caller.
enum class LockCaller : std::uint8_t { PercpuIdaAlloc, PercpuIdaFree, QueueRq };
inline constexpr int kLockCallers = 3;
inline constexpr std::string_view kLockCallerNames[kLockCallers]
    = { "percpu_ida_alloc", "percpu_ida_free", "queue_rq" };
using LockTimes = std::array<std::uint64_t, kLockCallers>;
using ByDistance = std::array<std::uint64_t, kDistanceClasses>; // indexed by Distance
// One caller's share of all spinlock time, in % (0 when no lock was taken).
inline double lockSharePct(const LockTimes& ns, LockCaller c)
{
    std::uint64_t all = 0;
    for (const auto v : ns)
        all += v;
    return all ? 100.0 * static_cast<double>(ns[static_cast<std::size_t>(c)]) / static_cast<double>(all) : 0.0;
}

// Monotonic event counters of one run. Plain data: copied into snapshots and
// subtracted for time-series intervals.
struct Counters {
    std::uint64_t submitted = 0;
    std::uint64_t completed = 0;
    std::uint64_t reaped = 0;
    std::uint64_t bytes = 0;
    // completion
    std::uint64_t remote = 0; // redirect decisions: completions sent to the submitting CPU
    std::uint64_t completed_redirected = 0; // of `completed`, those that were redirected (same event as completed)
    std::uint64_t ipis = 0; // IPIs actually sent (call-function queue was empty)
    std::uint64_t softirq_raises = 0;
    std::uint64_t ksoftirqd_wakeups = 0;
    std::array<std::uint64_t, kExecContexts> complete_by_context {};
    // dispatch / restart
    std::uint64_t dispatch_busy = 0; // ->queue_rq returned BUSY
    std::uint64_t requeued = 0; // put on hctx->dispatch
    std::uint64_t restart_marks = 0; // BLK_MQ_S_SCHED_RESTART set on an hctx
    std::uint64_t restart_calls = 0;
    std::uint64_t restart_skips = 0; // of restart_calls, those that returned at once: the variant's counter was 0
    std::uint64_t restart_hctx_visits = 0;
    std::uint64_t restarts = 0;
    std::uint64_t restart_cpu_ns = 0;
    // tags
    std::uint64_t tag_allocs = 0;
    std::uint64_t tag_local_hits = 0;
    std::uint64_t tag_steals = 0;
    ByDistance tag_steals_from {}; // of tag_steals, by the victim's distance from the stealer
    ByDistance tag_transfers {}; // cachelines the allocators moved, by the distance they came from
    std::uint64_t tag_global_moves = 0; // percpu_ida batches between a CPU's cache and the global pool
    std::uint64_t tag_cas_retries = 0; // failed compare-and-swaps (cmpxchg)
    std::uint64_t tag_lost = 0; // free tags destroyed by an allocator's race (ida-lock-split)
    std::uint64_t tag_missed_wakeups = 0; // allocations that failed while a cache held tags its mask bit hid
    std::uint64_t tag_lock_wait_ns = 0;
    std::uint64_t tag_sleeps = 0;
    std::uint64_t tag_wakeups = 0; // sleeping submitters the allocator's wake-ups woke
    // spinlocks: time in _raw_spin_lock (spinning, then taking the lock's line), by caller
    LockTimes lock_ns {};
    // of lock_ns, while a job thread was the CPU's current task (what perf shows under fio's comm, interrupts
    // on top of it included)
    LockTimes job_lock_ns {};
    // job threads' CPU time, as getrusage() counts it: everything on a CPU while the thread is current
    std::uint64_t job_user_ns = 0;
    std::uint64_t job_sys_ns = 0;
    // machine
    std::uint64_t context_switches = 0;
    std::uint64_t hardirqs = 0;
    std::uint64_t migrations = 0; // tasks moved to another CPU (wake-up placement, newly-idle pulls)
    std::uint64_t rt_throttled = 0; // times a CPU's SCHED_FIFO tasks used up their RT runtime
};

// The counters by name, for conditions such as "run until ipis changes" (core/engine/StopCondition.h).
struct CounterField {
    std::string_view name;
    std::uint64_t Counters::*field;
};
inline constexpr CounterField kCounterFields[] = {
    { "submitted", &Counters::submitted },
    { "completed", &Counters::completed },
    { "remote", &Counters::remote },
    { "ipis", &Counters::ipis },
    { "softirq_raises", &Counters::softirq_raises },
    { "ksoftirqd_wakeups", &Counters::ksoftirqd_wakeups },
    { "dispatch_busy", &Counters::dispatch_busy },
    { "requeued", &Counters::requeued },
    { "restart_marks", &Counters::restart_marks },
    { "restart_calls", &Counters::restart_calls },
    { "restart_skips", &Counters::restart_skips },
    { "restart_hctx_visits", &Counters::restart_hctx_visits },
    { "restarts", &Counters::restarts },
    { "tag_allocs", &Counters::tag_allocs },
    { "tag_steals", &Counters::tag_steals },
    { "tag_sleeps", &Counters::tag_sleeps },
    { "tag_wakeups", &Counters::tag_wakeups },
    { "tag_lost", &Counters::tag_lost },
    { "tag_missed_wakeups", &Counters::tag_missed_wakeups },
    { "context_switches", &Counters::context_switches },
    { "hardirqs", &Counters::hardirqs },
    { "migrations", &Counters::migrations },
    { "rt_throttled", &Counters::rt_throttled },
};

} // namespace blkmq
