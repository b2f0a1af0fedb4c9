// Roman Pen's RFC (the 2017 restart thread): the shared_hctx_restart counter moves from the
// queue to the tag set, so any marked hctx of the set keeps the walk going.
#include "restart/SchedRestart.h"

namespace blkmq {

namespace {

class RrSharedTagsCounter final : public WalkingVariant {
public:
    using WalkingVariant::WalkingVariant;
    std::string counterOwner(const RestartShape& shape, int hctx) const override
    {
        return "tag set '" + shape.tagSetOf(hctx).name + "'";
    }

protected:
    bool walkSkipped(const SchedRestart& r, int hctx) const override
    {
        return r.tagSetCounter(r.shape().queueOf(hctx).tagSet) == 0;
    }
};

} // namespace

const RestartVariant& rrSharedTagsCounterRestart()
{
    static const RrSharedTagsCounter v {
        "rr-shared-tags-counter",
        { "", "[RFC] blk-mq: fix queue stalling on shared hctx restart", "Roman Pen",
            "proposed (the 2017 restart thread)", "proposed for v4.14",
            "The counter lives in the tag set. Fixes the stall; the walk stays costly." },
        RestartVariant::SixSteps::Complete
    }; // "the patch below fixes queue stalling"; Bart Van Assche tested that it does
    return v;
}

} // namespace blkmq
