#pragma once

#include "spec/CompletionPatches.h"
#include "topo/Topology.h"

namespace blkmq {

// blk_mq_complete_need_ipi() (block/blk-mq.c, v5.10 and the series).
class CompletionPolicy {
public:
    // rq_affinity: 0 clears QUEUE_FLAG_SAME_COMP, 1 sets it (the default),
    // 2 also sets QUEUE_FLAG_SAME_FORCE.
    static bool needIpi(
        const Topology& topo, const CompletionPatches& p, bool threadirqs, int cur, int submitCpu, int rqAffinity)
    {
        if (rqAffinity == 0)
            return false; // !SAME_COMP
        if (p.noRemoteThreaded && threadirqs)
            return false; // force_irqthreads: never complete on a remote CPU
        if (cur == submitCpu)
            return false;
        if (rqAffinity == 1 && topo.cpusShareCache(cur, submitCpu))
            return false; // !SAME_FORCE and the caches are shared
        return true; // the submitting CPU is always online here
    }
};

} // namespace blkmq
