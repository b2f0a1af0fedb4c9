#pragma once

#include <cmath>
#include <cstdint>

namespace blkmq {

// xoshiro256** seeded through splitmix64: fast, small state, and the same
// sequence on every platform (std::uniform_*_distribution is not).
class Rng {
public:
    explicit Rng(std::uint64_t seed = 1) { reseed(seed); }

    void reseed(std::uint64_t seed)
    {
        std::uint64_t x = seed;
        for (auto& s : m_s) {
            x += 0x9e3779b97f4a7c15ULL;
            std::uint64_t z = x;
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
            s = z ^ (z >> 31);
        }
    }

    std::uint64_t next()
    {
        const std::uint64_t result = rotl(m_s[1] * 5, 7) * 9;
        const std::uint64_t t = m_s[1] << 17;
        m_s[2] ^= m_s[0];
        m_s[3] ^= m_s[1];
        m_s[1] ^= m_s[2];
        m_s[0] ^= m_s[3];
        m_s[2] ^= t;
        m_s[3] = rotl(m_s[3], 45);
        return result;
    }

    // Uniform in [0, n) for n > 0 (Lemire's multiply-shift; the bias is far
    // below anything a simulation of this size can see).
    std::uint64_t below(std::uint64_t n)
    {
        __extension__ using u128 = unsigned __int128;
        return static_cast<std::uint64_t>((static_cast<u128>(next()) * n) >> 64);
    }

    // Uniform in [0, 1).
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

    double exponential(double mean) { return -mean * std::log1p(-uniform()); }

    template<class Hash>
    void hashState(Hash& h) const
    {
        h(m_s[0], m_s[1], m_s[2], m_s[3]);
    }

private:
    static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    std::uint64_t m_s[4] {};
};

} // namespace blkmq
