#pragma once

#include "sim/Event.h"

#include <cstdint>
#include <string>

namespace blkmq {

// A running hash over the processed event sequence (time, kind, operands).
// Two runs with the same fingerprint executed the same events in the same order.
class Fingerprint {
public:
    void add(const Event& e)
    {
        mix(static_cast<std::uint64_t>(e.time.ns()));
        mix((static_cast<std::uint64_t>(e.kind) << 56)
            ^ (static_cast<std::uint64_t>(static_cast<std::uint32_t>(e.a)) << 24) ^ static_cast<std::uint32_t>(e.b));
        mix(static_cast<std::uint32_t>(e.c));
    }
    void mix(std::uint64_t v)
    {
        m_h ^= v + 0x9e3779b97f4a7c15ULL + (m_h << 6) + (m_h >> 2);
        m_h *= 0xff51afd7ed558ccdULL;
        m_h ^= m_h >> 32;
    }
    std::uint64_t value() const { return m_h; }
    std::string hex() const
    {
        static constexpr char digits[] = "0123456789abcdef";
        std::string s(16, '0');
        for (int i = 0; i < 16; ++i)
            s[15 - i] = digits[(m_h >> (4 * i)) & 0xf];
        return s;
    }

private:
    std::uint64_t m_h = 0xcbf29ce484222325ULL;
};

} // namespace blkmq
