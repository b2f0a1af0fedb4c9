#pragma once

#include "cpu/Machine.h"
#include "sim/Cloned.h"
#include "tags/TagAllocator.h"

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace blkmq {

// An hctx's use of its driver tags (hctx->nr_active, BLK_MQ_S_TAG_ACTIVE,
// hctx->wait_index, and whether hctx->dispatch_wait is on a wait queue).
struct TagUser {
    int hctx = -1;
    bool shared = false; // BLK_MQ_F_TAG_SHARED: another queue uses the same tag set
    bool active = false; // counted in its tags' active queues (blk_mq_tag_busy)
    bool parked = false; // BLK_MQ_S_TAG_WAITING: dispatch_wait is on one of the tags' wait queues
    int held = 0; // driver tags its requests hold
    int waitIndex = 0; // hctx->wait_index: the wait queue bt_wait_ptr() hands out next
    SimTime lastActivity;
    void hashState(StateHash& h) const { h(hctx, shared, active, parked, held, waitIndex, lastActivity); }
};

// The first time an allocator's race struck (ida-lock-split): who, when, and on whom.
struct TagRace {
    SimTime at = SimTime(-1); // never
    int cpu = -1; // the allocating CPU
    int other = -1; // lost: the CPU it stole from; missed: the CPU whose cached tags were hidden
    int count = 0; // lost: tags destroyed
    bool seen() const { return at.ns() >= 0; }
};

// The function of a parked hctx's wait-queue entry: blk_mq_dispatch_wait_add() sets
// hctx->dispatch_wait.func to blk_mq_dispatch_wake(), which takes the entry off the wait queue,
// clears TAG_WAITING and runs the hctx. The tags call it for each parked hctx they wake, on the
// freeing CPU; `queue` is what it runs on (the block layer, a test's recorder).
struct DispatchWake {
    void* queue = nullptr;
    void (*func)(void* queue, int cpu, int hctx) = nullptr;
    // The entry for `q`, whose dispatchWake(cpu, hctx) does the work.
    template<class Queue>
    static DispatchWake of(Queue& q)
    {
        return { &q, [](void* p, int cpu, int hctx) { static_cast<Queue*>(p)->dispatchWake(cpu, hctx); } };
    }
};

// One hw queue's struct blk_mq_tags (block/blk-mq-tag.c, lib/sbitmap.c at
// v4.14): the allocator, fair sharing (hctx_may_queue, 0d2602ca30e4), and the
// SBQ_WAIT_QUEUES wait queues of its sbitmap_queue. Submitters sleeping in
// blk_mq_get_tag() wait exclusively; an hctx parked by
// blk_mq_dispatch_wait_add() waits non-exclusively. Each freed tag counts down
// the first wait queue that has waiters (sbq_wake_up); when wake_batch frees
// have counted down, that queue is woken: every parked hctx on it is rerun
// (blk_mq_dispatch_wake) and up to wake_batch submitters wake (wake_up_nr),
// and the wake index moves on.
class BlkMqTags {
public:
    static constexpr int kWaitQueues = 8; // SBQ_WAIT_QUEUES

    BlkMqTags(Sim& sim, Machine& machine, std::unique_ptr<TagAllocator> alloc, DispatchWake wake);
    // A copy (its allocator copied too) is wired by rebind() to its engine's Sim, Machine and block
    // layer (`wake`), and its active users to that engine's hctxs: `user(hctx)` is hctx's TagUser there.
    void rebind(Sim& sim, Machine& machine, DispatchWake wake, const std::function<TagUser&(int hctx)>& user);
    // kernel.tag_fair_share (kernel behaviour; off only to show what it prevents) and kernel.tag_idle.
    void setFairSharing(bool on, SimTime idleAfter)
    {
        m_fairShare = on;
        m_idleAfter = idleAfter;
    }

    static constexpr int kInProgress = -2;
    // blk_mq_get_driver_tag() without sleeping: hctx_may_queue(), then the allocator. -1: none now.
    // With `progress`, an allocation the allocator does in several steps (ida-lock-split) runs one
    // step per call and returns kInProgress until it is done; without, every step runs in this call.
    // The usual case, inline in the caller: an allocator whose lines are all this CPU's own takes
    // the tag in one step (TagAllocator::getOwn); anything else takes the general path.
    int get(int cpu, TagUser& user, TagAlloc* progress = nullptr)
    {
        if (m_ownPath && (!progress || progress->state == 0) && mayQueue(user)) {
            const int tag = m_alloc->getOwn(cpu);
            if (tag >= 0) {
                m_machine->charge(m_alloc->costs().tag_get_ns);
                if (progress)
                    *progress = TagAlloc {}; // as the general path leaves it
                return granted(cpu, user, tag, true);
            }
        }
        return getGeneral(cpu, user, progress);
    }
    // blk_mq_put_tag() of a tag allocated on allocCpu (the request's ctx), then sbq_wake_up().
    void put(int cpu, int tag, int allocCpu, TagUser& user)
    {
        if (m_ownPath && m_alloc->putOwn(cpu, tag, allocCpu)) { // the usual case: both lines this CPU's own
            m_machine->charge(m_alloc->costs().tag_put_ns);
            released(cpu, user, false);
            return;
        }
        putGeneral(cpu, tag, allocCpu, user);
    }
    // A submitter sleeps until its wait queue is woken (blk_mq_get_tag's io_schedule).
    void sleep(int task, TagUser& user);
    // What a submitter woken from sleep() does with the tag its retry got: under getThenPut
    // (v3.13-v3.15's blk_mq_wait_for_tags()) it puts that tag back and takes one anew, so the put's
    // wake-ups and locks happen in its context; otherwise the tag stands.
    int afterWait(int cpu, int tag, TagUser& user)
    {
        if (!m_rules.getThenPut)
            return tag;
        put(cpu, tag, cpu, user);
        // The request's allocation is the one that found `tag`: the get after the put does not count
        // again in the allocation and local-hit shares.
        Counters& total = m_sim->counters;
        CpuState& own = m_machine->cpu(cpu);
        const auto counts = std::tuple(total.tag_allocs, total.tag_local_hits, own.tagAllocs, own.tagLocalHits);
        const int again = get(cpu, user);
        std::tie(total.tag_allocs, total.tag_local_hits, own.tagAllocs, own.tagLocalHits) = counts;
        return again;
    }
    // blk_mq_dispatch_wait_add(): park the hctx on the wait queue bt_wait_ptr() gives it, unless it
    // is parked already (TAG_WAITING). True if this call parked it.
    bool park(TagUser& user);
    // list_del_init(&hctx->dispatch_wait): leave the wait queue again (blk_mq_mark_tag_wait got its tag).
    void unpark(TagUser& user);
    // blk_mq_tag_idle() from the timeout work: each active hctx with no tag for the idle time stops
    // counting as an active user.
    void idleUsers();

    // Tests: whether an access whose lines are all this CPU's own takes the allocator's own-line
    // path (TagAllocator::getOwn / putOwn, no TagAccess); on unless a test turns it off, to check
    // that either way runs the same events.
    void setOwnPath(bool on);
    bool ownPath() const { return m_ownPath; }

    const TagAllocator& alloc() const { return *m_alloc; }
    // The allocator, the active queues (by hctx) and the wait queues; the first races only record.
    void hashState(StateHash& h) const
    {
        m_alloc->hashState(h);
        h(m_ownPath, m_activeQueues, m_wakeIndex, m_waiting, m_ws, m_active.size());
        for (const TagUser* u : m_active)
            h(u->hctx);
    }
    const TagRace& firstLoss() const { return m_firstLoss; }
    const TagRace& firstMiss() const { return m_firstMiss; }
    int activeQueues() const { return m_activeQueues; }
    int wakeBatch() const { return m_rules.wakeBatch; }
    int wakeIndex() const { return m_wakeIndex; }
    int waiting() const { return m_waiting; } // sbq->ws_active: tasks and hctxs on the wait queues
    bool waitQueueActive(int i) const { return m_ws[static_cast<std::size_t>(i)].active(); }
    // Sleeping submitters and parked hctxs, wait queue by wait queue.
    std::vector<int> sleepers() const;
    std::vector<int> parked() const;

private:
    // struct sbq_wait_state
    struct WaitQueue {
        int waitCnt = 0;
        std::vector<int> tasks; // exclusive waiters, in order
        std::vector<int> hctxs; // hctx->dispatch_wait entries
        bool active() const { return !tasks.empty() || !hctxs.empty(); }
        void hashState(StateHash& h) const { h(waitCnt, tasks, hctxs); }
    };
    WaitQueue& waitPtr(TagUser& user); // bt_wait_ptr()
    // Charges an allocator step to the CPU and counts it; lock time goes to `caller` in the lock profile.
    void account(int cpu, const TagAccess& cost, LockCaller caller)
    {
        m_machine->charge(cost.ns);
        // The usual access, own cachelines and nothing else (a steal always names its victim): only time.
        if (!cost.local || cost.victim >= 0 || cost.lost != 0 || cost.globalMoves != 0 || cost.retries != 0
            || cost.lockNs != 0 || cost.lockWaitNs != 0)
            accountMore(cpu, cost, caller);
    }
    void accountMore(int cpu, const TagAccess& cost, LockCaller caller); // the counters, traces and lock profile
    [[gnu::hot]] int getGeneral(int cpu, TagUser& user, TagAlloc* progress);
    [[gnu::hot]] void putGeneral(int cpu, int tag, int allocCpu, TagUser& user);
    // hctx_may_queue(): only an active hctx of a shared set is limited, and a depth-1 set never
    // ("don't try dividing an ant").
    bool mayQueue(const TagUser& user) const
    {
        return !(m_fairShare && user.shared && user.active) || mayQueueShared(user);
    }
    bool mayQueueShared(const TagUser& user) const;
    // A tag got: the counters, blk_mq_tag_busy() after the first, the user's count.
    int granted(int cpu, TagUser& user, int tag, bool local)
    {
        ++m_sim->counters.tag_allocs;
        m_sim->counters.tag_local_hits += local;
        CpuState& c = m_machine->cpu(cpu);
        ++c.tagAllocs;
        c.tagLocalHits += local;
        if (user.shared && !user.active)
            busy(user);
        ++user.held;
        user.lastActivity = m_machine->opNow();
        return tag;
    }
    void busy(TagUser& user); // blk_mq_tag_busy()
    // A tag put: the user's count, then sbq_wake_up(), or the allocator's own wake_up() if it woke.
    void released(int cpu, TagUser& user, bool allocatorWoke)
    {
        --user.held;
        user.lastActivity = m_machine->opNow();
        if (!m_rules.ownQueue) {
            // No waiter anywhere (most frees): what sbq_wake_ptr() finds after looking at every queue.
            if (m_waiting != 0)
                wakeUp(cpu);
        } else if (allocatorWoke) {
            wakeAll(cpu);
        }
    }
    void wakeUp(int cpu); // sbq_wake_up(), with somebody waiting (released())
    void wakeAll(int cpu); // the allocator's own wake_up()
    void wake(WaitQueue& ws, int tasks, int cpu);

    Sim* m_sim;
    Machine* m_machine;
    Cloned<TagAllocator> m_alloc;
    DispatchWake m_dispatchWake;
    bool m_ownPath = false; // the allocator has an own-line path, and it is on
    bool m_fairShare = true;
    SimTime m_idleAfter;
    int m_activeQueues = 0;
    // The active users (m_activeQueues of them). They live in BlockLayer's hctxs, which do not move
    // once built, so a sample looks at these instead of every hctx on the tag set.
    std::vector<TagUser*> m_active;
    TagWaitRules m_rules;
    int m_wakeIndex = 0;
    int m_waiting = 0; // tasks and hctxs on all wait queues: a free with nobody waiting looks no further
    std::array<WaitQueue, kWaitQueues> m_ws;
    TagRace m_firstLoss;
    TagRace m_firstMiss;
};

// struct blk_mq_tag_set: the tags of each hw queue index, shared by the queues on `queues`.
struct TagSet {
    std::string name;
    int firstTags = 0; // global index of tags[0] (hctx->tags of queue_num i is firstTags + i)
    int nrHwQueues = 0;
    std::vector<int> queues; // devices using it (tag_list order)
    std::vector<BlkMqTags> tags; // per hw queue index
    void hashState(StateHash& h) const { h(tags); }
};

} // namespace blkmq
