#pragma once

#include "sim/EnumNames.h"

#include <cstdint>
#include <iterator>

namespace blkmq {

// Where a CPU spends its time (per-CPU busy accounting) and where a
// request's ->complete ran.
enum class ExecContext : std::uint8_t { Task, Hardirq, Softirq, Ksoftirqd, IrqThread, Kworker, Count };
inline constexpr int kExecContexts = static_cast<int>(ExecContext::Count);

inline constexpr const char* kExecContextNames[]
    = { "task", "hardirq", "softirq", "ksoftirqd", "irq_thread", "kworker" };
static_assert(std::size(kExecContextNames) == kExecContexts);
inline const char* execContextName(ExecContext c) { return enumName(kExecContextNames, c); }

} // namespace blkmq
