#pragma once

#include "metrics/Metrics.h"

#include <cstdint>
#include <string>
#include <vector>

namespace blkmq {

// One sample interval of a run: every metric of the table over it (rates are per simulated second).
struct SeriesRow {
    std::int64_t t_ns = 0; // end of the interval
    MetricValues values {};
    double operator[](int metric) const { return values[static_cast<std::size_t>(metric)]; }
};

struct Marker {
    std::int64_t t_ns = 0;
    std::string text;
};

// The per-interval rows of a run; rows are reserved up front so sampling
// does not allocate.
class TimeSeries {
public:
    void reserve(std::size_t n) { m_rows.reserve(n); }
    void append(const SeriesRow& r) { m_rows.push_back(r); }
    const std::vector<SeriesRow>& rows() const { return m_rows; }

    // One column per metric of the table, after t_ns, in table order.
    static std::string csvHeader();
    static std::string csvRow(const SeriesRow& r);

private:
    std::vector<SeriesRow> m_rows;
};

} // namespace blkmq
