#pragma once

#include "sim/Provenance.h"
#include "sim/SimTime.h"

#include <string>
#include <vector>

namespace blkmq {

class SchedRestart;

// The hctxs, queues and tag sets as RESTART sees them (fixed for a run).
struct RestartShape {
    struct HctxPlace {
        int queue = 0;
        int index = 0; // queue_num
        int tags = 0; // global index of its driver tags
        bool tagShared = false; // BLK_MQ_F_TAG_SHARED
    };
    struct QueuePlace {
        std::string name;
        int firstHctx = 0;
        int nrHwQueues = 0;
        int tagSet = 0;
        int inTagSet = 0; // its position in the tag set's tag_list (filled by SchedRestart)
    };
    struct TagSetPlace {
        std::string name;
        std::vector<int> queues; // set->tag_list order
    };
    std::vector<HctxPlace> hctxs;
    std::vector<QueuePlace> queues;
    std::vector<TagSetPlace> tagSets;

    const HctxPlace& hctx(int h) const { return hctxs[static_cast<std::size_t>(h)]; }
    const QueuePlace& queueOf(int h) const { return queues[static_cast<std::size_t>(hctx(h).queue)]; }
    const TagSetPlace& tagSetOf(int h) const { return tagSets[static_cast<std::size_t>(queueOf(h).tagSet)]; }
};

// The request whose freeing called blk_mq_sched_restart() (its pool index may be reused later,
// so its script step or job is kept to name it).
struct RestartFreed {
    int rq = -1;
    int script = -1;
    int job = -1;
};

// What one blk_mq_sched_restart() call decided, for the stall detector's explanation.
struct RestartNote {
    enum class Outcome : std::uint8_t {
        None,
        NotMarked,
        Restarted,
        CounterZero,
        WalkFoundNone,
        QueueFlagClear, // queue-flag: the completing queue's QUEUE_FLAG_RESTART was not set
        QueueNoneRestarted, // queue-flag: the queue's hctxs were looked at, none restarted
    } outcome = Outcome::None;
    SimTime at;
    RestartFreed freed;
    int hctx = -1; // the completing hctx
    int restarted = -1; // the hctx restarted
    int visits = 0;
};

// One variant of blk_mq_sched_restart(): which marked hctx a freed request's
// run may reach. One class per variant (restart/*.cpp), registered in
// RestartRegistry.cpp; the variant holds no state (SchedRestart does).
class RestartVariant {
public:
    // What the 2017 restart thread says the variant does in Roman Pen's six steps ("Seeming
    // possible sequence of events": two queues on one tag set, one hctx each): request A is stuck
    // forever, or every request completes. `validate restart` asks it of every registered variant,
    // in the thread's order (shared-hctx-stall) and in every order (check-shared-hctx).
    enum class SixSteps : std::uint8_t { Stall, Complete };
    RestartVariant(std::string name, Provenance from, SixSteps sixSteps)
        : m_name(std::move(name))
        , m_from(std::move(from))
        , m_sixSteps(sixSteps)
    {
    }
    virtual ~RestartVariant() = default;
    const std::string& name() const { return m_name; }
    const Provenance& from() const { return m_from; } // the commit(s) and the kernels that ran it
    SixSteps sixSteps() const { return m_sixSteps; }
    // blk_mq_sched_restart() for a request of `hctx` just freed; `note` is the tag set's record.
    virtual void restart(SchedRestart& r, int hctx, RestartNote& note) const = 0;
    // How a dispatch that found no driver tag waits for one, in the kernel this variant belongs to.
    enum class TagWait : std::uint8_t {
        // blk_mq_dispatch_wait_add() (v4.11 to v4.15): any hctx parks on a wait queue of its tags
        // (guarded by TAG_WAITING) and is rerun when that queue is woken.
        DispatchWaitAdd,
        // blk_mq_mark_tag_wait() (v4.16 on): without shared tags RESTART is enough; with them the
        // hctx parks on a wait queue, and leaves it if the retried tag is got.
        MarkTagWait,
    };
    virtual TagWait tagWait() const { return TagWait::DispatchWaitAdd; }
    // Whether restart() is SchedRestart::visitOwn() and nothing else (own-hctx): SchedRestart::onFree
    // then calls visitOwn() itself, inline, without the virtual call.
    virtual bool ownOnly() const { return false; }
    // The owner of the counter a CounterZero decision read ("tag set 'x'", or the queue's name).
    virtual std::string counterOwner(const RestartShape& shape, int hctx) const;

private:
    std::string m_name;
    Provenance m_from;
    SixSteps m_sixSteps;
};

} // namespace blkmq
