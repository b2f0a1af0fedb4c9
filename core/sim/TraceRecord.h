#pragma once

#include <cstdint>

namespace blkmq {

enum class TraceKind : std::uint8_t {
    Submit, // a = job task, rq
    Dispatch, // rq issued to the driver (arg = hctx)
    DeviceDone, // device finished rq
    IrqEnter, // arg = IrqKind
    IrqExit,
    IpiSend, // cpu = sender, arg = target
    SoftirqRaise, // arg = softirq bit
    SoftirqRun, // arg = pending mask run
    KsoftirqdWake,
    Complete, // ->complete ran (arg = ExecContext)
    Requeue, // rq put on hctx->dispatch (arg = hctx)
    Restart, // arg = hctx restarted
    Marker, // arg = marker index
    DoneListAdd, // rq added to blk_cpu_done of CPU arg
};

// One trace record: plain data, 24 bytes.
struct TraceRecord {
    std::int64_t time = 0;
    std::int32_t rq = -1;
    std::int32_t arg = 0;
    std::int16_t cpu = -1;
    TraceKind kind = TraceKind::Marker;
};

} // namespace blkmq
