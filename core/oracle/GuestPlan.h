#pragma once

#include "spec/Scenario.h"
#include "sim/Result.h"

#include <string>
#include <vector>

namespace blkmq {

// A scenario as the oracle's guest runs it: the QEMU machine (sockets, cores, NUMA nodes and their
// distances, one virtio-blk-pci device per virtio device of the scenario, null-co behind it), the
// kernel command line, and the files of the guest's /job: settings (devices, schedulers,
// rq_affinity), setup.sh (the null_blk devices, through configfs) and the fio job file itself.
// Only what both sides can run the same way is accepted; anything else is an error naming the
// scenario field and why.
struct GuestPlan {
    std::vector<std::string> qemuArgs; // all but -kernel, -initrd and -append, which the runner adds
    std::string cmdline; // appended to the kernel command line ("threadirqs")
    std::string settings, setup, fio; // /job/settings, /job/setup.sh, /job/job.fio
    std::vector<std::string> devices; // the block devices the guest will have, in the scenario's order
    int nrCpus = 0;
};

Result<GuestPlan> planGuest(const Scenario& s, const std::string& fioText);

// The scenario the lab runs beside the guest: the one given, with the placement the guest's kernel
// chose (each hw queue's CPUs and its vector's effective CPU, as the guest printed them), so that
// both route completions from the same map. Returns the --set overrides to apply.
struct GuestReport;
std::vector<std::string> placementSettings(const Scenario& s, const GuestReport& g);

// Where the guest's machine is not the scenario's (a CPU whose SMT siblings or last-level cache
// differ, as the guest's sysfs listed them): one line naming the first such CPU, or empty.
std::string machineDifference(const Topology& topo, const GuestReport& g);

} // namespace blkmq
