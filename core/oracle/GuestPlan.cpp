#include "oracle/GuestPlan.h"

#include "block/DeviceModel.h"
#include "oracle/OracleCounts.h"
#include "scenario/FioJobFile.h"
#include "scenario/KernelSwitches.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>

namespace blkmq {

namespace {

Result<GuestPlan> refuse(const std::string& field, const std::string& why)
{
    return Result<GuestPlan>::failure(field + ": " + why);
}

std::string devicePath(std::size_t i) { return "devices[" + std::to_string(i) + "]"; }

} // namespace

Result<GuestPlan> planGuest(const Scenario& s, const std::string& fioText)
{
    GuestPlan plan;
    const Topology& topo = s.topology;
    const int cpus = topo.nrCpus();
    plan.nrCpus = cpus;
    // QEMU numbers a core's SMT threads next to each other (a spec's "/adjacent"), and -smp gives
    // every socket the same cores and one L3: only such machines compare.
    const int threads = cpus / std::max(1, topo.nrCores());
    for (int c = 0; c < cpus; ++c)
        if (topo.nrCores() * threads != cpus || topo.cpu(c).core != c / threads || topo.cpu(c).thread != c % threads)
            return refuse("topology",
                "QEMU numbers a core's SMT threads one after another and gives every core the same "
                "threads; number them so (a spec ending in /adjacent, e.g. 2n:1p:4c:2t/adjacent)");
    if (topo.nrPackages() != topo.nrNodes() || topo.nrLlcs() != topo.nrNodes())
        return refuse("topology", "the oracle's guest has one socket, with one last-level cache, per NUMA node");
    if (cpus % topo.nrNodes() != 0)
        return refuse("topology", "QEMU gives every socket the same number of cores");
    for (int c = 0; c < cpus; ++c)
        if (topo.cpu(c).node != c / (cpus / topo.nrNodes()))
            return refuse("topology", "QEMU gives every socket the same number of cores");
    if (cpus > 32)
        return refuse("topology", "the oracle emulates at most 32 CPUs (TCG on this machine's cores)");
    if (!s.script.empty())
        return refuse("workload.script", "the guest runs fio jobs; scripted steps have no fio equivalent");
    if (!s.net_rx.empty())
        return refuse("workload.net_rx", "the guest has no network load");
    if (s.jobs.empty())
        return refuse("workload", "give the job as a fio job file (--fio), which the guest runs too");

    // The kernel: Linux 6.1 as Debian ships it, which the lab runs as kernel.version=v6.1.
    KernelSpec v61;
    v61.version = "v6.1";
    KernelSwitches::applyVersion(v61);
    v61.threadirqs = s.kernel.threadirqs;
    v61.tag_idle = s.kernel.tag_idle;
    for (const KernelSwitch& sw : KernelSwitches::all())
        if (sw.key != "version" && sw.value(s.kernel) != sw.value(v61))
            return refuse(sw.path(),
                "is " + sw.value(s.kernel) + ", but the guest runs Linux 6.1 (" + sw.value(v61)
                    + "); an oracle scenario sets only kernel.threadirqs");
    if (s.kernel.threadirqs)
        plan.cmdline = "threadirqs";

    // The machine.
    const int nodes = topo.nrNodes();
    const int memPerNode = std::max(384, 1024 / nodes);
    plan.qemuArgs = { "-accel", "tcg,thread=multi", "-cpu", "max,vendor=GenuineIntel", "-m",
        std::to_string(memPerNode * nodes), "-smp",
        std::to_string(cpus) + ",sockets=" + std::to_string(nodes) + ",cores=" + std::to_string(cpus / nodes / threads)
            + ",threads=" + std::to_string(threads) };
    if (nodes > 1) {
        for (int n = 0; n < nodes; ++n) {
            const int first = n * (cpus / nodes), last = first + cpus / nodes - 1;
            plan.qemuArgs.insert(plan.qemuArgs.end(),
                { "-object",
                    "memory-backend-ram,id=m" + std::to_string(n) + ",size=" + std::to_string(memPerNode) + "M",
                    "-numa",
                    "node,nodeid=" + std::to_string(n) + ",cpus=" + std::to_string(first) + "-" + std::to_string(last)
                        + ",memdev=m" + std::to_string(n) });
        }
        const auto& d = topo.numaMatrix();
        for (int a = 0; a < nodes; ++a)
            for (int b = 0; b < nodes; ++b)
                if (a != b)
                    plan.qemuArgs.insert(plan.qemuArgs.end(),
                        { "-numa",
                            "dist,src=" + std::to_string(a) + ",dst=" + std::to_string(b) + ",val="
                                + std::to_string(d[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)]) });
    }

    // The devices.
    std::map<std::string, int> setSize;
    for (const DeviceSpec& d : s.devices)
        ++setSize[d.tag_set];
    std::string sharedSet;
    int virtio = 0, nullb = 0;
    std::string nullbModule, nullbDevices;
    plan.settings = "DEVICES=\"";
    std::string perDevice;
    for (std::size_t i = 0; i < s.devices.size(); ++i) {
        const DeviceSpec& d = s.devices[i];
        const std::string path = devicePath(i);
        if (d.completion.kind != CompletionDist::Kind::Fixed)
            return refuse(path + ".completion_nsec",
                "the guest's devices take one fixed completion time (QEMU's latency-ns, null_blk's completion_nsec)");
        if (d.queue_limit || d.cmd_issue_lock || d.channels)
            return refuse(path, "queue_limit, channels and cmd_issue_lock have no equivalent in the guest's devices");
        if (d.irqmode == IrqMode::Virtio) {
            const std::string name = std::string("vd") + static_cast<char>('a' + virtio);
            if (virtio >= 26 || d.name != name)
                return refuse(path + ".name",
                    "the guest names its virtio-blk devices vda, vdb, ... in order; name this one '" + name
                        + "' so that a job's filename means the same device in both");
            if (!d.irq_affinity.empty() || d.queue_map != QueueMap::Managed)
                return refuse(path + ".irq_affinity",
                    "virtio-blk's vectors are managed interrupts: the kernel places them and maps the CPUs to "
                    "them; leave irq_affinity and queue_map at their defaults (the lab follows the guest's placement)");
            const int depth = d.hw_queue_depth;
            if (depth < 4 || depth > 1024 || (depth & (depth - 1)))
                return refuse(
                    path + ".hw_queue_depth", "is virtio-blk's queue size in the guest: a power of two from 4 to 1024");
            if (d.submit_queues > cpus)
                return refuse(path + ".submit_queues", "virtio-blk uses at most one queue per CPU");
            plan.qemuArgs.insert(plan.qemuArgs.end(),
                { "-drive",
                    "if=none,id=d" + std::to_string(i)
                        + ",driver=null-co,size=4G,read-zeroes=on,latency-ns=" + std::to_string(d.completion.a),
                    "-device",
                    "virtio-blk-pci,drive=d" + std::to_string(i) + ",num-queues=" + std::to_string(d.submit_queues)
                        + ",queue-size=" + std::to_string(depth) });
            ++virtio;
        } else if (const int mode = DeviceModel::of(d.irqmode).nullBlkIrqmode(); mode >= 0) { // null_blk's own
            const std::string name = "nullb" + std::to_string(nullb);
            if (d.name != name)
                return refuse(path + ".name",
                    "the guest names its null_blk devices nullb0, nullb1, ... in order; name this one '" + name
                        + "' (an nr_devices entry named \"nullb\" does)");
            const bool shared = setSize[d.tag_set] > 1;
            if (shared && !sharedSet.empty() && sharedSet != d.tag_set)
                return refuse(path + ".tag_set", "null_blk has one shared tag set (its shared_tags module parameter)");
            if (shared && sharedSet.empty()) {
                sharedSet = d.tag_set;
                nullbModule = " shared_tags=1 submit_queues=" + std::to_string(d.submit_queues)
                    + " hw_queue_depth=" + std::to_string(d.hw_queue_depth);
            }
            const std::string dir = "/sys/kernel/config/nullb/" + name;
            nullbDevices += "mkdir " + dir + "\n";
            for (const auto& [attr, value] : std::vector<std::pair<std::string, std::string>> { { "queue_mode", "2" },
                     { "poll_queues", "0" }, { "submit_queues", std::to_string(d.submit_queues) },
                     { "hw_queue_depth", std::to_string(d.hw_queue_depth) }, { "irqmode", std::to_string(mode) },
                     { "completion_nsec", std::to_string(d.completion.a) }, { "shared_tags", shared ? "1" : "0" },
                     { "power", "1" } })
                nullbDevices += "echo " + value + " > " + dir + "/" + attr + "\n";
            ++nullb;
        } else {
            return refuse(path + ".irqmode",
                "the oracle's guest has virtio-blk (irqmode virtio) and null_blk (none, softirq, timer) devices");
        }
        plan.devices.push_back(d.name);
        plan.settings += (i ? " " : "") + d.name;
        perDevice += "SCHED_" + d.name + "=" + (d.scheduler == SchedulerKind::MqDeadline ? "mq-deadline" : "none")
            + "\nRQAFF_" + d.name + "=" + std::to_string(d.rq_affinity) + "\n";
    }
    plan.settings += "\"\n" + perDevice;
    plan.setup = "set -e\n";
    if (nullb)
        plan.setup += "insmod /modules/null_blk.ko queue_mode=2 nr_devices=0 poll_queues=0" + nullbModule + "\n"
            + nullbDevices;

    // The job file, as the lab read it: every job names its device.
    const auto job = FioJobFile::read(fioText, "job.fio", plan.devices);
    if (!job.ok())
        return Result<GuestPlan>::failure(job.error());
    for (std::size_t i = 0; i < s.jobs.size(); ++i)
        if (!job->origin.count("workload.jobs[" + std::to_string(i) + "].device"))
            return refuse("workload.jobs[" + std::to_string(i) + "]",
                "the oracle needs filename=/dev/NAME in every job of the fio file, so both sides use the same device");
    plan.fio = fioText;
    return plan;
}

std::vector<std::string> placementSettings(const Scenario& s, const GuestReport& g)
{
    std::vector<std::string> sets;
    for (const DeviceSpec& d : s.devices) {
        const auto it = std::find_if(
            g.devices.begin(), g.devices.end(), [&](const GuestReport::Device& gd) { return gd.name == d.name; });
        if (it == g.devices.end() || static_cast<int>(it->hctxCpus.size()) != d.submit_queues)
            continue;
        sets.push_back("devices." + d.name + ".queue_map=" + nlohmann::json(it->hctxCpus).dump());
        if (d.irqmode == IrqMode::Virtio && static_cast<int>(it->vectorCpu.size()) == d.submit_queues
            && std::none_of(it->vectorCpu.begin(), it->vectorCpu.end(), [](int c) { return c < 0; }))
            sets.push_back("devices." + d.name + ".irq_affinity=" + nlohmann::json(it->vectorCpu).dump());
    }
    return sets;
}

std::string machineDifference(const Topology& topo, const GuestReport& g)
{
    if (static_cast<int>(g.siblings.size()) != topo.nrCpus())
        return "the guest listed " + std::to_string(g.siblings.size()) + " CPUs, the scenario has "
            + std::to_string(topo.nrCpus());
    for (int c = 0; c < topo.nrCpus(); ++c) {
        const auto i = static_cast<std::size_t>(c);
        if (g.siblings[i] != topo.threadSiblings(c))
            return "CPU " + std::to_string(c) + "'s SMT siblings are " + g.siblings[i] + " in the guest, "
                + topo.threadSiblings(c) + " in the scenario";
        if (g.llcs[i] != topo.llcCpus(c))
            return "CPU " + std::to_string(c) + " shares its last-level cache with " + g.llcs[i] + " in the guest, "
                + topo.llcCpus(c) + " in the scenario";
    }
    return {};
}

} // namespace blkmq
