#pragma once

#include "cpu/Op.h"
#include "sim/EnumNames.h"
#include "sim/ExecContext.h"

#include <cstdint>
#include <iterator>
#include <vector>

namespace blkmq {

enum class TaskKind : std::uint8_t { Job, Script, Ksoftirqd, Kworker, IrqThread, Kthread /* last */ };

inline constexpr const char* kTaskKindNames[]
    = { "fio", "script", "ksoftirqd", "kworker (kblockd)", "irq thread", "usb-storage" };
static_assert(std::size(kTaskKindNames) == static_cast<std::size_t>(TaskKind::Kthread) + 1);
inline const char* taskKindName(TaskKind k) { return enumName(kTaskKindNames, k); }

// A schedulable thread on one CPU at a time. SCHED_FIFO tasks (irq threads)
// always beat SCHED_OTHER ones; SCHED_OTHER tasks share by vruntime. A task
// with `allowed` CPUs (a fio job not pinned to one) may move among them when it
// wakes (Machine::selectTaskRq).
struct Task {
    TaskKind kind = TaskKind::Job;
    int cpu = 0;
    std::vector<int> allowed; // empty: pinned to `cpu`
    Op loop; // what the task does when woken with an empty stack
    bool fifo = false;
    bool runnable = false;
    bool wakePending = false;
    bool inSoftirq = false; // running __do_softirq (ksoftirqd, or local_bh_enable)
    bool bhDisabled = false;
    bool irqPending = false; // irq threads: the hardirq asked for a run
    std::int64_t vruntime = 0;
    // CFS load weight (sched_prio_to_weight): 1024 at nice 0, 88761 at nice -20 (a WQ_HIGHPRI
    // worker such as kblockd's). vruntime advances by runtime * 1024 / weight.
    std::int32_t weight = kNice0Weight;
    static constexpr std::int32_t kNice0Weight = 1024;
    static constexpr std::int32_t kNiceMinus20Weight = 88761;
    OpStack stack;

    template<class Hash>
    void hashState(Hash& h) const
    {
        h(kind, cpu, allowed, loop, fifo, runnable, wakePending, inSoftirq, bhDisabled, irqPending, vruntime, weight,
            stack);
    }

    ExecContext context() const
    {
        switch (kind) {
        case TaskKind::Ksoftirqd:
            return ExecContext::Ksoftirqd;
        case TaskKind::Kworker:
            return ExecContext::Kworker;
        case TaskKind::IrqThread:
            return inSoftirq ? ExecContext::Softirq : ExecContext::IrqThread;
        default:
            return inSoftirq ? ExecContext::Softirq : ExecContext::Task;
        }
    }
};

} // namespace blkmq
