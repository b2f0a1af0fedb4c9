#pragma once

#include <algorithm>
#include <ctime>
#include <vector>

namespace blkmq::bench {

// This process's CPU time in seconds: benchmarks time CPU, not the wall of a shared machine.
inline double cpuNow()
{
    timespec ts {};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

inline double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

} // namespace blkmq::bench
