#include "SiTicker.h"

#include <cmath>
#include <utility>

namespace blkmq {

QString siLabel(double v, const QLocale& locale)
{
    static constexpr std::pair<double, char> kPrefixes[] = { { 1e12, 'T' }, { 1e9, 'G' }, { 1e6, 'M' }, { 1e3, 'k' } };
    const double a = std::abs(v);
    for (const auto& [scale, prefix] : kPrefixes)
        if (a >= scale)
            return locale.toString(v / scale, 'g', 3) + QLatin1Char(prefix);
    return locale.toString(std::abs(v) < 1e-12 ? 0.0 : v, 'g', 3);
}

} // namespace blkmq
