// blk_mq_sched_restart_queues() as it was before 6d8c6c0f97ad (block/blk-mq-sched.c, v4.11-rc):
// without shared tags, the completing hctx; with them, nothing unless the completing queue's
// QUEUE_FLAG_RESTART is set, which any mark of a hctx of that queue sets; then clear it and restart
// every marked hctx of the queue. Another queue's hctx is never reached. This is the kernel Roman
// Pen compared the walk with in the 2017 restart thread: v4.14-rc4 with 8e8320c9315c and
// 6d8c6c0f97ad reverted.
#include "restart/SchedRestart.h"

namespace blkmq {

namespace {

class QueueFlag final : public RestartVariant {
public:
    using RestartVariant::RestartVariant;
    [[gnu::hot]] void restart(SchedRestart& r, int hctx, RestartNote& note) const override
    {
        if (!r.shape().hctx(hctx).tagShared)
            r.visitOwn(hctx, note);
        else
            r.restartQueue(hctx, note);
    }
};

} // namespace

const RestartVariant& queueFlagRestart()
{
    static const QueueFlag v { "queue-flag",
        { "", "blk-mq: Restart a single queue if tag sets are shared (the code it replaced)", "Jens Axboe",
            "6d8c6c0f97ad^", "v4.11-rc; v4.14-rc4 with 8e8320c9315c and 6d8c6c0f97ad reverted",
            "With shared tags, restart every marked hctx of the completing queue once its QUEUE_FLAG_RESTART is "
            "set; never another queue's." },
        // Roman Pen's runs "with two patches reverted" (1280 MB/s); the stall's cause is the counter.
        RestartVariant::SixSteps::Complete };
    return v;
}

} // namespace blkmq
