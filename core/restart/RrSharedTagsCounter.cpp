// Roman Pen's RFC (seed 002): the shared_hctx_restart counter moves from the
// queue to the tag set, so any marked hctx of the set keeps the walk going.
#include "restart/SchedRestart.h"

namespace blkmq {

namespace {

class RrSharedTagsCounter final : public RestartVariant {
public:
    const char* name() const override { return "rr-shared-tags-counter"; }
    const char* subject() const override { return "[RFC] blk-mq: fix queue stalling on shared hctx restart"; }
    const char* author() const override { return "Roman Pen"; }
    const char* commit() const override { return "proposed (seed 002)"; }
    const char* version() const override { return "proposed for v4.14"; }
    const char* effect() const override
    {
        return "The counter lives in the tag set. Fixes the stall; the walk stays costly.";
    }
    void restart(SchedRestart& r, int hctx, RestartNote& note) const override
    {
        if (!r.shape().hctx(hctx).tagShared)
            r.visitOwn(hctx, note);
        else if (r.tagSetCounter(r.shape().queueOf(hctx).tagSet) == 0)
            note.outcome = RestartNote::Outcome::CounterZero;
        else
            r.startWalk(hctx);
    }
    std::string counterOwner(const RestartShape& shape, int hctx) const override
    {
        return "tag set '" + shape.tagSetOf(hctx).name + "'";
    }
};

} // namespace

const RestartVariant& rrSharedTagsCounterRestart()
{
    static const RrSharedTagsCounter v;
    return v;
}

} // namespace blkmq
