#pragma once

#include "sim/SimTime.h"

#include <optional>
#include <string>
#include <string_view>

namespace blkmq {

// "250", "250ns", "10us", "1.5ms", "2s" → nanoseconds. Empty optional on
// malformed or negative input.
std::optional<SimTime> parseDuration(std::string_view text);
std::string formatDuration(SimTime t);

} // namespace blkmq
