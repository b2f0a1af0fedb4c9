#include "topo/Topology.h"

#include <algorithm>
#include <map>
#include <sstream>

namespace blkmq {

Topology::Topology(std::string name, std::vector<CpuInfo> cpus, std::vector<std::vector<int>> numaDistance)
    : m_name(std::move(name))
    , m_cpus(std::move(cpus))
    , m_numa(std::move(numaDistance))
{
    for (const auto& c : m_cpus) {
        m_nrNodes = std::max(m_nrNodes, c.node + 1);
        m_nrPackages = std::max(m_nrPackages, c.package + 1);
        m_nrLlcs = std::max(m_nrLlcs, c.llc + 1);
        m_nrCores = std::max(m_nrCores, c.core + 1);
    }
    if (m_numa.size() != static_cast<std::size_t>(m_nrNodes)) {
        m_numa.assign(m_nrNodes, std::vector<int>(m_nrNodes, 20));
        for (int i = 0; i < m_nrNodes; ++i)
            m_numa[i][i] = 10;
    }
    const int n = nrCpus();
    m_distance.resize(static_cast<std::size_t>(n) * n);
    for (int a = 0; a < n; ++a) {
        for (int b = 0; b < n; ++b) {
            const CpuInfo &x = m_cpus[a], &y = m_cpus[b];
            Distance d = Distance::Remote;
            if (a == b)
                d = Distance::Self;
            else if (x.core == y.core)
                d = Distance::Smt;
            else if (x.llc == y.llc)
                d = Distance::Llc;
            else if (x.node == y.node)
                d = Distance::Node;
            m_distance[static_cast<std::size_t>(a * n + b)] = static_cast<std::uint8_t>(d);
        }
    }
}

std::string cpuList(const std::vector<int>& ids)
{
    std::ostringstream out;
    for (std::size_t i = 0; i < ids.size();) {
        std::size_t j = i;
        while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1)
            ++j;
        if (i)
            out << ',';
        out << ids[i];
        if (j > i)
            out << '-' << ids[j];
        i = j + 1;
    }
    return out.str();
}

std::string Topology::cpusOf(bool (*same)(const CpuInfo&, const CpuInfo&), int id) const
{
    std::vector<int> ids;
    for (int c = 0; c < nrCpus(); ++c)
        if (same(cpu(c), cpu(id)))
            ids.push_back(c);
    return cpuList(ids);
}

std::string Topology::describeTree() const
{
    std::ostringstream out;
    out << m_name << ": " << nrCpus() << " CPUs, " << m_nrNodes << " node(s), " << m_nrPackages << " package(s), "
        << m_nrLlcs << " LLC domain(s), " << m_nrCores << " core(s)\n";
    // node → package → llc → core → cpus, each in the order of its first CPU.
    std::map<int, std::map<int, std::map<int, std::map<int, std::vector<int>>>>> tree;
    for (int id = 0; id < nrCpus(); ++id) {
        const auto& c = m_cpus[id];
        tree[c.node][c.package][c.llc][c.core].push_back(id);
    }
    for (auto& [node, pkgs] : tree) {
        std::vector<int> nodeCpus;
        for (int id = 0; id < nrCpus(); ++id)
            if (m_cpus[id].node == node)
                nodeCpus.push_back(id);
        out << "node " << node << " (cpus " << cpuList(nodeCpus) << ")\n";
        for (auto& [pkg, llcs] : pkgs) {
            out << "  package " << pkg << "\n";
            for (auto& [llc, cores] : llcs) {
                std::vector<int> llcCpus;
                for (int id = 0; id < nrCpus(); ++id)
                    if (m_cpus[id].llc == llc)
                        llcCpus.push_back(id);
                out << "    llc " << llc << " (cpus " << cpuList(llcCpus) << ")\n";
                for (auto& [core, ids] : cores)
                    out << "      core " << core << ": cpu " << cpuList(ids) << "\n";
            }
        }
    }
    return out.str();
}

std::string Topology::describeDistances() const
{
    std::ostringstream out;
    out << "distance classes: 0=self 1=smt 2=llc 3=node 4=remote\n";
    out << "numa distances:";
    for (int i = 0; i < m_nrNodes; ++i) {
        out << "\n  node " << i << ":";
        for (int j = 0; j < m_nrNodes; ++j)
            out << ' ' << m_numa[i][j];
    }
    out << "\ncpu";
    for (int b = 0; b < nrCpus(); ++b)
        out << (b < 10 ? "  " : " ") << b;
    out << '\n';
    for (int a = 0; a < nrCpus(); ++a) {
        out << (a < 10 ? "  " : " ") << a;
        for (int b = 0; b < nrCpus(); ++b)
            out << "  " << static_cast<int>(distance(a, b));
        out << '\n';
    }
    return out.str();
}

} // namespace blkmq
