#pragma once

#include "experiment/Experiment.h"

#include <cstdint>
#include <string>
#include <vector>

namespace blkmq {

// One metric of an A/B comparison over seeds: both sides' mean and standard deviation, B/A as the
// mean of the per-seed ratios (when A is never 0) with its standard deviation, and a paired t-test
// of B - A over the seeds (the same seed is the same workload on both sides).
struct MetricComparison {
    int metric = 0; // index into kMetrics
    double aMean = 0, aSd = 0, bMean = 0, bSd = 0;
    bool hasRatio = false;
    double ratioMean = 0, ratioSd = 0;
    double t = 0; // +-inf: an exactly repeated difference
    bool differs = false; // |t| > tCritical
};

struct SeedComparison {
    std::uint64_t seeds = 0;
    double tCritical = 0; // t(0.975, seeds - 1): two-sided 95%
    std::uint64_t stalledA = 0, stalledB = 0;
    std::vector<MetricComparison> metrics; // the metrics either side exercises, in table order
    bool interrupted = false;
    static constexpr const char* kTest = "paired t-test over the seeds, two-sided, 95%: a difference is "
                                         "significant when |t| > t(0.975, seeds - 1)";
};

// Student's t quantile at 0.975 for df degrees of freedom (a table to 30, a series above).
double tCritical975(std::uint64_t df);

// A (the base with settings `a`) and B (with `b`) on seeds first .. first + seeds - 1, on TBB through
// Experiment; an error names a setting that does not load. Clients: blkmqlab-cli ab, the GUI's
// Compare A/B over seeds.
Result<SeedComparison> compareOverSeeds(const Experiment::Loader& base, const std::vector<std::string>& a,
    const std::vector<std::string>& b, std::uint64_t first, std::uint64_t seeds, Experiment::Options options = {});

} // namespace blkmq
