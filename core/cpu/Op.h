#pragma once

#include <cstdint>
#include <vector>

namespace blkmq {

// One step of work on a CPU. Ops live on per-context stacks (hardirq,
// softirq, and one per task); the top op runs next. An op that loops pushes
// itself back; an op with follow-up work pushes it in reverse order.
// Codes are grouped by the component that performs them.
enum class OpCode : std::uint8_t {
    // Machine (interrupt and softirq mechanics)
    IrqEntry,
    IrqExit,
    SoftirqStart,
    SoftirqLoop,
    SoftirqAfter,
    KsoftirqdStep,
    IrqThreadStep, // a = device vector
    BhDisable,
    BhEnable,
    WakeIrqThread, // a = device vector (threadirqs: the hardirq only wakes the thread)
    MachineLast = WakeIrqThread,
    // Block layer
    HandleCq, // a = hctx (device vector)
    TimerComplete, // a = request
    CsdFlush,
    CsdRunOne,
    BlockSoftirq,
    CompleteFromBatch,
    KworkerStep,
    RunHctx, // a = hctx
    CsdRaiseBlock, // blk-mq's per-CPU csd (complete-llist): raise BLOCK_SOFTIRQ
    NapiSchedule, // NIC rx hardirq: napi_schedule()
    NetRxPoll, // NET_RX softirq: one packet of the NAPI poll
    UsbIrq, // a = device: the host controller's interrupt for the current command
    UsbStep, // a = device: the driver's kthread (usb-storage)
    RestartWalk, // a = completing hctx, b = position: one batch of blk_mq_sched_restart()'s walk
    BlockLast = RestartWalk,
    // Workload
    JobStep, // a = job
    Submit, // a = job
    Reap, // a = job
    ScriptStep, // a = CPU
    Poll, // a = job: blk_poll() on the job's hctx (hipri)
};

struct Op {
    OpCode code;
    std::int32_t a = 0;
    std::int32_t b = 0;
};

using OpStack = std::vector<Op>;

enum class IrqKind : std::uint8_t { DeviceVector, CallFunction, Timer, NicRx, Usb };

enum SoftirqNr : std::uint8_t {
    HI_SOFTIRQ,
    TIMER_SOFTIRQ,
    NET_TX_SOFTIRQ,
    NET_RX_SOFTIRQ,
    BLOCK_SOFTIRQ,
    NR_SOFTIRQS_MODELLED
};

} // namespace blkmq
