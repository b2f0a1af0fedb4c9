#pragma once

#include "cpu/Op.h"

namespace blkmq {

// A component that performs ops of its code group. `stack` is the stack the
// op came from; follow-up ops go on it.
class OpHandler {
public:
    virtual ~OpHandler() = default;
    virtual void perform(int cpu, Op op, OpStack& stack) = 0;
};

} // namespace blkmq
