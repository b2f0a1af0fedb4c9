#pragma once

#include <cstdio>
#include <string>

namespace blkmq {

// A count, rate or ratio for people: 2.803M, 624.0k, 512, 49.66, 0.9987.
inline std::string formatQuantity(double v)
{
    if (v < 0) // a difference (A/B tables): the same prefixes as its magnitude
        return std::string("-").append(formatQuantity(-v)); // not "-" + …: GCC 12's false -Wrestrict
    char buf[32];
    if (v >= 1e6)
        std::snprintf(buf, sizeof buf, "%.3fM", v / 1e6);
    else if (v >= 1e4)
        std::snprintf(buf, sizeof buf, "%.1fk", v / 1e3);
    else if (v >= 100 || v == static_cast<double>(static_cast<long long>(v)))
        std::snprintf(buf, sizeof buf, "%.0f", v);
    else
        std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

} // namespace blkmq
