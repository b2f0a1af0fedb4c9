#include "metrics/FunctionProfile.h"

#include <cstdio>

namespace blkmq {

double FunctionProfile::PerCpu::s2_us2() const
{
    if (hits <= 1)
        return 0.0;
    const long double n = static_cast<long double>(hits);
    const long double sum = static_cast<long double>(total_ns);
    const long double var = (n * static_cast<long double>(sumSq_ns2) - sum * sum) / (n * (n - 1));
    return static_cast<double>(var / 1e6L);
}

std::uint64_t FunctionProfile::hits() const
{
    std::uint64_t n = 0;
    for (const PerCpu& c : m_cpus)
        n += c.hits;
    return n;
}

std::int64_t FunctionProfile::total_ns() const
{
    std::int64_t t = 0;
    for (const PerCpu& c : m_cpus)
        t += c.total_ns;
    return t;
}

const std::vector<std::string>& FunctionProfile::known()
{
    static const std::vector<std::string> names { "blk_mq_sched_restart" };
    return names;
}

std::string FunctionProfile::table() const
{
    std::string out = "  CPU   Function                  Hit     Time            Avg             s^2\n"
                      "  ---   --------                  ---     ----            ---             ---\n";
    char line[256];
    const auto us = [](double v) { // ftrace labels µs and µs² alike "us"
        char buf[48];
        std::snprintf(buf, sizeof buf, "%.3f us", v);
        return std::string(buf);
    };
    for (std::size_t cpu = 0; cpu < m_cpus.size(); ++cpu) {
        const PerCpu& c = m_cpus[cpu];
        if (c.hits == 0)
            continue;
        std::snprintf(line, sizeof line, "  %-5zu %-24s %-7llu %-15s %-15s %s\n", cpu, m_function.c_str(),
            static_cast<unsigned long long>(c.hits), us(static_cast<double>(c.total_ns) / 1e3).c_str(),
            us(c.avg_ns() / 1e3).c_str(), us(c.s2_us2()).c_str());
        out += line;
    }
    return out;
}

} // namespace blkmq
