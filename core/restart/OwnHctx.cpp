// blk_mq_sched_restart() from 97889f9ac24f (v4.18): only the completing hctx.
// With shared tags an hctx that found no driver tag is not left to RESTART; it
// waits on its tags' dispatch_wait. (358a3a6bccb7 tried this in v4.15-rc1 and
// was reverted by 05b79413946d.)
#include "restart/SchedRestart.h"

namespace blkmq {

namespace {

class OwnHctx final : public RestartVariant {
public:
    using RestartVariant::RestartVariant;
    TagWait tagWait() const override { return TagWait::MarkTagWait; }
    bool ownOnly() const override { return true; }
    [[gnu::hot]] void restart(SchedRestart& r, int hctx, RestartNote& note) const override { r.visitOwn(hctx, note); }
};

} // namespace

const RestartVariant& ownHctxRestart()
{
    static const OwnHctx v { "own-hctx",
        { "", "blk-mq: remove synchronize_rcu() from blk_mq_del_queue_tag_set() (drops TAG_SHARED handling in restart)",
            "Ming Lei", "97889f9ac24f", "v4.18",
            "Restart only the completing hctx; an hctx without a driver tag waits on dispatch_wait." },
        // Ming Lei's patch in the thread; Roman Pen: "I can say without any testing: it fixes all the issues".
        RestartVariant::SixSteps::Complete };
    return v;
}

} // namespace blkmq
