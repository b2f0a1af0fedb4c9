#pragma once

#include "sim/SimTime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace blkmq {

__extension__ typedef unsigned __int128 Uint128;

// ftrace's function profiler (function_profile_enabled with the function_graph
// tracer, kernel/trace/ftrace.c): per CPU, how often a function was entered and
// the wall time from entry to return, interrupts nested inside it included.
// s² is the sample variance as function_stat_show() prints it, in µs².
class FunctionProfile {
public:
    struct PerCpu {
        std::uint64_t hits = 0;
        std::int64_t total_ns = 0;
        Uint128 sumSq_ns2 = 0;

        double avg_ns() const { return hits ? static_cast<double>(total_ns) / static_cast<double>(hits) : 0.0; }
        // (n Σx² − (Σx)²) / (n (n − 1)), ns² to µs²
        double s2_us2() const;
    };

    explicit FunctionProfile(std::string function)
        : m_function(std::move(function))
    {
    }
    void resize(int cpus) { m_cpus.assign(static_cast<std::size_t>(cpus), PerCpu {}); }

    void record(int cpu, SimTime wall)
    {
        PerCpu& c = m_cpus[static_cast<std::size_t>(cpu)];
        const std::int64_t ns = wall.ns();
        ++c.hits;
        c.total_ns += ns;
        c.sumSq_ns2 += static_cast<Uint128>(ns) * static_cast<Uint128>(ns);
    }

    const std::string& function() const { return m_function; }
    const std::vector<PerCpu>& cpus() const { return m_cpus; }
    std::uint64_t hits() const;
    std::int64_t total_ns() const;

    // The functions the lab can profile.
    static const std::vector<std::string>& known();
    // ftrace's trace_stat table, one row per CPU that entered the function.
    std::string table() const;

private:
    std::string m_function;
    std::vector<PerCpu> m_cpus;
};

} // namespace blkmq
