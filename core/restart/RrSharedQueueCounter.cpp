// 6d8c6c0f97ad's walk plus 8e8320c9315c (v4.12-v4.17): skip the walk when the
// completing queue's shared_hctx_restart is 0. A queue with no marked hctx of
// its own then never restarts another queue's hctx: the stall of the 2017 restart thread.
#include "restart/SchedRestart.h"

namespace blkmq {

namespace {

class RrSharedQueueCounter final : public WalkingVariant {
public:
    using WalkingVariant::WalkingVariant;

protected:
    bool walkSkipped(const SchedRestart& r, int hctx) const override
    {
        return r.queueCounter(r.shape().hctx(hctx).queue) == 0;
    }
};

} // namespace

const RestartVariant& rrSharedQueueCounterRestart()
{
    static const RrSharedQueueCounter v {
        "rr-shared-queue-counter",
        { "", "blk-mq: fix performance regression with shared tags", "Jens Axboe", "6d8c6c0f97ad + 8e8320c9315c",
            "v4.12 .. v4.17",
            "Skip the walk when the completing queue's shared_hctx_restart is 0. Stalls (the 2017 restart thread)." },
        RestartVariant::SixSteps::Stall
    }; // "thus request A is stuck forever" (step 6); Bart Van Assche reproduced it with ib_srp
    return v;
}

} // namespace blkmq
