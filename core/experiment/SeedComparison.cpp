#include "experiment/SeedComparison.h"

#include "metrics/Metrics.h"

#include <cmath>

namespace blkmq {

namespace {

struct MeanSd {
    double mean = 0, sd = 0;
};

MeanSd meanSd(const std::vector<double>& v)
{
    MeanSd s;
    if (v.empty())
        return s;
    for (const double x : v)
        s.mean += x;
    s.mean /= static_cast<double>(v.size());
    if (v.size() > 1) {
        for (const double x : v)
            s.sd += (x - s.mean) * (x - s.mean);
        s.sd = std::sqrt(s.sd / static_cast<double>(v.size() - 1));
    }
    return s;
}

} // namespace

double tCritical975(std::uint64_t df)
{
    static constexpr double kT[]
        = { 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
              2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042 };
    if (df == 0)
        return INFINITY;
    if (df <= 30)
        return kT[df - 1];
    const double z = 1.959963984540054, n = static_cast<double>(df); // Cornish-Fisher expansion
    return z + (z * z * z + z) / (4 * n) + (5 * std::pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * n * n);
}

Result<SeedComparison> compareOverSeeds(const Experiment::Loader& base, const std::vector<std::string>& a,
    const std::vector<std::string>& b, std::uint64_t first, std::uint64_t seeds, Experiment::Options options)
{
    const Experiment experiment(
        base, { Axis::configurations("side", { { "A", a }, { "B", b } }), Axis::seeds(first, seeds) });
    for (std::uint64_t side = 0; side < 2; ++side)
        if (auto sc = experiment.scenario(side * seeds); !sc)
            return Result<SeedComparison>::failure((side ? "B: " : "A: ") + sc.error());
    SeedComparison out;
    out.seeds = seeds;
    out.tCritical = tCritical975(seeds - 1);
    // values[side][metric][seed]
    std::vector<std::vector<std::vector<double>>> values(2, std::vector<std::vector<double>>(kMetrics.size()));
    const auto status = experiment.run(options, [&](RunResult&& r) {
        const std::size_t side = r.index < seeds ? 0 : 1;
        (side ? out.stalledB : out.stalledA) += r.stalled;
        for (std::size_t m = 0; m < kMetrics.size(); ++m)
            values[side][m].push_back(r.metrics[m]);
    });
    if (!status.error.empty())
        return Result<SeedComparison>::failure(status.error);
    out.interrupted = status.interrupted;
    if (out.interrupted)
        return out;
    for (std::size_t m = 0; m < kMetrics.size(); ++m) {
        const auto& va = values[0][m];
        const auto& vb = values[1][m];
        MetricComparison c;
        c.metric = static_cast<int>(m);
        const MeanSd sa = meanSd(va), sb = meanSd(vb);
        if (sa.mean == 0 && sb.mean == 0)
            continue; // a metric neither side exercises
        c.aMean = sa.mean;
        c.aSd = sa.sd;
        c.bMean = sb.mean;
        c.bSd = sb.sd;
        std::vector<double> diff, ratio;
        for (std::size_t i = 0; i < va.size(); ++i) {
            diff.push_back(vb[i] - va[i]);
            if (va[i] != 0)
                ratio.push_back(vb[i] / va[i]);
        }
        c.hasRatio = ratio.size() == va.size();
        if (c.hasRatio) {
            const MeanSd r = meanSd(ratio);
            c.ratioMean = r.mean;
            c.ratioSd = r.sd;
        }
        const MeanSd d = meanSd(diff);
        c.t = d.sd > 0 ? d.mean / (d.sd / std::sqrt(static_cast<double>(diff.size())))
                       : (d.mean == 0 ? 0.0 : std::copysign(INFINITY, d.mean));
        c.differs = std::fabs(c.t) > out.tCritical;
        out.metrics.push_back(c);
    }
    return out;
}

} // namespace blkmq
