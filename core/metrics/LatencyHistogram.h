#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <memory>

namespace blkmq {

// Log-linear histogram of nanosecond latencies (HdrHistogram-like: 2^k
// ranges split into 32 linear sub-buckets, so any recorded value is off by
// at most 1/32 ≈ 3%). Fixed size: recording never allocates.
class LatencyHistogram {
public:
    void record(std::int64_t ns) // on every I/O: inline
    {
        if (ns < 0)
            ns = 0;
        ++m_buckets[static_cast<std::size_t>(bucketOf(static_cast<std::uint64_t>(ns)))];
        ++m_count;
        m_sum += ns;
        m_max = std::max(m_max, ns);
        m_min = std::min(m_min, ns);
    }
    // Adds every value `o` recorded, as if each had been recorded here.
    void add(const LatencyHistogram& o)
    {
        if (o.m_count == 0)
            return;
        for (std::size_t b = 0; b < m_buckets.size(); ++b)
            m_buckets[b] += o.m_buckets[b];
        m_count += o.m_count;
        m_sum += o.m_sum;
        m_max = std::max(m_max, o.m_max);
        m_min = std::min(m_min, o.m_min);
    }
    LatencyHistogram merged(const LatencyHistogram& o) const
    {
        LatencyHistogram h = *this;
        h.add(o);
        return h;
    }
    std::uint64_t count() const { return m_count; }
    double mean() const { return m_count ? static_cast<double>(m_sum) / static_cast<double>(m_count) : 0.0; }
    std::int64_t sum() const { return m_sum; }
    std::int64_t max() const { return m_max; }
    // A fresh histogram made in place: assigning one built its 15 KiB of buckets on the stack and
    // copied them, twice per sample (docs/performance.md).
    void reset() { std::construct_at(this); }
    std::int64_t min() const { return m_count ? m_min : 0; }
    // Value at fraction q in [0, 1] (fio's percentiles: q = 0.99 for p99).
    std::int64_t percentile(double q) const;

private:
    static constexpr int kSubBits = 5;
    static constexpr int kSub = 1 << kSubBits;
    static constexpr int kBuckets = (64 - kSubBits) * kSub;
    static int bucketOf(std::uint64_t v)
    {
        if (v < kSub)
            return static_cast<int>(v);
        const int msb = 63 - std::countl_zero(v); // >= kSubBits
        const int shift = msb - kSubBits;
        const int sub = static_cast<int>((v >> shift) & (kSub - 1));
        return (shift + 1) * kSub + sub;
    }
    static std::int64_t bucketUpper(int b);

    std::array<std::uint64_t, kBuckets> m_buckets {};
    std::uint64_t m_count = 0;
    std::int64_t m_sum = 0;
    std::int64_t m_max = 0;
    std::int64_t m_min = INT64_MAX;
};

} // namespace blkmq
