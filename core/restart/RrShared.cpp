// blk_mq_sched_restart() of v4.11 (6d8c6c0f97ad, Bart Van Assche): with
// shared tags, walk every hctx of every queue on the tag set round robin,
// starting after the completing queue, until one restarts.
#include "restart/SchedRestart.h"

namespace blkmq {

const RestartVariant& rrSharedRestart()
{
    static const WalkingVariant v { "rr-shared",
        { "", "blk-mq: Restart a single queue if tag sets are shared", "Bart Van Assche", "6d8c6c0f97ad", "v4.11",
            "With shared tags, walk every hctx of every queue round robin until one restarts." },
        // The stall's root cause is the per-queue counter that 8e8320c9315c added ("shared_hctx_restart
        // belongs to the particular queue"); without it every free walks every queue.
        RestartVariant::SixSteps::Complete };
    return v;
}

} // namespace blkmq
