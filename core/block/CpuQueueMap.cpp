#include "block/CpuQueueMap.h"

namespace blkmq {

std::vector<int> blkMqMapQueues(const Topology& topo, int nrQueues)
{
    const int n = topo.nrCpus();
    std::vector<int> map(static_cast<std::size_t>(n), -1);
    int q = 0;
    for (int cpu = 0; cpu < n; ++cpu) {
        if (cpu < nrQueues) {
            map[static_cast<std::size_t>(cpu)] = q++ % nrQueues;
            continue;
        }
        int firstSibling = cpu;
        for (int other = 0; other < n; ++other) {
            if (topo.cpu(other).core == topo.cpu(cpu).core) {
                firstSibling = other;
                break;
            }
        }
        if (firstSibling == cpu)
            map[static_cast<std::size_t>(cpu)] = q++ % nrQueues;
        else
            map[static_cast<std::size_t>(cpu)] = map[static_cast<std::size_t>(firstSibling)];
    }
    return map;
}

} // namespace blkmq

#include <algorithm>
#include <numeric>

namespace blkmq {

std::vector<int> managedMapQueues(const Topology& topo, int nrQueues, std::vector<int>& vectorCpu)
{
    const int nodes = topo.nrNodes();
    // CPUs of each node, core by core with siblings together.
    std::vector<std::vector<int>> nodeCpus(static_cast<std::size_t>(nodes));
    std::vector<bool> placed(static_cast<std::size_t>(topo.nrCpus()), false);
    for (int cpu = 0; cpu < topo.nrCpus(); ++cpu) {
        if (placed[static_cast<std::size_t>(cpu)])
            continue;
        for (int sib = cpu; sib < topo.nrCpus(); ++sib) {
            if (topo.cpu(sib).core == topo.cpu(cpu).core) {
                nodeCpus[static_cast<std::size_t>(topo.cpu(cpu).node)].push_back(sib);
                placed[static_cast<std::size_t>(sib)] = true;
            }
        }
    }
    std::vector<std::vector<int>> masks(static_cast<std::size_t>(nrQueues));
    if (nrQueues < nodes) {
        for (int n = 0; n < nodes; ++n)
            for (int cpu : nodeCpus[static_cast<std::size_t>(n)])
                masks[static_cast<std::size_t>(n % nrQueues)].push_back(cpu);
    } else {
        // Vectors per node in proportion to CPUs, smallest node first, at least one each.
        std::vector<int> order(static_cast<std::size_t>(nodes));
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
            return nodeCpus[static_cast<std::size_t>(a)].size() < nodeCpus[static_cast<std::size_t>(b)].size();
        });
        std::vector<int> perNode(static_cast<std::size_t>(nodes), 0);
        int vecsLeft = nrQueues;
        int cpusLeft = topo.nrCpus();
        for (int n : order) {
            const int ncpus = static_cast<int>(nodeCpus[static_cast<std::size_t>(n)].size());
            int nv = std::max(1, vecsLeft * ncpus / std::max(1, cpusLeft));
            nv = std::min(nv, std::max(1, ncpus));
            perNode[static_cast<std::size_t>(n)] = nv;
            vecsLeft -= nv;
            cpusLeft -= ncpus;
        }
        // Vectors left over (more vectors than CPUs) stay empty, as in the kernel.
        int vec = 0;
        for (int n = 0; n < nodes; ++n) {
            const auto& cpus = nodeCpus[static_cast<std::size_t>(n)];
            const int nv = perNode[static_cast<std::size_t>(n)];
            const int base = static_cast<int>(cpus.size()) / nv;
            const int extra = static_cast<int>(cpus.size()) % nv;
            std::size_t at = 0;
            for (int v = 0; v < nv; ++v, ++vec) {
                const int take = base + (v < extra ? 1 : 0);
                for (int k = 0; k < take && at < cpus.size(); ++k)
                    masks[static_cast<std::size_t>(vec)].push_back(cpus[at++]);
            }
        }
    }
    std::vector<int> map(static_cast<std::size_t>(topo.nrCpus()), 0);
    vectorCpu.assign(static_cast<std::size_t>(nrQueues), 0);
    for (int q = 0; q < nrQueues; ++q) {
        auto& m = masks[static_cast<std::size_t>(q)];
        std::sort(m.begin(), m.end());
        for (int cpu : m)
            map[static_cast<std::size_t>(cpu)] = q;
        vectorCpu[static_cast<std::size_t>(q)] = m.empty() ? q % topo.nrCpus() : m.front();
    }
    return map;
}

} // namespace blkmq
