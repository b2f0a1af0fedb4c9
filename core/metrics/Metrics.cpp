#include "metrics/Metrics.h"

#include "metrics/Format.h"

#include <cstdio>

namespace blkmq {

const UnitInfo& unitInfo(Unit u)
{
    static constexpr UnitInfo kUnits[] = {
        { "/s", "per s", 1.0, 0 }, // PerSecond
        { " MB/s", "MB/s", 1.0, 3 }, // MBps
        { "%", "%", 1.0, 3 }, // Percent
        { " ns", "µs", 1e-3, 1 }, // Nanoseconds: plotted in µs
        { "", "requests", 1.0, 0 }, // Count
    };
    return kUnits[static_cast<std::size_t>(u)];
}

int findMetric(std::string_view id)
{
    for (int i = 0; i < kMetricCount; ++i)
        if (kMetrics[static_cast<std::size_t>(i)].id == id)
            return i;
    return -1;
}

std::string formatMetric(const Metric& m, double value)
{
    char buf[48];
    switch (m.unit) {
    case Unit::PerSecond:
        return formatQuantity(value) + "/s";
    case Unit::MBps:
        std::snprintf(buf, sizeof buf, "%.1f MB/s", value);
        return buf;
    case Unit::Percent:
        std::snprintf(buf, sizeof buf, "%.1f%%", value);
        return buf;
    case Unit::Nanoseconds:
        std::snprintf(buf, sizeof buf, "%.2f µs", value / 1e3);
        return buf;
    case Unit::Count:
        break;
    }
    return formatQuantity(value);
}

MetricValues computeMetrics(const MetricInput& in)
{
    MetricValues v {};
    for (std::size_t i = 0; i < kMetrics.size(); ++i)
        v[i] = kMetrics[i].compute(in);
    return v;
}

} // namespace blkmq
