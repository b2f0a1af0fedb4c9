#pragma once

#include "topo/Topology.h"

namespace blkmq {

// The decisions of blk_mq_complete_request_remote() (block/blk-mq.c, v5.10):
// whether a completion taken on `cur` is sent to the submitting CPU by IPI.
// The patch variants of the 2020 series extend this class.
class CompletionPolicy {
public:
    // rq_affinity: 0 clears QUEUE_FLAG_SAME_COMP, 1 sets it (the default),
    // 2 also sets QUEUE_FLAG_SAME_FORCE.
    static bool needIpi(const Topology& topo, int cur, int submitCpu, int rqAffinity)
    {
        if (rqAffinity == 0)
            return false; // !SAME_COMP
        if (cur == submitCpu)
            return false;
        if (rqAffinity == 1 && topo.cpusShareCache(cur, submitCpu))
            return false; // !SAME_FORCE and the caches are shared
        return true; // the submitting CPU is always online here
    }
};

} // namespace blkmq
