#pragma once

#include "sim/ExecContext.h"

#include <array>
#include <cstdint>

namespace blkmq {

// One level of what a CPU executes (Machine::kernelPath), outermost first: the task it runs or
// interrupted, the softirq run from irq_exit, the hardirq. `path` names the op in progress on that
// level, or for an interrupted level the one it performed last; `caller` the op a nested one runs
// inside. The strings are static (the components' op tables).
struct KernelFrame {
    enum class Level : std::uint8_t { Task, Softirq, Hardirq } level = Level::Task;
    ExecContext context = ExecContext::Task;
    const char* task = nullptr; // Task: "fio", "ksoftirqd", ...
    const char* via = nullptr; // how the level got there: "irq_exit", "local_bh_enable", or nullptr
    const char* caller = nullptr;
    const char* path = nullptr;
    bool running = false; // the innermost level, executing now
};
using KernelPath = std::array<KernelFrame, 3>;

} // namespace blkmq
