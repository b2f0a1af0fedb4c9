#include "metrics/TimeSeries.h"

#include <cstdio>

namespace blkmq {

std::string TimeSeries::csvHeader()
{
    std::string h = "t_ns";
    for (const Metric& m : kMetrics) {
        h += ',';
        h += m.id;
    }
    return h;
}

std::string TimeSeries::csvRow(const SeriesRow& r)
{
    std::string s = std::to_string(r.t_ns);
    char buf[64];
    for (std::size_t i = 0; i < kMetrics.size(); ++i) {
        const int n = std::snprintf(buf, sizeof buf, ",%.*f", unitInfo(kMetrics[i].unit).decimals, r.values[i]);
        s.append(buf, static_cast<std::size_t>(n));
    }
    return s;
}

} // namespace blkmq
