#pragma once

#include <QString>

#include <cstdint>
#include <string>

namespace blkmq {

// The core's strings (UTF-8) as the window shows them.
inline QString q(const std::string& s) { return QString::fromStdString(s); }
// Simulated nanoseconds as microseconds with three decimals: "10.900".
inline QString micros(std::int64_t ns) { return QString::number(static_cast<double>(ns) / 1e3, 'f', 3); }

} // namespace blkmq
