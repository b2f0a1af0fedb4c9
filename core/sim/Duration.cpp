#include "sim/Duration.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace blkmq {

std::optional<SimTime> parseDuration(std::string_view text)
{
    if (text.empty())
        return std::nullopt;
    std::size_t unitAt = text.size();
    while (unitAt > 0 && std::isalpha(static_cast<unsigned char>(text[unitAt - 1])))
        --unitAt;
    const std::string_view number = text.substr(0, unitAt);
    const std::string_view unit = text.substr(unitAt);
    double scale = 1;
    if (unit.empty() || unit == "ns")
        scale = 1;
    else if (unit == "us")
        scale = 1e3;
    else if (unit == "ms")
        scale = 1e6;
    else if (unit == "s")
        scale = 1e9;
    else
        return std::nullopt;
    double v = 0;
    auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
    if (ec != std::errc() || ptr != number.data() + number.size() || !std::isfinite(v) || v < 0)
        return std::nullopt;
    const double ns = std::round(v * scale);
    if (ns > 9.2e18)
        return std::nullopt;
    return SimTime(static_cast<std::int64_t>(ns));
}

std::string formatDuration(SimTime t)
{
    char buf[48];
    const auto ns = t.ns();
    if (ns % 1000000000 == 0 && ns != 0)
        std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(ns / 1000000000));
    else if (ns % 1000000 == 0 && ns != 0)
        std::snprintf(buf, sizeof buf, "%lldms", static_cast<long long>(ns / 1000000));
    else if (ns % 1000 == 0 && ns != 0)
        std::snprintf(buf, sizeof buf, "%lldus", static_cast<long long>(ns / 1000));
    else
        std::snprintf(buf, sizeof buf, "%lldns", static_cast<long long>(ns));
    return buf;
}

} // namespace blkmq
