#include "metrics/TimeSeries.h"

#include <cstdio>

namespace blkmq {

std::string TimeSeries::csvHeader()
{
    std::string h
        = "t_ns,iops,bw_mbps,remote_pct,ipis_per_s,softirq_raises_per_s,ksoftirqd_wakeups_per_s,"
          "restart_calls_per_s,restart_cpu_pct,tag_local_hit_pct,tag_lock_wait_pct,lat_mean_ns,lat_p99_ns,in_flight";
    for (int c = 0; c < kExecContexts; ++c)
        h += std::string(",busy_") + execContextName(static_cast<ExecContext>(c)) + "_pct";
    return h;
}

std::string TimeSeries::csvRow(const SeriesRow& r)
{
    char buf[512];
    int n = std::snprintf(buf, sizeof buf, "%lld,%.0f,%.3f,%.3f,%.0f,%.0f,%.0f,%.0f,%.3f,%.3f,%.3f,%.1f,%.0f,%lld",
        static_cast<long long>(r.t_ns), r.iops, r.bw_mbps, r.remote_pct, r.ipis_per_s, r.softirq_raises_per_s,
        r.ksoftirqd_wakeups_per_s, r.restart_calls_per_s, r.restart_cpu_pct, r.tag_local_hit_pct, r.tag_lock_wait_pct,
        r.lat_mean_ns, r.lat_p99_ns, static_cast<long long>(r.in_flight));
    std::string s(buf, static_cast<std::size_t>(n));
    for (double b : r.busy_pct) {
        n = std::snprintf(buf, sizeof buf, ",%.3f", b);
        s.append(buf, static_cast<std::size_t>(n));
    }
    return s;
}

} // namespace blkmq
