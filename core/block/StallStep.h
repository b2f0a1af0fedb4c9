#pragma once

#include "sim/SimTime.h"

#include <cstdint>
#include <string>

namespace blkmq {

// One step of a stall's explanation with the time it happened and the object it is about: the
// window numbers the steps and selects the object of the one clicked.
struct StallStep {
    enum class Object : std::uint8_t { None, Request, Hctx, Tags, Cpu };
    SimTime at;
    std::string text;
    Object object = Object::None;
    int index = -1; // request, global hctx (Hctx, and Tags: the hctx whose tag map shows them) or CPU
};

} // namespace blkmq
