#pragma once

#include <cstdint>

namespace blkmq {

// Virtual time in integer nanoseconds. A strong type so that a count of
// requests or a CPU number can never be mistaken for a time.
class SimTime {
public:
    constexpr SimTime() = default;
    constexpr explicit SimTime(std::int64_t ns)
        : m_ns(ns)
    {
    }

    constexpr std::int64_t ns() const { return m_ns; }
    constexpr double seconds() const { return static_cast<double>(m_ns) * 1e-9; }

    constexpr SimTime& operator+=(SimTime d)
    {
        m_ns += d.m_ns;
        return *this;
    }
    constexpr SimTime& operator-=(SimTime d)
    {
        m_ns -= d.m_ns;
        return *this;
    }
    friend constexpr SimTime operator+(SimTime a, SimTime b) { return SimTime(a.m_ns + b.m_ns); }
    friend constexpr SimTime operator-(SimTime a, SimTime b) { return SimTime(a.m_ns - b.m_ns); }
    // Spelled out instead of <=>: <compare> pulls in <concepts>, which Qt 6.4's moc cannot parse.
    friend constexpr bool operator==(SimTime a, SimTime b) { return a.m_ns == b.m_ns; }
    friend constexpr bool operator!=(SimTime a, SimTime b) { return a.m_ns != b.m_ns; }
    friend constexpr bool operator<(SimTime a, SimTime b) { return a.m_ns < b.m_ns; }
    friend constexpr bool operator<=(SimTime a, SimTime b) { return a.m_ns <= b.m_ns; }
    friend constexpr bool operator>(SimTime a, SimTime b) { return a.m_ns > b.m_ns; }
    friend constexpr bool operator>=(SimTime a, SimTime b) { return a.m_ns >= b.m_ns; }

    static constexpr SimTime max() { return SimTime(INT64_MAX); }

private:
    std::int64_t m_ns = 0;
};

constexpr SimTime nsec(std::int64_t v) { return SimTime(v); }
constexpr SimTime usec(std::int64_t v) { return SimTime(v * 1000); }
constexpr SimTime msec(std::int64_t v) { return SimTime(v * 1000 * 1000); }

} // namespace blkmq
