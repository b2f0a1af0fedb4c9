#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace blkmq {

// A figure from a seed thread and how to reproduce it with a preset.
struct Claim {
    std::string family; // "baseline", later "completion", "restart", "tags"
    std::string source; // "the 2020 completion thread, Jens Axboe"
    std::string text; // the claim as the thread makes it
    std::string preset;
    std::vector<std::string> sets; // overrides of run A
    std::string metric; // JSON pointer into the run summary, e.g. "/metrics/iops"
    std::string per; // non-empty: the figure is metric / this JSON pointer, in the same run
    std::vector<std::string> compareSets; // non-empty: the figure is metric(A) / metric(B)
    std::string comparePreset; // non-empty: B runs this preset (with compareSets) instead of A's
    double lo = 0, hi = 0; // the band in which the claim holds
    std::string band; // the band in words
    bool calibrated = false; // a cost was fitted to this claim (docs/model.md)
    // Non-empty: the thread measured something the preset does not model; the figure is printed
    // beside it but the claim neither holds nor misses.
    std::string notComparable;
    std::string duration = "100ms";
    // Non-empty: a proof within bounds (blkmqlab-cli check): the property, whose verdict on the preset
    // is the figure: 1 violated, 0 holds for every ordering, -1 the search ended at its bound.
    std::string check;
    bool compared() const { return !compareSets.empty() || !comparePreset.empty(); }
};

struct ClaimResult {
    Claim claim;
    double simulated = 0;
    bool holds = false;
    std::uint64_t runs = 0; // a proof row: the runs the search made
    std::size_t choices = 0; // ... and the shortest counterexample's choices
    bool comparable() const { return claim.notComparable.empty(); }
};

// The threads' figures next to what the simulator predicts for them. Runs
// the presets on TBB workers; results are in claim order.
class Validation {
public:
    static std::vector<Claim> claims(const std::string& family);
    static std::vector<std::string> families();
    static std::vector<ClaimResult> run(const std::vector<Claim>& claims);
    static std::string markdown(const std::vector<ClaimResult>& results);
};

} // namespace blkmq
