#include "metrics/LatencyHistogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace blkmq {

std::int64_t LatencyHistogram::bucketUpper(int b)
{
    if (b < kSub)
        return b;
    const int shift = b / kSub - 1;
    const std::uint64_t sub = static_cast<std::uint64_t>(b % kSub);
    const std::uint64_t lo = (static_cast<std::uint64_t>(kSub) | sub) << shift;
    return static_cast<std::int64_t>(lo + (1ULL << shift) - 1);
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
