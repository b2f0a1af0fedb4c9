#pragma once

#include "io/Limits.h"
#include "sim/StateHash.h"
#include "topo/Cacheline.h"

#include <array>
#include <cstdint>
#include <memory>
#include <span>

namespace blkmq {

class Topology;
struct Costs;

// What one step of a tag operation cost the CPU that did it. Two are zeroed on every I/O (a get and
// a put): at 80 bytes or less GCC 12 clears one with five vector stores, above with a `rep stos`
// loop; so the fields are ordered without padding, and a step's steals (one victim per step, at
// most limits::kCpus) fit 16 bits (docs/performance.md).
struct TagAccess {
    std::int64_t start = 0; // simulated time (ns) the operation starts: locks are timelines
    std::int64_t ns = 0;
    std::int64_t lockWaitNs = 0; // spinning for a lock (part of ns)
    std::int64_t lockNs = 0; // in spin_lock: spinning, then taking the lock's line (part of ns)
    std::array<std::uint32_t, kDistanceClasses> transfers {}; // cachelines moved to this CPU, by distance
    std::uint32_t globalMoves = 0; // batches moved between a CPU's cache and the global pool
    std::uint32_t retries = 0; // failed compare-and-swaps
    std::uint32_t lost = 0; // free tags the operation destroyed (ida-lock-split's steal over a refilled cache)
    std::array<std::uint16_t, kDistanceClasses> steals {}; // other CPUs' caches taken, by their distance
    std::int16_t hiddenOn = -1; // failed while this CPU's cache held free tags cpus_have_tags did not show
    std::int16_t victim = -1; // the CPU whose cache it took last (percpu_ida's steal)
    bool local = true; // served without touching another CPU's state (own cache, own cachelines)
    bool wake = false; // put(): the allocator woke its own wait queue (TagWaitRules::ownQueue)

    // `lines` lines touched as `m` was; they count as transfers if they came from another CPU.
    void move(const LineMove& m, int lines = 1)
    {
        if (lines <= 0)
            return;
        ns += m.ns * lines;
        if (m.from == Distance::Self)
            return;
        transfers[static_cast<std::size_t>(m.from)] += static_cast<std::uint32_t>(lines);
        local = false;
    }
    bool hidden() const { return hiddenOn >= 0; }
    std::uint32_t cachelineTransfers() const
    {
        std::uint32_t n = 0;
        for (auto t : transfers)
            n += t;
        return n;
    }
};
static_assert(sizeof(TagAccess) <= 80 && limits::kCpus <= UINT16_MAX);

// One allocation in progress on one CPU. An allocator whose get() takes
// locks or steals from other CPUs may need several steps; the caller runs
// each step as its own action, so two CPUs can interleave inside the
// allocator at lock granularity. `state` and `scratch` belong to the
// allocator; the caller only starts with a fresh TagAlloc and reads `tag`.
struct TagAlloc {
    int cpu = 0;
    int state = 0;
    int tag = -1; // the result once get() returned Done (-1 = none free)
    std::int32_t scratch[2] {};
    void hashState(StateHash& h) const { h(cpu, state, tag, scratch[0], scratch[1]); }
};

// How sleeping submitters are woken. Bitmap allocators leave it to the wait
// queues beside them (BlkMqTags): after every wakeBatch frees the next wait
// queue with waiters is woken, wakeBatch of its submitters if they wait
// exclusively, all of them otherwise. An allocator with its own wait queue
// (percpu_ida's pool->wait) says in put() when it wakes every waiter on it.
struct TagWaitRules {
    bool ownQueue = false;
    int wakeBatch = 1;
    bool exclusive = true;
    // blk-mq of v3.13 to v3.15, the only blk-mq percpu_ida served (blk_mq_alloc_request_pinned() and
    // blk_mq_wait_for_tags()): a submitter that found no tag sleeps in a blocking get, puts the tag it
    // got straight back ("blk_mq_put_tag(tags, tag)"), and only then takes one for its request.
    bool getThenPut = false;
};

// One hw queue's driver tags (struct blk_mq_tags): the allocator only.
// Fair sharing, sleeping and waking are BlkMqTags's (blk-mq-tag.c keeps them
// beside the allocator too). Allocation never sleeps: get() ends with
// tag = -1 when every tag is in use and the caller decides to wait.
class TagAllocator {
public:
    enum class Step : std::uint8_t { Done, More };
    virtual ~TagAllocator() = default;
    // A copy with the same state (Engine::clone); rebind() then gives it its engine's topology and costs.
    virtual std::unique_ptr<TagAllocator> clone() const = 0;
    void rebind(const Topology& topo, const Costs& costs)
    {
        m_topo = &topo;
        m_costs = &costs;
    }
    // One step of an allocation; More: call again (in a later action) with the same TagAlloc.
    virtual Step get(TagAlloc& a, TagAccess& cost) = 0;
    // `cpu` frees `tag`, which a request allocated on `allocCpu` (rq->mq_ctx->cpu) holds.
    virtual void put(int cpu, int tag, int allocCpu, TagAccess& cost) = 0;
    virtual std::size_t bytes() const = 0; // on the heap: what a copy costs (Engine::stateBytes)
    // Everything that decides what a later get() or put() does (docs/check.md).
    virtual void hashState(StateHash& h) const = 0;
    virtual int depth() const = 0;
    virtual int inUse() const = 0;
    virtual bool isSet(int tag) const = 0;
    virtual TagWaitRules waitRules() const = 0;
    // Tags neither free nor in use: lost by a race the allocator lets happen (ida-lock-split).
    virtual int lost() const { return 0; }
    // Distinct free tags some allocation can still find, counted from the structures that hold them
    // (blkmqlab-cli check's "no-tag-lost": inUse() + this == depth()). Without per-CPU caches, every
    // tag not in use.
    virtual int findableFree() const { return depth() - inUse(); }
    // Free tags cached on `cpu` that no other CPU's allocation can find: cpus_have_tags does not
    // show them (ida-lock-split's second stealer cleared the bit after a free had set it).
    virtual int hiddenOn(int cpu) const
    {
        (void)cpu;
        return 0;
    }
    // The own-line path: get() and put() when every line they touch is already this CPU's own
    // (nobody else wrote it since) and nothing else can happen, the usual access of a CPU that keeps
    // to its own hw queue. They change what get() / put() would and cost what they would,
    // costs().tag_get_ns / tag_put_ns, without a TagAccess for moves that cannot happen, on every I/O
    // of single-core-null. -1 / false: not that case; nothing was touched, and get() / put() do the
    // work. An allocator that offers it says so in hasOwnPath(); tst_blkmq_tags compares it with get() /
    // put(), and tst_determinism runs every preset with and without it.
    virtual bool hasOwnPath() const { return false; }
    virtual int getOwn(int cpu)
    {
        (void)cpu;
        return -1;
    }
    virtual bool putOwn(int cpu, int tag, int allocCpu)
    {
        (void)cpu, (void)tag, (void)allocCpu;
        return false;
    }
    const Costs& costs() const { return *m_costs; }
    // For pictures: sets map[tag] to the CPU whose cache holds the free tag, or to `lostMark` for a lost
    // one, and leaves every other entry. An allocator without per-CPU caches leaves them all.
    virtual void mapCaches(std::span<std::int16_t> map, std::int16_t lostMark) const
    {
        (void)map;
        (void)lostMark;
    }

protected:
    TagAllocator(const Topology& topo, const Costs& costs)
        : m_topo(&topo)
        , m_costs(&costs)
    {
    }
    TagAllocator(const TagAllocator&) = default;
    TagAllocator& operator=(const TagAllocator&) = delete;

    const Topology* m_topo; // the engine's (Sim::topo, Sim::costs)
    const Costs* m_costs;
};

} // namespace blkmq
