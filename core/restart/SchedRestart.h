#pragma once

#include "cpu/Machine.h"
#include "metrics/FunctionProfile.h"
#include "restart/RestartVariant.h"
#include "topo/Cacheline.h"

#include <memory>
#include <string>
#include <vector>

namespace blkmq {

// What RESTART needs blk-mq to do for it.
class RestartHost {
public:
    virtual ~RestartHost() = default;
    // Whether the hctx has requests to dispatch (hctx->dispatch or the scheduler's).
    virtual bool hasPending(int hctx) const = 0;
    // blk_mq_run_hw_queue(hctx, async = true).
    virtual void runHwQueueAsync(int hctx) = 0;
    // Every hctx's line 0 (lock, dispatch, state) and the line of its tags pointer, indexed by hctx.
    virtual HctxLines& hctxLines() = 0;
};

// BLK_MQ_S_SCHED_RESTART (block/blk-mq-sched.c): an hctx whose dispatch failed
// is marked; each freed request calls blk_mq_sched_restart(), and the
// registered variant decides which marked hctx that run reaches. This class
// owns the marks, the shared_hctx_restart counters, the round-robin walk of
// 6d8c6c0f97ad (one Machine op per batch, so it is interruptible) and the
// record of each tag set's last decision, which the stall detector reads.
class SchedRestart final : public OpHandler {
public:
    SchedRestart(Sim& sim, Machine& machine, RestartShape shape, RestartHost& host);
    // A copy (Engine::clone) is wired by rebind() to its engine's Sim, Machine and host: it takes
    // `original`'s place among the machine's handlers, and its open calls' stacks are found again.
    std::unique_ptr<SchedRestart> clone() const { return std::make_unique<SchedRestart>(*this); }
    void rebind(const SchedRestart& original, Sim& sim, Machine& machine, RestartHost& host);

    void setVariant(const RestartVariant& v)
    {
        m_variant = &v;
        m_ownOnly = v.ownOnly();
    }
    const RestartVariant& variant() const { return *m_variant; }
    const RestartShape& shape() const { return m_shape; }

    // Why an hctx was marked: a run found hctx->dispatch non-empty, or (blk_mq_mark_tag_wait,
    // v4.16 on, unshared tags) its dispatch found no driver tag.
    enum class MarkReason : std::uint8_t { DispatchList, NoTag };
    // blk_mq_sched_mark_restart_hctx().
    void mark(int hctx, MarkReason why = MarkReason::DispatchList);
    bool marked(int hctx) const { return m_hctx[static_cast<std::size_t>(hctx)].marked; }
    SimTime markedSince(int hctx) const { return m_hctx[static_cast<std::size_t>(hctx)].since; }
    MarkReason markedFor(int hctx) const { return m_hctx[static_cast<std::size_t>(hctx)].why; }
    // blk_mq_sched_restart(), for a request of `hctx` just freed. Inline (the block layer frees
    // inside one flattened completion): in most presets every I/O comes here, to own-hctx's one look
    // at an unmarked hctx; a walk and a skipped call finish out of line.
    void onFree(int hctx, const RestartFreed& freed)
    {
        ++m_sim->counters.restart_calls;
        RestartNote& note = m_tagSet[static_cast<std::size_t>(m_shape.queueOf(hctx).tagSet)].last;
        note = RestartNote {};
        note.at = m_machine->opNow();
        note.freed = freed;
        note.hctx = hctx;
        if (m_ownOnly)
            visitOwn(hctx, note);
        else
            m_variant->restart(*this, hctx, note);
        if (note.outcome == RestartNote::Outcome::None) [[unlikely]] { // a walk: returns when it ends
            walkOpened(note);
            return;
        }
        if (note.outcome == RestartNote::Outcome::CounterZero) [[unlikely]]
            countSkip(note);
        m_profile.record(m_machine->executingCpu(), m_machine->opNow() - note.at);
    }
    const RestartNote& lastDecision(int tagSet) const { return m_tagSet[static_cast<std::size_t>(tagSet)].last; }
    // Why the last decision on hctx's tag set did not reach it (one sentence, or empty); a step
    // (of the stall banner) leaves out the time it is shown with.
    enum class Phrase : std::uint8_t { Sentence, Step };
    std::string explainLast(int hctx, const std::string& freedName, Phrase as = Phrase::Sentence) const;

    // --- for the variants ---
    // blk_mq_sched_restart_hctx(): clear the mark; run the hctx if it has work.
    bool restartHctx(int hctx) { return marked(hctx) && restartMarked(hctx); }
    // The completing hctx alone: one visit, no walk.
    void visitOwn(int hctx, RestartNote& note)
    {
        ++m_sim->counters.restart_hctx_visits;
        note.visits = 1;
        note.outcome = restartHctx(hctx) ? RestartNote::Outcome::Restarted : RestartNote::Outcome::NotMarked;
        note.restarted = note.outcome == RestartNote::Outcome::Restarted ? hctx : -1;
    }
    // Starts the round-robin walk over the tag set (6d8c6c0f97ad).
    void startWalk(int hctx);
    // The completing queue's hctxs, if its QUEUE_FLAG_RESTART is set (queue-flag, before 6d8c6c0f97ad).
    void restartQueue(int hctx, RestartNote& note);
    bool queueFlag(int queue) const { return m_queueFlag[static_cast<std::size_t>(queue)] != 0; }
    int queueCounter(int queue) const { return m_queueCounter[static_cast<std::size_t>(queue)]; }
    int tagSetCounter(int tagSet) const { return m_tagSet[static_cast<std::size_t>(tagSet)].counter; }

    void perform(int cpu, Op op, OpStack& stack) override;
    OpName opName(std::uint8_t code) const override;
    // A batch of the walk: blk_mq_sched_restart() walks the tag set's hctxs under rcu_read_lock()
    // only, so other CPUs dispatch, mark and free between any two of its looks.
    bool lockBoundary(const Op& op) const override { return OpSet<RestartOp>::code(op) == RestartOp::Walk; }

    // blk_mq_sched_restart() as ftrace's function profiler sees it: entry to return, per CPU.
    const FunctionProfile& profile() const { return m_profile; }
    // The marks, counters and flags (a walk in progress is an op on its CPU's stack). Out: the last
    // decision and the open calls, which only explain and profile.
    void hashState(StateHash& h) const { h(m_hctx, m_queueCounter, m_queueFlag, m_queueFlagLine, m_tagSet); }

private:
    enum class RestartOp : std::uint8_t { Walk }; // a = completing hctx, b = position
    void walk(int hctx, int pos);
    void walkReturned(); // the walk of the call open on this stack ends: profile it
    void walkOpened(const RestartNote& note); // onFree() started a walk: its call stays open until walkReturned()
    void countSkip(const RestartNote& note); // onFree() returned early on a zero counter
    bool restartMarked(int hctx); // restartHctx() of a marked hctx

    struct HctxMark {
        bool marked = false;
        MarkReason why = MarkReason::DispatchList;
        SimTime since;
        void hashState(StateHash& h) const { h(marked, why, since); }
    };
    struct TagSetState {
        int counter = 0; // shared_hctx_restart of the tag set (Roman Pen's RFC)
        RestartNote last;
        void hashState(StateHash& h) const { h(counter); }
    };
    Sim* m_sim;
    Machine* m_machine;
    RestartShape m_shape;
    RestartHost* m_host;
    OpSet<RestartOp> m_ops;
    const RestartVariant* m_variant;
    bool m_ownOnly = false; // m_variant's restart() is visitOwn(): onFree calls it itself
    std::vector<HctxMark> m_hctx;
    std::vector<int> m_queueCounter; // q->shared_hctx_restart (8e8320c9315c)
    std::vector<std::uint8_t> m_queueFlag; // QUEUE_FLAG_RESTART in q->queue_flags (before 6d8c6c0f97ad)
    std::vector<Cacheline> m_queueFlagLine; // the line of q->queue_flags
    std::vector<bool> m_walkEvicts; // per tag set: a full walk reads more lines than a private cache holds
    std::vector<TagSetState> m_tagSet;
    // Calls whose walk is still running: the stack it runs on, its CPU and its entry time.
    struct OpenCall {
        const void* stack;
        int cpu;
        SimTime entry;
    };
    std::vector<OpenCall> m_openCalls;
    FunctionProfile m_profile { "blk_mq_sched_restart" };
};

// The variants of 6d8c6c0f97ad's round-robin walk: with shared tags a freed
// request starts the walk unless walkSkipped() says the variant's counter is 0;
// without shared tags only the completing hctx is looked at.
class WalkingVariant : public RestartVariant {
public:
    using RestartVariant::RestartVariant;
    [[gnu::hot]] void restart(SchedRestart& r, int hctx, RestartNote& note) const final
    {
        if (!r.shape().hctx(hctx).tagShared)
            r.visitOwn(hctx, note);
        else if (walkSkipped(r, hctx))
            note.outcome = RestartNote::Outcome::CounterZero; // "no hardware queues have RESTART marked"
        else
            r.startWalk(hctx);
    }

protected:
    virtual bool walkSkipped(const SchedRestart& /*r*/, int /*hctx*/) const { return false; }
};

} // namespace blkmq
