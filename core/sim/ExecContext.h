#pragma once

#include <cstdint>

namespace blkmq {

// Where a CPU spends its time (per-CPU busy accounting) and where a
// request's ->complete ran.
enum class ExecContext : std::uint8_t { Task, Hardirq, Softirq, Ksoftirqd, IrqThread, Kworker, Count };
inline constexpr int kExecContexts = static_cast<int>(ExecContext::Count);

inline const char* execContextName(ExecContext c)
{
    switch (c) {
    case ExecContext::Task:
        return "task";
    case ExecContext::Hardirq:
        return "hardirq";
    case ExecContext::Softirq:
        return "softirq";
    case ExecContext::Ksoftirqd:
        return "ksoftirqd";
    case ExecContext::IrqThread:
        return "irq_thread";
    case ExecContext::Kworker:
        return "kworker";
    case ExecContext::Count:
        break;
    }
    return "?";
}

} // namespace blkmq
