#pragma once

#include "sim/Distance.h"

#include <cstdint>
#include <string>
#include <vector>

namespace blkmq {

struct CpuInfo {
    int node = 0; // NUMA node
    int package = 0; // socket, numbered across the machine
    int llc = 0; // last-level-cache domain, numbered across the machine
    int core = 0; // physical core, numbered across the machine
    int thread = 0; // SMT thread index within its core
};

// CPU ids in Linux's cpulist format, ascending: "0-3,8-11".
std::string cpuList(const std::vector<int>& ids);

// A virtual machine's CPU topology: nodes ⊃ packages ⊃ LLC domains ⊃ cores ⊃
// SMT threads. CPU ids are 0..nrCpus()-1 as Linux numbers them.
class Topology {
public:
    Topology() = default;
    Topology(std::string name, std::vector<CpuInfo> cpus, std::vector<std::vector<int>> numaDistance);

    const std::string& name() const { return m_name; }
    int nrCpus() const { return static_cast<int>(m_cpus.size()); }
    int nrNodes() const { return m_nrNodes; }
    int nrPackages() const { return m_nrPackages; }
    int nrLlcs() const { return m_nrLlcs; }
    int nrCores() const { return m_nrCores; }
    const CpuInfo& cpu(int id) const { return m_cpus[static_cast<std::size_t>(id)]; }

    Distance distance(int a, int b) const
    {
        return static_cast<Distance>(m_distance[static_cast<std::size_t>(a * nrCpus() + b)]);
    }
    bool cpusShareCache(int a, int b) const { return cpu(a).llc == cpu(b).llc; }
    // ACPI SLIT-style distance between the CPUs' nodes (10 = local).
    int numaDistance(int a, int b) const
    {
        return m_numa[static_cast<std::size_t>(cpu(a).node)][static_cast<std::size_t>(cpu(b).node)];
    }
    const std::vector<std::vector<int>>& numaMatrix() const { return m_numa; }

    // As Linux's sysfs lists them: the CPUs sharing CPU id's core (topology/thread_siblings_list)
    // and its last-level cache (cache/index3/shared_cpu_list).
    std::string threadSiblings(int id) const
    {
        return cpusOf([](const CpuInfo& a, const CpuInfo& b) { return a.core == b.core; }, id);
    }
    std::string llcCpus(int id) const
    {
        return cpusOf([](const CpuInfo& a, const CpuInfo& b) { return a.llc == b.llc; }, id);
    }

    // Human-readable tree and distance matrix for `blkmqlab-cli topology`.
    std::string describeTree() const;
    std::string describeDistances() const;

private:
    std::string cpusOf(bool (*same)(const CpuInfo&, const CpuInfo&), int id) const;
    std::string m_name;
    std::vector<CpuInfo> m_cpus;
    std::vector<std::vector<int>> m_numa;
    std::vector<std::uint8_t> m_distance;
    int m_nrNodes = 0, m_nrPackages = 0, m_nrLlcs = 0, m_nrCores = 0;
};

} // namespace blkmq
