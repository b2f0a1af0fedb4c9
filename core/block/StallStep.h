#pragma once

#include "sim/ObjectRef.h"
#include "sim/SimTime.h"

#include <cstdint>
#include <string>

namespace blkmq {

// One step of a stall's explanation with the time it happened and the object it is about: the
// window numbers the steps and selects the object of the one clicked.
struct StallStep {
    SimTime at;
    std::string text;
    ObjectRef object;
};

} // namespace blkmq
