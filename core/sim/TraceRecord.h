#pragma once

#include <cstdint>
#include <string_view>

namespace blkmq {

enum class TraceKind : std::uint8_t {
    Submit, // a = job task, rq
    Dispatch, // rq issued to the driver (arg = hctx)
    DeviceDone, // device finished rq
    IrqEnter, // arg = IrqKind
    IrqExit,
    IpiSend, // cpu = sender, arg = target: a flow to the target's next call-function interrupt
    SoftirqRaise, // arg = softirq bit
    SoftirqRun, // arg = pending mask run
    KsoftirqdWake,
    Complete, // ->complete ran (arg = ExecContext)
    Requeue, // rq put on hctx->dispatch (arg = hctx)
    Restart, // arg = hctx restarted
    Marker, // a live switch or a stall (arg = marker index)
    DoneListAdd, // rq added to blk_cpu_done of CPU arg
    TagSteal, // cpu = stealer, arg = the CPU whose cached tags it took (percpu_ida)
    TagLost, // cpu = stealer whose memcpy destroyed tags, arg = how many
    TagMissed, // cpu found no tag while CPU arg's cache held tags its cpus_have_tags bit hid
    RestartMark, // BLK_MQ_S_SCHED_RESTART set on hctx arg (blk_mq_sched_mark_restart_hctx)
    RestartSkip, // blk_mq_sched_restart() for a request of hctx arg returned early: its counter was 0
    Count
};

// Each kind's id (for "run until" conditions and files) and its name for people (the event log).
struct TraceKindName {
    std::string_view id;
    std::string_view label;
};
inline constexpr TraceKindName kTraceKindNames[] = {
    { "submit", "submit" },
    { "dispatch", "dispatch" },
    { "device-done", "device done" },
    { "irq-enter", "irq enter" },
    { "irq-exit", "irq exit" },
    { "ipi-send", "IPI" },
    { "softirq-raise", "softirq raise" },
    { "softirq-run", "softirq run" },
    { "ksoftirqd-wake", "ksoftirqd wake-up" },
    { "complete", "->complete" },
    { "requeue", "requeue" },
    { "restart", "restart" },
    { "marker", "marker" },
    { "done-list-add", "blk_cpu_done add" },
    { "tag-steal", "tag steal" },
    { "tag-lost", "tags lost" },
    { "tag-missed", "missed tag wake-up" },
    { "restart-mark", "RESTART set" },
    { "restart-skip", "restart skipped (counter 0)" },
};
static_assert(std::size(kTraceKindNames) == static_cast<std::size_t>(TraceKind::Count));
inline const TraceKindName& traceKindName(TraceKind k) { return kTraceKindNames[static_cast<std::size_t>(k)]; }

// One trace record: plain data, 24 bytes.
struct TraceRecord {
    // The time of the event whose operation made it, which is when the model applies what the
    // operation does; the operation's cost follows (its CPU slice in a Perfetto trace). So at any
    // clock the records up to it are exactly those of the state the run is in: a run stopped at an
    // IPI has that IPI on its log and its canvas.
    std::int64_t time = 0;
    std::int32_t rq = -1;
    std::int32_t arg = 0;
    std::int16_t cpu = -1;
    TraceKind kind = TraceKind::Marker;
    // Submit: the workload.script step that submitted rq (-1: a fio job), so a log names the
    // request as everything else does although its pool slot is reused later.
    std::int16_t script = -1;
};
static_assert(sizeof(TraceRecord) == 24);

} // namespace blkmq
