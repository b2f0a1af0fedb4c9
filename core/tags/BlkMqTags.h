#pragma once

#include "cpu/Machine.h"
#include "tags/TagAllocator.h"

#include <memory>
#include <string>
#include <vector>

namespace blkmq {

// An hctx's use of its driver tags (hctx->nr_active, BLK_MQ_S_TAG_ACTIVE).
struct TagUser {
    int hctx = -1;
    bool shared = false; // BLK_MQ_F_TAG_SHARED: another queue uses the same tag set
    bool active = false; // counted in its tags' active queues (fair sharing)
    int held = 0; // driver tags its requests hold
    SimTime lastActivity;
};

// What a freed tag wakes that blk-mq must run: an hctx parked on dispatch_wait.
class TagWakeHost {
public:
    virtual ~TagWakeHost() = default;
    virtual void runHwQueueAsync(int fromCpu, int hctx) = 0;
};

// One hw queue's struct blk_mq_tags (block/blk-mq-tag.c): the allocator,
// fair sharing (hctx_may_queue, 0d2602ca30e4), the submitters sleeping in
// blk_mq_get_tag(), the hctxs parked on dispatch_wait, and who a freed tag wakes.
class BlkMqTags {
public:
    BlkMqTags(Sim& sim, Machine& machine, std::unique_ptr<TagAllocator> alloc)
        : m_sim(sim)
        , m_machine(machine)
        , m_alloc(std::move(alloc))
    {
    }
    // kernel.tag_fair_share and kernel.tag_idle.
    void setFairSharing(bool on, SimTime idleAfter)
    {
        m_fairShare = on;
        m_idleAfter = idleAfter;
    }

    // blk_mq_get_driver_tag() without sleeping: hctx_may_queue(), then the allocator. -1: none now.
    int get(int cpu, TagUser& user);
    // blk_mq_put_tag(), then the wake-ups: the first sleeping submitter, every parked hctx.
    void put(int cpu, int tag, TagUser& user, TagWakeHost& host);
    // A submitter sleeps until a tag is freed (blk_mq_get_tag's io_schedule).
    void sleep(int task) { m_taskWaiters.push_back(task); }
    // An hctx that found no driver tag waits on dispatch_wait (blk_mq_dispatch_wait_add / blk_mq_mark_tag_wait).
    void park(int hctx);
    // blk_mq_tag_idle(): an hctx with no tag for the idle time stops counting as an active user.
    void idle(TagUser& user);

    const TagAllocator& alloc() const { return *m_alloc; }
    int activeQueues() const { return m_activeQueues; }
    const std::vector<int>& sleepers() const { return m_taskWaiters; }
    const std::vector<int>& parked() const { return m_hctxWaiters; }

private:
    Sim& m_sim;
    Machine& m_machine;
    std::unique_ptr<TagAllocator> m_alloc;
    bool m_fairShare = false;
    SimTime m_idleAfter;
    int m_activeQueues = 0;
    std::vector<int> m_taskWaiters;
    std::vector<int> m_hctxWaiters;
};

// struct blk_mq_tag_set: the tags of each hw queue index, shared by the queues on `queues`.
struct TagSet {
    std::string name;
    int firstTags = 0; // global index of tags[0] (hctx->tags of queue_num i is firstTags + i)
    int nrHwQueues = 0;
    std::vector<int> queues; // devices using it (tag_list order)
    std::vector<BlkMqTags> tags; // per hw queue index
};

} // namespace blkmq
