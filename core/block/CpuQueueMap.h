#pragma once

#include "topo/Topology.h"

#include <vector>

namespace blkmq {

// blk_mq_map_queues() (block/blk-mq-cpumap.c, v5.10): CPU i < nr_queues
// gets queue i; further CPUs get the next queue round robin unless an SMT
// sibling with a lower number was mapped already, whose queue they share.
std::vector<int> blkMqMapQueues(const Topology& topo, int nrQueues);

} // namespace blkmq

namespace blkmq {

// Managed interrupt spreading (irq_create_affinity_masks → group_cpus_evenly,
// simplified) and blk_mq_pci_map_queues(): vectors are shared out among the
// NUMA nodes in proportion to their CPUs (whole nodes per vector when there
// are fewer vectors than nodes), each node's cores go to its vectors with SMT
// siblings kept together, and every CPU maps to the queue whose vector mask
// holds it. `vectorCpu` gets each vector's effective CPU (the first of its mask).
std::vector<int> managedMapQueues(const Topology& topo, int nrQueues, std::vector<int>& vectorCpu);

} // namespace blkmq
