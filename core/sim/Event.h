#pragma once

#include "sim/SimTime.h"

#include <cstdint>

namespace blkmq {

// What an event does when it fires. Values are part of the fingerprint:
// append new kinds at the end so existing fingerprints stay valid.
enum class EventKind : std::uint8_t {
    CpuBoundary, // a CPU finished its current action (a = cpu)
    IrqRaise, // an interrupt becomes pending on a CPU (a = cpu, b = IrqKind, c = argument)
    DeviceDone, // the device finished a request (a = request index)
    TaskWake, // a wake-up reaches a task (a = task index)
    Sample, // time-series interval boundary
    ScriptStep, // a scripted workload step is due (a = step index)
    Marker, // a command was applied (a = marker index)
    ThinkDone, // a job's think time is over (a = task index)
    Stop, // end of the run
    NetPacket, // a packet of a net_rx load reaches a CPU's NIC queue (a = cpu, b = load)
    RtPeriod, // the RT bandwidth period of a throttled CPU ends (a = cpu)
};

// Same-time order: lower priority value first, then insertion sequence.
enum class EventPriority : std::uint8_t {
    Control = 0, // markers and stops come before the work at the same instant
    Hardware = 1, // device completions and interrupts
    Cpu = 2, // CPU action boundaries and wake-ups
    Bookkeeping = 3, // samples see the state after everything at that instant
};

// A plain record, 32 bytes; ordered by (time, priority, sequence).
struct Event {
    SimTime time;
    std::uint64_t seq = 0;
    std::int32_t a = 0;
    std::int32_t b = 0;
    std::int32_t c = 0;
    EventKind kind = EventKind::Stop;
    EventPriority prio = EventPriority::Cpu;

    bool before(const Event& o) const
    {
        if (time != o.time)
            return time < o.time;
        if (prio != o.prio)
            return prio < o.prio;
        return seq < o.seq;
    }
};

} // namespace blkmq
