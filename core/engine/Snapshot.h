#pragma once

#include "block/Request.h"
#include "cpu/KernelPath.h"
#include "metrics/Counters.h"
#include "metrics/FunctionProfile.h"
#include "metrics/Metrics.h"
#include "metrics/TimeSeries.h"
#include "scenario/LiveChange.h"
#include "sim/ExecContext.h"
#include "sim/SimTime.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace blkmq {

struct CpuSnapshot {
    bool idle = true;
    ExecContext running = ExecContext::Task;
    std::uint32_t softirqPending = 0;
    int doneListLen = 0; // blk_cpu_done
    int callSingleLen = 0;
    int currentTask = -1;
    std::array<std::int64_t, kExecContexts> busy_ns {};
    FunctionProfile::PerCpu restartProfile; // blk_mq_sched_restart, as ftrace's function profiler
    KernelPath kernelPath {}; // what it executes now, outermost level first (Machine::kernelPath)
    int kernelDepth = 0; // levels of kernelPath in use
};

// A tag in Snapshot::tagMaps, when no CPU's cache holds it.
enum TagMapState : std::int16_t { kTagFree = -1, kTagInUse = -2, kTagLost = -3 };

struct HctxSnapshot {
    int dev = 0;
    int index = 0;
    int vectorCpu = 0;
    int dispatchLen = 0;
    int schedLen = 0;
    int atDevice = 0;
    int cqLen = 0;
    bool restart = false;
    int tags = 0; // index into Snapshot::tagMaps
    int tagsInUse = 0; // of the tags this hctx shares
    int tagsHeld = 0; // by this hctx's requests
    int tagDepth = 0;
};

struct RequestSnapshot {
    int id = 0;
    int cpu = 0; // submitting CPU
    int hctx = 0;
    RqState state = RqState::Free;
    std::int64_t submitted_ns = 0;
    std::int64_t dispatched_ns = 0;
    bool stuck = false; // the stall detector names it
    int atCpu = -1; // completing: the CPU whose queue holds it (completion queue, IPI queue, done list)
    int script = -1; // the workload.script step that submitted it (its id names it), -1 for fio's
    int tag = -1; // its driver tag in its hctx's tag map (HctxSnapshot::tags), -1 while it has none
};

// An immutable picture of one engine at one instant, for the GUI and
// tests. Published by value behind a shared_ptr<const Snapshot>.
struct Snapshot {
    SimTime now;
    std::uint64_t events = 0;
    Counters counters;
    MetricValues totals {}; // every metric of the table over the run so far
    // The scenario as loaded, and the live changes applied to it since, in order (both shared: the list is
    // copied only when a change is applied). ScenarioLoader::withChanges() makes the scenario as it runs now.
    std::shared_ptr<const std::string> scenarioJson;
    std::shared_ptr<const std::vector<Command>> liveChanges;
    // workload.script ids by step (RequestSnapshot::script indexes them; shared, built once per engine).
    std::shared_ptr<const std::vector<std::string>> scriptIds;
    std::vector<CpuSnapshot> cpus;
    std::vector<HctxSnapshot> hctxs;
    // Per driver-tags object, per tag (empty above 4096 tags): one of TagMapState, or >= 0 for a free
    // tag cached on that CPU (percpu_ida's per-CPU stacks).
    std::vector<std::vector<std::int16_t>> tagMaps;
    std::vector<RequestSnapshot> requests;
    // RESTART's counters: q->shared_hctx_restart per device (8e8320c9315c) and the tag set's
    // (Roman Pen's RFC), as the registered variant keeps them (0 where it keeps none).
    std::vector<int> queueRestartCounters;
    std::vector<int> tagSetRestartCounters;
    bool stalled = false; // the stall detector has fired in this run
    std::int64_t firstStallNs = -1; // ... first, at this time
    std::optional<SeriesRow> intervalSoFar; // Engine::intervalSoFar(): the plots' provisional last point
    std::size_t markers = 0;
    std::string fingerprint;
};

} // namespace blkmq
