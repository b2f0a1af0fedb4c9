// blk_mq_sched_restart() of v4.11 (6d8c6c0f97ad, Bart Van Assche): with
// shared tags, walk every hctx of every queue on the tag set round robin,
// starting after the completing queue, until one restarts.
#include "restart/SchedRestart.h"

namespace blkmq {

namespace {

class RrShared final : public RestartVariant {
public:
    const char* name() const override { return "rr-shared"; }
    const char* subject() const override { return "blk-mq: Restart a single queue if tag sets are shared"; }
    const char* author() const override { return "Bart Van Assche"; }
    const char* commit() const override { return "6d8c6c0f97ad"; }
    const char* version() const override { return "v4.11"; }
    const char* effect() const override
    {
        return "With shared tags, walk every hctx of every queue round robin until one restarts.";
    }
    void restart(SchedRestart& r, int hctx, RestartNote& note) const override
    {
        if (!r.shape().hctx(hctx).tagShared)
            r.visitOwn(hctx, note);
        else
            r.startWalk(hctx);
    }
};

} // namespace

const RestartVariant& rrSharedRestart()
{
    static const RrShared v;
    return v;
}

} // namespace blkmq
