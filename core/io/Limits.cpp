#include "io/Limits.h"

namespace blkmq {

const std::vector<LimitInfo>& allLimits()
{
    using namespace limits;
    static const std::vector<LimitInfo> table = {
        { "scenario file size", kScenarioFileBytes, "bytes",
            "the largest preset is 2.5 KB; a scenario is read whole into memory" },
        { "hwloc XML file size", kTopologyXmlBytes, "bytes", "lstopo's XML of a 4096-CPU machine is a few MB" },
        { "JSON nesting depth", kJsonDepth, "",
            "scenarios nest 5 levels; deeper documents are refused before they are parsed" },
        { "CPUs", kCpus, "", "per-CPU state, and CPU distances grow with it; the seeds' largest machine has 80 CPUs" },
        { "duration", kDurationNs, "ns", "an hour of simulated time; the seeds' runs last seconds" },
        { "samples (duration / sample_interval)", kSamples, "",
            "the time series is reserved up front (about 100 MB of CSV at this limit)" },
        { "devices (after nr_devices)", kDevices, "", "null_blk's nr_devices; Roman's run used 64" },
        { "hardware queues over all devices", kHctxs, "", "each hctx is a few hundred bytes plus its tags" },
        { "driver tags over all tag sets", kDriverTags, "", "each tag may hold one request (about 100 bytes)" },
        { "job threads (sum of numjobs)", kJobThreads, "", "each is a task the CPU scheduler considers" },
        { "I/Os in flight (sum of numjobs x iodepth)", kIosInFlight, "",
            "each in-flight I/O holds its state from submission to completion" },
        { "workload.script steps", kScriptSteps, "", "scripts are written by hand; the stall scripts have 6" },
        { "workload.net_rx loads", kNetRxLoads, "", "one per CPU at most makes sense" },
        { "explore --seeds", kExploreSeeds, "", "seeds are streamed; the report keeps one row per seed" },
        { "sweep values", kSweepValues, "", "one run and one report row per value" },
        { "--threads", kThreads, "", "TBB worker threads; 0 means one per CPU" },
    };
    return table;
}

} // namespace blkmq
