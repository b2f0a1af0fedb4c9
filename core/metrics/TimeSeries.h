#pragma once

#include "metrics/ExecContext.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace blkmq {

// One sample interval of a run (rates are per simulated second).
struct SeriesRow {
    std::int64_t t_ns = 0; // end of the interval
    double iops = 0;
    double bw_mbps = 0;
    double remote_pct = 0;
    double ipis_per_s = 0;
    double softirq_raises_per_s = 0;
    double ksoftirqd_wakeups_per_s = 0;
    double restart_calls_per_s = 0;
    double restart_cpu_pct = 0; // of all CPUs' time
    double tag_local_hit_pct = 0;
    double tag_lock_wait_pct = 0; // time spent waiting for tag locks, % of all CPUs' time
    double lat_mean_ns = 0;
    double lat_p99_ns = 0;
    std::int64_t in_flight = 0;
    std::array<double, kExecContexts> busy_pct {}; // of all CPUs' time
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

    static std::string csvHeader();
    static std::string csvRow(const SeriesRow& r);

private:
    std::vector<SeriesRow> m_rows;
};

} // namespace blkmq
