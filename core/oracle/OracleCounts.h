#pragma once

#include "sim/TraceSink.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace blkmq {

class Engine;

// What one side of the oracle counted while the fio job ran: in the guest, the kernel's own
// counters and tracepoints (tests/oracle/oracle-init.sh); in the lab, its trace. Counts only,
// never times: under emulation the guest's times say nothing about a real machine.
struct OracleCounts {
    int nrCpus = 0;
    // Completed requests by (submitting CPU, completing CPU): [submit * nrCpus + complete]. In the
    // guest, block:block_getrq (on the submitter, where rq->mq_ctx is chosen) paired with
    // block:block_rq_complete by device and sector.
    std::vector<std::uint64_t> pairs;
    std::vector<std::uint64_t> deviceIrqs; // per CPU: the devices' interrupt vectors (/proc/interrupts)
    std::vector<std::uint64_t> blkIpis; // per CPU: __blk_mq_complete_request_remote() runs (a kprobe)
    std::vector<std::uint64_t> blockSoftirqs; // per CPU: BLOCK softirq runs (/proc/softirqs)
    std::map<std::string, std::uint64_t> completedByDevice;
    std::uint64_t unpaired = 0; // completions whose submission was not seen (the guest's trace)
    // blk-mq's debugfs files after the job: path under /sys/kernel/debug/block ("vda/hctx0/tags") →
    // content. In the guest, every file of each hctx folder; in the lab, block/BlkMqDebugfs.h's.
    std::map<std::string, std::string> debugfs;
    // The same files before the first request (each hctx's tags and flags): the tag set as built.
    // After the job, 6.1's wake_batch of a shared tag set has followed its active queues.
    std::map<std::string, std::string> built;

    explicit OracleCounts(int cpus = 0);
    std::uint64_t pair(int submit, int complete) const
    {
        return pairs[static_cast<std::size_t>(submit * nrCpus + complete)];
    }
    std::uint64_t completed() const;
};

// The lab's side: counts an engine's trace records as the guest counts the kernel's.
class LabCounter final : public TraceSink {
public:
    explicit LabCounter(const Engine& engine);
    void record(const TraceRecord& r) override;
    const OracleCounts& counts() const { return m_counts; }

private:
    OracleCounts m_counts;
    std::vector<int> m_submitCpu; // by request slot: the CPU that submitted it
    std::vector<int> m_submitDev; // by request slot: its device
    std::vector<int> m_hctxDev; // by hctx: its device
    std::vector<std::string> m_devName;
};

// What the guest printed (the "@oracle" lines of its console), read back.
struct GuestReport {
    std::string kernel; // uname -r
    OracleCounts counts;
    struct Device {
        std::string name;
        std::string scheduler;
        int rqAffinity = -1;
        std::vector<std::string> hctxCpus; // per hw queue: its cpu_list, as a cpulist
        std::vector<int> vectorCpu; // per hw queue: the effective CPU of its interrupt vector (-1: none)
    };
    std::vector<Device> devices;
    // Per CPU, as sysfs lists them: its SMT siblings and the CPUs sharing its last-level cache.
    std::vector<std::string> siblings, llcs;
    std::string error; // what the guest reported going wrong, or empty
    std::vector<std::string> notes;
    bool done = false; // the guest reached the end of its script
    double jobSeconds = 0; // guest uptime around the fio run (for the report; never compared)
};
// Parses the console. nrCpus: the CPUs the guest was given.
GuestReport parseGuestReport(const std::string& console, int nrCpus);

} // namespace blkmq
