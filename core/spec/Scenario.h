#pragma once

#include "sim/EnumNames.h"
#include "sim/SimTime.h"
#include "spec/CompletionPatches.h"
#include "spec/TagPatches.h"
#include "topo/Costs.h"
#include "topo/Topology.h"

#include <array>
#include <iterator>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace blkmq {

// A device's model (docs/scenario.md, irqmode): how its driver starts requests and hears of their
// completion. The models, their names and what each allows are block/DeviceModel's, one per value.
enum class IrqMode : std::uint8_t { None, Softirq, Timer, Nvme, Napi, Kthread, Rdma, Virtio, Mtip32xx };
enum class QueueMap : std::uint8_t { Managed, Sequential, Explicit };
enum class SchedulerKind : std::uint8_t { None, MqDeadline };
enum class CpusAllowedPolicy : std::uint8_t { Shared, Split };

// Service time of the device: fixed, uniform in [min, max], or exponential.
struct CompletionDist {
    enum class Kind : std::uint8_t { Fixed, Uniform, Exponential } kind = Kind::Fixed;
    std::int64_t a = 10000; // fixed value, uniform min, or exponential mean (ns)
    std::int64_t b = 10000; // uniform max
};

// One block device after null_blk's module parameters (one entry of
// "devices"; an entry with nr_devices > 1 is expanded to name0..nameN-1).
struct DeviceSpec {
    std::string name;
    int entry = 0; // its entry's index in "devices"
    std::string entryName; // its entry's name (the name, unless nr_devices > 1 made name0, name1, ...)
    int submit_queues = 1;
    int hw_queue_depth = 64;
    IrqMode irqmode = IrqMode::Nvme;
    CompletionDist completion;
    std::vector<int> irq_affinity; // one CPU per hw queue; empty = spread
    QueueMap queue_map = QueueMap::Managed; // how CPUs map to hw queues
    std::vector<int> queue_of_cpu; // QueueMap::Explicit: the hw queue of each CPU, as the kernel's map_queues made it
    std::vector<int> rss_cpus; // napi: CPUs the NIC steers receive queues to (empty = all)
    SchedulerKind scheduler = SchedulerKind::None;
    int rq_affinity = 1;
    std::string tag_set; // devices naming the same tag set share its tags
    int queue_limit = 0; // ->queue_rq returns BUSY beyond this many in flight per hw queue (0 = never)
    // The device's internal parallelism: how many commands its media serve at once (an SSD's flash
    // channels). Each command goes to a channel at random, as a random read's address does, and waits
    // there behind the commands before it; 0 = every command is served at once.
    int channels = 0;
    // mtip32xx: ->queue_rq takes port->cmd_issue_lock[slot >> 5] around two MMIO writes (SACT, CI); the
    // command slot is the tag + 1, slot 0 being the internal command's
    bool cmd_issue_lock = false;
};

// One entry of "tag_sets": a blk_mq_tag_set that the devices naming it share.
struct TagSetSpec {
    std::string name;
    // The driver's own pool of in-flight permits for all devices on the set (IBNBD's ibtrs
    // session: queue_depth, 512 by default); ->queue_rq returns BLK_STS_RESOURCE without one. 0 = none.
    int driver_permits = 0;
};

struct JobSpec {
    std::string name;
    std::string device; // a device name, or an entry name with nr_devices > 1 (jobs spread over them)
    int numjobs = 1;
    int iodepth = 1;
    std::vector<int> cpus_allowed; // empty = every CPU
    CpusAllowedPolicy cpus_allowed_policy = CpusAllowedPolicy::Shared;
    std::string rw = "randread";
    int bs = 4096;
    int iodepth_batch_submit = 1;
    std::int64_t thinktime_ns = 0;
    std::int64_t number_ios = 0; // fio number_ios: stop after this many I/Os (0 = run to the end)
    bool hipri = false; // polled I/O: completions are found by the submitter polling
    double bypass_pct = 0; // share of requests that bypass the scheduler (flush-like)
};

// Competing network receive load: packets raise NET_RX on these CPUs.
struct NetRxLoad {
    std::vector<int> cpus;
    double pps = 0; // packets per second per CPU (Poisson)
    std::int64_t cost_ns = 0; // NET_RX CPU time per packet
};

struct ScriptStep {
    enum class Op : std::uint8_t { Submit, Complete, Run } op = Op::Submit;
    SimTime at;
    std::string id;
    int cpu = 0;
    std::string device;
    bool bypass = false; // straight to hctx->dispatch (flush-like / requeued)
    bool hold = false; // the device keeps it until a "complete" step names it
    bool run = true; // submit: run the hw queue after inserting
};

// blk_mq_sched_dispatch_requests() and blk_mq_dispatch_rq_list() as of (kernel.dispatch):
enum class DispatchMode : std::uint8_t {
    // 64765a75ef25 (v4.11 to v4.14): after a run of hctx->dispatch, the scheduler is asked only if
    // that run issued nothing ("OR if we did have work but weren't able to make progress"); without
    // a scheduler the software queues are flushed only when hctx->dispatch was empty; after a
    // failure the hctx is rerun unless RESTART or TAG_WAITING is set.
    V4_11,
    // 5e3d02bbafad (v4.15): the scheduler (or, without one, the software queues one request at a
    // time) is asked only after hctx->dispatch made progress without BLK_STS_RESOURCE; after a
    // failure the hctx is rerun unless RESTART is set, or if it found no tag and is on no wait queue.
    V4_15,
};
inline constexpr const char* kDispatchModeNames[] = { "v4.11", "v4.15" };
static_assert(std::size(kDispatchModeNames) == static_cast<std::size_t>(DispatchMode::V4_15) + 1);
inline const char* dispatchModeName(DispatchMode m) { return enumName(kDispatchModeNames, m); }

struct KernelSpec {
    // "custom": every switch as set (defaults as documented); "v6.1": the switches of Debian 12's kernel
    // (KernelSwitches::applyVersion), which any switch set explicitly overrides.
    std::string version = "custom";
    bool threadirqs = false;
    CompletionPatches patches;
    std::string restart = "own-hctx";
    DispatchMode dispatch = DispatchMode::V4_11;
    std::string tags = "sbitmap";
    TagPatches tag_patches; // kernel.patches.ida-*: with tags = percpu_ida only
    bool tag_fair_share = true; // kernel behaviour since v3.16; false only to teach what it prevents
    SimTime tag_idle
        = SimTime(30'000'000'000); // an idle hctx stops counting as active this long after its last request
    SimTime sched_rt_runtime = SimTime(950'000'000); // of each second, per CPU; 1s or more: no limit
};

// A run's choice points (docs/check.md): off by default; on, every random draw and every order of
// events at one instant is a choice, and the run takes `taken` in order, then the first option.
struct ChoiceSpec {
    bool on = false;
    int latency_points = 2; // the points of a service-time distribution a choice picks among
    bool lock_boundaries = false; // a CPU may be held at each lock boundary (ChoiceKind::Hold)
    std::vector<std::uint8_t> taken;
};

// A validated scenario. Built only by ScenarioLoader, which checks every
// field; everything downstream may rely on the values being in range.
struct Scenario {
    std::string name = "unnamed";
    std::string description;
    std::uint64_t seed = 1;
    SimTime duration = msec(10);
    SimTime sample_interval = msec(1);
    std::string topologyText = "1n:1p:4c:1t";
    Topology topology;
    int possible_cpus = 0; // num_possible_cpus(): at least the topology's CPUs (which are all online)
    std::vector<DeviceSpec> devices;
    std::vector<TagSetSpec> tag_sets; // declared tag sets only
    std::vector<JobSpec> jobs;
    std::vector<ScriptStep> script;
    std::vector<NetRxLoad> net_rx;
    KernelSpec kernel;
    SimTime stall_age = msec(50); // backstop: any request waiting longer is reported stuck
    Costs costs = Costs::defaults();
    ChoiceSpec choices;
    std::string sourceJson; // the normalized input, for live re-validation of commands
};

} // namespace blkmq
