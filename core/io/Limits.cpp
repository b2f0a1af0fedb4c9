#include "io/Limits.h"

namespace blkmq {

const std::vector<LimitInfo>& allLimits()
{
    using namespace limits;
    static const std::vector<LimitInfo> table = {
        { "scenario file size", kScenarioFileBytes, "bytes",
            "the largest preset is 2.5 KB; a scenario is read whole into memory" },
        { "hwloc XML file size", kTopologyXmlBytes, "bytes",
            "hwloc XML takes about 370 bytes per CPU (the 16-CPU test file is 5.9 KB)" },
        { "hwloc XML reading time", kHwlocReadNs, "ns",
            "hwloc reads a 4096-CPU document (1.9 MB) in about 0.05 s; the child process reading one is then killed" },
        { "JSON nesting depth", kJsonDepth, "",
            "scenarios nest 5 levels; deeper documents are refused before they are parsed" },
        { "CPUs", kCpus, "",
            "per-CPU state, and CPU distances grow with it; the threads' largest machine has 80 CPUs" },
        { "duration", kDurationNs, "ns", "an hour of simulated time; the threads' runs last seconds" },
        { "samples (duration / sample_interval)", kSamples, "",
            "the time series is reserved up front (about 100 MB of CSV at this limit)" },
        { "devices (after nr_devices)", kDevices, "", "restart-128x64, the largest preset, has 128" },
        { "hardware queues over all devices", kHctxs, "", "the largest preset has 8,192 (128 devices x 64 queues)" },
        { "driver tags over all tag sets", kDriverTags, "",
            "each driver tag may hold a request; tag maps are allocated per hctx" },
        { "job threads (sum of numjobs)", kJobThreads, "", "each is a task with its own state and I/O units" },
        { "I/Os in flight (sum of numjobs x iodepth)", kIosInFlight, "",
            "each in-flight I/O holds its state from submission to completion" },
        { "workload.script steps", kScriptSteps, "", "scripts are written by hand; the stall script has 10 steps" },
        { "workload.net_rx loads", kNetRxLoads, "", "one load per CPU is the most that has a meaning" },
        { "workload.net_rx packet sources (CPUs summed over the loads)", kNetRxSources, "",
            "each CPU of each load keeps its next packet's arrival pending in the event queue" },
        { "explore --seeds", kExploreSeeds, "", "seeds are streamed; the report keeps one row per seed" },
        { "sweep values", kSweepValues, "", "values of one axis: one run and one report row per value" },
        { "sweep runs without --yes", kSweepRuns, "", "a grid this large is a mistake more often than a plan" },
        { "sweep runs", kSweepRunsMax, "", "the grid's CSV rows are held until it is written atomically" },
        { "--threads", kThreads, "", "TBB worker threads; 0 means one per CPU" },
        { "merge input per shard CSV", kMergeInputBytes, "bytes",
            "a shard is read whole; a million runs with every metric column take about 300 MB" },
        { "blkmqlab-chart input", kChartBytes, "bytes",
            "the chart of a whole sweep (a point per run, at most a million) is read whole" },
        { "run --trace-cap (trace events)", kTraceEvents, "",
            "the trace is held in memory until it is written: about 520 bytes an event (nvme-2s64-mq, 100 ms)" },
        { "session file: live commands", kSessionCommands, "",
            "each is replayed at its event; a class's session holds a few patch switches" },
        { "session file: bookmarks", kSessionBookmarks, "", "each is a marker on every plot" },
        { "session file: bookmark note", kBookmarkNoteBytes, "bytes", "a note is a label on a plot" },
        { "checkpoints of a run", kCheckpointBytes, "bytes",
            "copies of the run to go back in it; over this, older ones are thinned" },
        { "choices.latency_points", kLatencyPoints, "",
            "each device latency is a choice among this many points: a search's runs grow as its power" },
        { "choices.taken", kChoicesTaken, "", "a counterexample's choices; a small configuration makes dozens" },
        { "check --max-runs", kCheckRuns, "", "runs of one exhaustive search; a tiny configuration needs thousands" },
        { "check --max-depth", kCheckDepth, "", "choice points searched per run; later ones take their first option" },
        { "check --max-states", kCheckStates, "",
            "states one search remembers (about 60 bytes each); past it, new states are explored without being kept" },
    };
    return table;
}

} // namespace blkmq
