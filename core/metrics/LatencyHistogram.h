#pragma once

#include <array>
#include <cstdint>

namespace blkmq {

// Log-linear histogram of nanosecond latencies (HdrHistogram-like: 2^k
// ranges split into 32 linear sub-buckets, so any recorded value is off by
// at most 1/32 ≈ 3%). Fixed size: recording never allocates.
class LatencyHistogram {
public:
    void record(std::int64_t ns);
    std::uint64_t count() const { return m_count; }
    double mean() const { return m_count ? static_cast<double>(m_sum) / static_cast<double>(m_count) : 0.0; }
    std::int64_t sum() const { return m_sum; }
    std::int64_t max() const { return m_max; }
    void reset() { *this = LatencyHistogram {}; }
    std::int64_t min() const { return m_count ? m_min : 0; }
    // Value at fraction q in [0, 1] (fio's percentiles: q = 0.99 for p99).
    std::int64_t percentile(double q) const;

private:
    static constexpr int kSubBits = 5;
    static constexpr int kSub = 1 << kSubBits;
    static constexpr int kBuckets = (64 - kSubBits) * kSub;
    static int bucketOf(std::uint64_t v);
    static std::int64_t bucketUpper(int b);

    std::array<std::uint64_t, kBuckets> m_buckets {};
    std::uint64_t m_count = 0;
    std::int64_t m_sum = 0;
    std::int64_t m_max = 0;
    std::int64_t m_min = INT64_MAX;
};

} // namespace blkmq
