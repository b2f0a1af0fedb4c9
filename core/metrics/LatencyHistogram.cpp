#include "metrics/LatencyHistogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace blkmq {

int LatencyHistogram::bucketOf(std::uint64_t v)
{
    if (v < kSub)
        return static_cast<int>(v);
    const int msb = 63 - std::countl_zero(v); // >= kSubBits
    const int shift = msb - kSubBits;
    const int sub = static_cast<int>((v >> shift) & (kSub - 1));
    return (shift + 1) * kSub + sub;
}

std::int64_t LatencyHistogram::bucketUpper(int b)
{
    if (b < kSub)
        return b;
    const int shift = b / kSub - 1;
    const std::uint64_t sub = static_cast<std::uint64_t>(b % kSub);
    const std::uint64_t lo = (static_cast<std::uint64_t>(kSub) | sub) << shift;
    return static_cast<std::int64_t>(lo + (1ULL << shift) - 1);
}

void LatencyHistogram::record(std::int64_t ns)
{
    if (ns < 0)
        ns = 0;
    ++m_buckets[static_cast<std::size_t>(bucketOf(static_cast<std::uint64_t>(ns)))];
    ++m_count;
    m_sum += ns;
    m_max = std::max(m_max, ns);
    m_min = std::min(m_min, ns);
}

std::int64_t LatencyHistogram::percentile(double q) const
{
    if (!m_count)
        return 0;
    const auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(m_count)));
    std::uint64_t seen = 0;
    for (int b = 0; b < kBuckets; ++b) {
        seen += m_buckets[static_cast<std::size_t>(b)];
        if (seen >= std::max<std::uint64_t>(rank, 1))
            return std::clamp(bucketUpper(b), m_min, m_max);
    }
    return m_max;
}

} // namespace blkmq
