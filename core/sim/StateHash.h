#pragma once

#include "sim/SimTime.h"

#include <array>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace blkmq {

// A 128-bit hash of a run's simulated state: what `blkmqlab-cli check` keeps of each state it has
// explored, so that a state reached again is not explored again (docs/check.md). Every component
// adds what decides its future (hashState(StateHash&) next to its members); what only records the
// past (counters, histograms, profiles, the trace) stays out. Two states with equal hashes are
// taken to be equal; with n states explored the chance that two different ones collide is about
// n^2 / 2^129.
class StateHash {
public:
    // Adds each value: an integer, enum, bool or SimTime; a vector, array or string (its size, then
    // its elements); anything with hashState(StateHash&) const.
    template<class... T>
    StateHash& operator()(const T&... v)
    {
        (add(v), ...);
        return *this;
    }
    void word(std::uint64_t w)
    {
        m_a = (m_a ^ w) * 0x9e3779b97f4a7c15ULL;
        m_a ^= m_a >> 29;
        m_b = (m_b + w) * 0xc2b2ae3d27d4eb4fULL;
        m_b ^= m_b >> 31;
    }
    struct Value {
        std::uint64_t a = 0, b = 0;
        bool operator==(const Value&) const = default;
    };
    Value value() const { return { finish(m_a ^ m_b * 0x165667b19e3779f9ULL), finish(m_b + m_a) }; }

private:
    static std::uint64_t finish(std::uint64_t z) // splitmix64's finalizer
    {
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    template<class T>
    void add(const T& v)
    {
        if constexpr (std::is_enum_v<T>)
            word(static_cast<std::uint64_t>(v));
        else if constexpr (std::is_integral_v<T>)
            word(static_cast<std::uint64_t>(v));
        else if constexpr (std::is_same_v<T, SimTime>)
            word(static_cast<std::uint64_t>(v.ns()));
        else if constexpr (requires { v.hashState(*this); })
            v.hashState(*this);
        else
            range(v);
    }
    template<class R>
    void range(const R& r)
    {
        word(static_cast<std::uint64_t>(r.size()));
        for (const auto& x : r)
            add(x);
    }

    std::uint64_t m_a = 0x243f6a8885a308d3ULL;
    std::uint64_t m_b = 0x13198a2e03707344ULL;
};

} // namespace blkmq
