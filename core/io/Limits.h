#pragma once

#include <cstdint>
#include <vector>

namespace blkmq {

// Every limit on what BlkMQ Lab accepts, declared once: the loaders and the
// CLI check against these constants, and `blkmqlab-cli limits` prints the
// table that docs/limits.md embeds. Each keeps memory, time or output bounded
// for a hostile or mistaken input; none is reached by a realistic scenario.
namespace limits {
inline constexpr std::int64_t kScenarioFileBytes = 8 << 20;
inline constexpr std::int64_t kTopologyXmlBytes = 64 << 20;
inline constexpr std::int64_t kHwlocReadNs = 2'000'000'000; // hwloc's child process reads one document
inline constexpr std::int64_t kJsonDepth = 64;
inline constexpr std::int64_t kCpus = 4096;
inline constexpr std::int64_t kDurationNs = 3600LL * 1000000000LL;
inline constexpr std::int64_t kSamples = 1000000;
inline constexpr std::int64_t kDevices = 4096;
inline constexpr std::int64_t kHctxs = 65536;
inline constexpr std::int64_t kDriverTags = 4 << 20;
inline constexpr std::int64_t kJobThreads = 16384;
inline constexpr std::int64_t kIosInFlight = 1 << 20;
inline constexpr std::int64_t kScriptSteps = 10000;
inline constexpr std::int64_t kNetRxLoads = 4096;
inline constexpr std::int64_t kNetRxSources = 65536; // (load, CPU) pairs: each keeps one arrival pending
inline constexpr std::int64_t kExploreSeeds = 100000;
inline constexpr std::int64_t kSweepValues = 10000; // per axis
inline constexpr std::int64_t kSweepRuns = 10000; // a grid larger than this runs only with --yes
inline constexpr std::int64_t kSweepRunsMax = 1000000; // ... and never larger than this
inline constexpr std::int64_t kThreads = 1024;
inline constexpr std::int64_t kMergeInputBytes = std::int64_t(1) << 30; // per shard CSV that merge reads
inline constexpr std::int64_t kChartBytes = std::int64_t(256) << 20; // a chart description blkmqlab-chart reads
inline constexpr std::int64_t kTraceEvents = 2'000'000; // run --trace-cap
inline constexpr std::int64_t kSessionCommands = 100000; // live commands in a session file
inline constexpr std::int64_t kSessionBookmarks = 1000;
inline constexpr std::int64_t kBookmarkNoteBytes = 500;
inline constexpr std::int64_t kCheckpointBytes = std::int64_t(512) << 20; // a run's checkpoints together
inline constexpr std::int64_t kLatencyPoints = 16; // choices.latency_points
inline constexpr std::int64_t kChoicesTaken = 100000; // choices.taken
inline constexpr std::int64_t kCheckRuns = 100000000; // check --max-runs
inline constexpr std::int64_t kCheckDepth = 10000; // check --max-depth
inline constexpr std::int64_t kCheckStates = 20000000; // check --max-states: the table of states explored
} // namespace limits

struct LimitInfo {
    const char* name; // as error messages name it
    std::int64_t value;
    const char* unit; // "bytes", "ns" or "" for a count
    const char* why;
};

const std::vector<LimitInfo>& allLimits();

} // namespace blkmq
