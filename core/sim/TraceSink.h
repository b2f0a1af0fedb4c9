#pragma once

#include "sim/ExecContext.h"
#include "sim/TraceRecord.h"

#include <cstdint>

namespace blkmq {

// One action a CPU performed: from `begin` to `end` in one context, on behalf of `task` (-1 in
// interrupt context). `owner` and `code` name the op (cpu/Op.h): the component and its op.
struct TraceSlice {
    std::int64_t begin = 0;
    std::int64_t end = 0;
    std::int32_t task = -1;
    std::int32_t arg = 0; // the op's first argument (an hctx, a request, ...)
    std::int16_t cpu = -1;
    ExecContext context = ExecContext::Task;
    std::uint8_t owner = 0;
    std::uint8_t code = 0;
};

// An observer of one engine: it is told every trace record (submissions, IPIs, which are flows from
// the sender to `arg`, markers for switches and stalls, ...) and every CPU action as a slice.
// Called on the engine's thread, synchronously, in simulated-time order per CPU; a sink must not
// allocate per call if it is to stay on the hot path (the GUI's TraceRing does not). Engine::addTraceSink.
class TraceSink {
public:
    virtual ~TraceSink() = default;
    virtual void record(const TraceRecord& r) = 0;
    virtual void slice(const TraceSlice&) { }
};

} // namespace blkmq
