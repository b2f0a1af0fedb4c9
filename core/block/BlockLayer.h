#pragma once

#include "block/DriverPermits.h"
#include "block/EndIoSink.h"
#include "block/Hctx.h"
#include "block/RequestQueue.h"
#include "block/StallStep.h"
#include "block/CompletionPolicy.h"
#include "restart/SchedRestart.h"
#include "sim/Cloned.h"
#include "cpu/Machine.h"
#include "metrics/LatencyHistogram.h"
#include "spec/Scenario.h"
#include "block/BlkMqTags.h"

#include <memory>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace blkmq {

// A request that nothing will ever move, and why: in prose, and as steps in time order.
struct StallReport {
    std::vector<int> stuck; // request indices
    std::vector<std::string> stuckSubmitters; // asleep in blk_mq_get_tag() longer than maxAge, by name
    std::string explanation;
    std::vector<StallStep> steps; // of the first stuck request (or sleeper) explained
};

// A task asleep in blk_mq_get_tag(), in the stall detector's words: who it is and since when it has
// wanted a tag (the workload knows; the block layer only sees task ids on wait queues).
struct Sleeper {
    std::string name;
    SimTime since;
};
using SleeperLookup = std::function<Sleeper(int task)>;

// A queue that a softirq polls with a budget, one entry per action: the NIC receive ring of napi
// mode (NET_RX) or the RDMA completion queue of rdma mode (IRQ_POLL). Its interrupt stays off while
// it is being polled, until it is drained.
struct PollQueue {
    RingQueue<int> entries; // request index, or -1 for a packet of the net_rx load
    bool polling = false;
    std::int64_t loadCost = 0; // CPU per -1 entry
    void hashState(StateHash& h) const { h(entries, polling, loadCost); }
};

// Per-CPU block-layer state (and the per-CPU poll queues of napi and rdma modes).
struct BlkCpu {
    RqList callSingleQueue; // smp_call_function_single_async queue (csd = rq->csd)
    bool blockCsdQueued = false; // complete-llist: this CPU's blk_cpu_csd is on its queue
    RqList csdBatch; // taken by the IPI handler
    bool blockCsdBatched = false;
    RqList done; // blk_cpu_done
    RqList doneBatch; // taken by the BLOCK softirq
    int callSingleOwner = -1; // last CPU to write each list head (cacheline owner)
    int doneOwner = -1;
    RingQueue<int> kblockd; // hctxs queued for an async run on this CPU's kworker
    PollQueue rx; // napi: the NIC receive ring (NAPI)
    PollQueue ibCq; // rdma: the completion queue of this CPU's connection (irq_poll)
    RingQueue<int> mtipWork; // mtip32xx: slot groups queued on this CPU's isr_workq (dev * 8 + group)
    int mtipKworker = -1; // the kworker that runs them
    void hashState(StateHash& h) const
    {
        h(callSingleQueue, blockCsdQueued, csdBatch, blockCsdBatched, done, doneBatch, callSingleOwner, doneOwner,
            kblockd, rx, ibCq, mtipWork);
    }
};

// The block layer's ops.
enum class BlockOp : std::uint8_t {
    HandleCq, // a = hctx (device vector)
    TimerComplete, // a = request
    CsdFlush,
    CsdRunOne,
    BlockSoftirq,
    CompleteFromBatch,
    KworkerStep,
    RunHctx, // a = hctx
    CsdRaiseBlock, // blk-mq's per-CPU csd (complete-llist): raise BLOCK_SOFTIRQ
    NapiSchedule, // NIC rx hardirq: napi_schedule()
    NetRxPoll, // NET_RX softirq: one packet of the NAPI poll
    UsbIrq, // a = device: the host controller's interrupt for the current command
    IbCqIrq, // rdma: the CQ's completion vector: irq_poll_sched()
    IrqPoll, // IRQ_POLL softirq: ib_poll_handler(), one CQE per action, a = budget left
    UsbStep, // a = device: the driver's kthread (usb-storage)
    MtipIrq, // a = device: mtip_irq_handler()
    MtipSdbfx, // a = device, b = slot group: mtip_workq_sdbfx(), one command per action
    MtipGroupDone, // a = device, b = slot group: the end of mtip_workq_sdbfx()
    MtipWorker, // a = CPU: the kworker of mtip32xx's isr_workq
};

// blk-mq: request allocation, the scheduler FIFO, dispatch, ->queue_rq, the
// device model, completion (blk_mq_complete_request and the remote IPI /
// softirq paths) and request freeing. RESTART is restart/SchedRestart's.
// Performs the block ops.
class BlockLayer final : public OpHandler, private RestartHost {
public:
    BlockLayer(Sim& sim, Machine& machine, const Scenario& scenario);
    // A copy of `o` on `sim` and `machine` (Engine::clone); the copied workload sets its end_io sink.
    BlockLayer(const BlockLayer& o, Sim& sim, Machine& machine);
    BlockLayer& operator=(const BlockLayer&) = delete;
    void setEndIoSink(EndIoSink* sink) { m_endIo = sink; }

    // --- live settings (engine commands) ---
    void setRqAffinity(int dev, int value) { m_queues[static_cast<std::size_t>(dev)].spec.rq_affinity = value; }
    void setKernel(const KernelSpec& k);
    const CompletionPatches& patches() const { return m_patches; }

    // --- submission, called from workload ops on `cpu` ---
    // A request with a tag (or scheduler slot), or -1 when the caller must
    // sleep: `task` is then woken when one is freed.
    // `progress`: where a driver-tag allocation that takes several actions (ida-lock-split) keeps its
    // state; then kTagInProgress means "call again in the next action". Without it all steps run now.
    // `woken`: the caller slept for a tag since its last request (BlkMqTags::afterWait).
    static constexpr int kTagInProgress = BlkMqTags::kInProgress;
    [[gnu::hot]] int getRequest(
        int cpu, int dev, int task, int bytes, TagAlloc* progress = nullptr, bool woken = false);
    // Inserts the request; runQueue = false leaves it for a later run (a script step).
    // gnu::flatten here, on startDevice() and on completeRq(): every call in them that the compiler
    // can see is inlined, so an I/O's dispatch, issue, completion and free run without the register
    // saves of five calls (blk_mq_free_request lives in BlockCompletion.cpp for that;
    // docs/performance.md).
    [[gnu::hot, gnu::flatten]] void submit(int cpu, int rq, bool bypassScheduler, bool runQueue = true);
    // A scripted "complete" step: the device finishes a held request now.
    void release(int rq);
    // blk_mq_run_hw_queue(hctx, async = false) of the hctx `cpu` maps to (a script step).
    void runQueue(int cpu, int dev);
    // Lazy idling of fair-share users (the timeout work's job).
    void idleTagUsers();
    void setTagOwnPath(bool on); // tests: BlkMqTags::setOwnPath on every hw queue's tags
    // Requests no scheduled event can move (or waiting longer than maxAge).
    // liveTagSets[i]: something may still submit to a device of tag set i.
    // Stuck requests (see BlockStall.cpp), then submitters asleep for a tag longer than maxAge.
    // Not const: it keeps the floor of the waits it saw, to skip the lists while none can be old.
    StallReport findStalls(SimTime maxAge, const std::vector<bool>& liveTagSets, const SleeperLookup& sleeper);
    std::string requestName(int rq) const;
    // workload.script ids by step (a request's `script` indexes them).
    const std::vector<std::string>& scriptIds() const { return m_scriptIds; }
    std::string requestName(int rq, int script, int job) const;
    // blk_poll() on the hctx `cpu` maps to for `dev`: completes what it finds.
    int poll(int cpu, int dev);
    // A packet of a net_rx load arrives at `cpu`'s NIC receive queue.
    void netPacket(int cpu, std::int64_t costNs);

    Request& request(int rq) { return m_pool[static_cast<std::size_t>(rq)]; }
    const Request& request(int rq) const { return m_pool[static_cast<std::size_t>(rq)]; }
    int findQueue(const std::string& name) const;
    const std::vector<RequestQueue>& queues() const { return m_queues; }
    const std::vector<Hctx>& hctxs() const { return m_hctxs; }
    const BlkMqTags& tags(int i) const { return *m_tags[static_cast<std::size_t>(i)]; }
    std::size_t tagsCount() const { return m_tags.size(); }
    // Driver tags `i` for people: "nullb0 hctx 0" (the first device of its tag set, its hw queue).
    std::string tagsName(int i) const;
    const std::vector<TagSet>& tagSets() const { return m_tagSets; }
    const BlkCpu& blkCpu(int cpu) const { return m_cpu[static_cast<std::size_t>(cpu)]; }
    int inFlight() const { return m_inFlight; }
    std::size_t poolSize() const { return m_pool.size(); }
    const LatencyHistogram& clat() const { return m_clat; }
    // From blk_mq_complete_request() to ->complete (the cost of the completion path).
    const LatencyHistogram& completionDelay() const { return m_completionDelay; }

    const SchedRestart& restart() const { return *m_restart; }
    // The queues, hctxs, tags, permits, per-CPU lists, requests and restart state (docs/check.md).
    // Out: the latency histograms (records), the stall walk's floor (it only saves a walk that
    // would find nothing), and what the scenario fixes.
    void hashState(StateHash& h) const
    {
        h(m_queues, m_hctxs, m_hctxLines, m_tagSets, m_permits, m_cpu, m_pool, m_freeRqs, m_inFlight, *m_restart);
    }

    [[gnu::hot]] void perform(int cpu, Op op, OpStack& stack) override;
    OpName opName(std::uint8_t code) const override;
    [[gnu::hot]] void onDeviceDone(int rq);

private:
    BlockLayer(const BlockLayer&) = default; // the copy constructor above, before its fix-ups
    // Why a submitter asleep on hw queue `index` of `set` longer than maxAge is stuck: what became of
    // the tags (findStalls).
    void explainSleeper(std::ostringstream& why, std::vector<StallStep>& steps, const TagSet& set, int index,
        const Sleeper& who, SimTime maxAge) const;
    [[gnu::hot]] void dispatch(int cpu, int hctx);
    enum class Issue { Ok, NoTag, Busy };
    // What blk_mq_dispatch_rq_list() did: requests issued, and how it stopped.
    struct Dispatched {
        int queued = 0;
        Issue last = Issue::Ok;
    };
    [[gnu::hot]] Dispatched dispatchList(int cpu, int hctx, RqList& list);
    // blk_mq_dispatch_rq_list()'s return value for a run that ended as `d` (the dispatch mode decides).
    bool madeProgress(const Dispatched& d) const;
    int schedOldest(const RequestQueue& q) const;
    // After a failed driver tag: blk_mq_dispatch_wait_add() / blk_mq_mark_tag_wait(). True: try the tag once more.
    bool tagWait(int hctx);
    [[gnu::hot]] Issue issue(int cpu, int rq);
    [[gnu::hot, gnu::flatten]] void startDevice(int cpu, int rq);
    [[gnu::hot]] void blkMqCompleteRequest(int cpu, int rq);
    bool completeRemote(int cpu, int rq);
    void sendCompletionIpi(int cpu, int target, int rq);
    bool pushDone(int cpu, int target, int rq);
    void completeLocalSoftirq(int cpu, int rq);
    void triggerSoftirq(int cpu, int rq);
    void touchListHead(int& owner, int cpu);
    std::int64_t serviceTime(int dev);
    // When the device finishes a request of `dev` given to it now: its service time, after the
    // commands ahead of it on its channel (DeviceSpec::channels).
    SimTime deviceFinish(int dev);
    std::int64_t choiceServiceTime(const CompletionDist& d);
    void raiseRx(int cpu);
    void pollEntry(int cpu, Op op, OpStack& stack, PollQueue& q, int budget, int softirq, std::int64_t entryNs);
    [[gnu::hot]] void performCompletionOp(int cpu, Op op, OpStack& stack);
    // irqmode mtip32xx's handlers (block/Mtip32xx.cpp)
    void performMtipOp(int cpu, Op op, OpStack& stack);
    [[gnu::hot, gnu::flatten]] void completeRq(int cpu, int rq); // ->complete, then blk_mq_end_request
    [[gnu::hot]] void freeRequest(int cpu, int rq);
    bool hasPending(int hctx) const override;
    friend struct DispatchWake; // the tags call dispatchWake()
    friend class DeviceModel; // what a driver may call (block/DeviceModel.h)
    // blk_mq_dispatch_wake(): a freed tag on `cpu` woke the parked hctx (DispatchWake).
    void dispatchWake(int cpu, int hctx);
    HctxLines& hctxLines() override { return m_hctxLines; }
    Cacheline& stateLine(const Hctx& h) { return m_hctxLines.state(static_cast<int>(&h - m_hctxs.data())); }
    void writeTagsLine(int hctx, int cpu) { m_hctxLines.writeTags(hctx, cpu); } // by index: no division
    void runHwQueueAsync(int hctx) override { runHwQueueAsync(-1, hctx); }
    void runHwQueueAsync(int fromCpu, int hctx);
    void queueRunWork(int fromCpu, int hctx); // kblockd_schedule_delayed_work_on(next_cpu, &hctx->run_work)
    void delayQueue(int fromCpu, int hctx); // blk_mq_delay_queue(hctx, 0)
    [[gnu::hot]] int getDriverTag(int cpu, int hctx, TagAlloc* progress = nullptr);
    [[gnu::hot]] void putDriverTag(int cpu, int rq);
    int allocRq() // on every I/O: inline up to growing the pool
    {
        if (m_freeRqs.empty())
            return growPool();
        const int rq = m_freeRqs.back();
        m_freeRqs.pop_back();
        m_pool[static_cast<std::size_t>(rq)] = Request {};
        return rq;
    }
    int growPool();

    Sim* m_sim;
    Machine* m_machine;
    OpSet<BlockOp> m_ops;
    EndIoSink* m_endIo = nullptr;
    std::vector<RequestQueue> m_queues;
    std::vector<Hctx> m_hctxs;
    HctxLines m_hctxLines; // per hctx, apart from it (what the restart walk reads)
    std::vector<BlkMqTags*> m_tags; // by global index (hctx->tags), into m_tagSets
    std::vector<TagSet> m_tagSets;
    std::vector<DriverPermits> m_permits; // per tag set
    std::vector<BlkCpu> m_cpu;
    std::vector<Request> m_pool;
    std::vector<int> m_freeRqs;
    int m_inFlight = 0;
    // No waiting request started its wait before this: the earliest waitSince the last walk of the
    // lists saw (or that walk's time). A wait only ever starts at opNow(), so it stays a floor.
    SimTime m_waitFloor;
    LatencyHistogram m_clat;
    LatencyHistogram m_completionDelay;
    CompletionPatches m_patches;
    Cloned<SchedRestart> m_restart;
    DispatchMode m_dispatchMode = DispatchMode::V4_11;
    std::vector<std::string> m_scriptIds;
};

} // namespace blkmq
