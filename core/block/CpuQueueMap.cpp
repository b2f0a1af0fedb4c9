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
