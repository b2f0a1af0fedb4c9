#pragma once

#include "cpu/Op.h"

namespace blkmq {

// An op in the kernel's words: the call path it runs, as a static string ("blk_done_softirq →
// ->complete"), and whether it runs inside the op performed before it on the same stack (a chunk of
// blk_mq_sched_restart()'s walk inside the completion that freed a request).
struct OpName {
    const char* path = "?";
    bool nested = false;
};

// A component that performs ops of its code group. `stack` is the stack the
// op came from; follow-up ops go on it.
class OpHandler {
public:
    virtual ~OpHandler() = default;
    virtual void perform(int cpu, Op op, OpStack& stack) = 0;
    virtual OpName opName(std::uint8_t code) const = 0;
    // Whether `op` starts on a lock boundary a check may hold a CPU at (choices.lock_boundaries,
    // docs/check.md): a point inside a kernel function where the real code runs with interrupts on
    // and no lock held, so that other CPUs and interrupts may come in for any length of time.
    virtual bool lockBoundary(const Op& /*op*/) const { return false; }
};

} // namespace blkmq
