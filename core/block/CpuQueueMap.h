#pragma once

#include "topo/Topology.h"

#include <vector>

namespace blkmq {

// blk_mq_map_queues() (block/blk-mq-cpumap.c, v5.10): CPU i < nr_queues
// gets queue i; further CPUs get the next queue round robin unless an SMT
// sibling with a lower number was mapped already, whose queue they share.
std::vector<int> blkMqMapQueues(const Topology& topo, int nrQueues);

} // namespace blkmq
