// 6d8c6c0f97ad's walk plus 8e8320c9315c (v4.12-v4.17): skip the walk when the
// completing queue's shared_hctx_restart is 0. A queue with no marked hctx of
// its own then never restarts another queue's hctx: the stall of seed 002.
#include "restart/SchedRestart.h"

namespace blkmq {

namespace {

class RrSharedQueueCounter final : public RestartVariant {
public:
    const char* name() const override { return "rr-shared-queue-counter"; }
    const char* subject() const override { return "blk-mq: fix performance regression with shared tags"; }
    const char* author() const override { return "Jens Axboe"; }
    const char* commit() const override { return "6d8c6c0f97ad + 8e8320c9315c"; }
    const char* version() const override { return "v4.12 .. v4.17"; }
    const char* effect() const override
    {
        return "Skip the walk when the completing queue's shared_hctx_restart is 0. Stalls (seed 002).";
    }
    void restart(SchedRestart& r, int hctx, RestartNote& note) const override
    {
        if (!r.shape().hctx(hctx).tagShared)
            r.visitOwn(hctx, note);
        else if (r.queueCounter(r.shape().hctx(hctx).queue) == 0)
            note.outcome = RestartNote::Outcome::CounterZero; // "no hardware queues have RESTART marked"
        else
            r.startWalk(hctx);
    }
};

} // namespace

const RestartVariant& rrSharedQueueCounterRestart()
{
    static const RrSharedQueueCounter v;
    return v;
}

} // namespace blkmq
