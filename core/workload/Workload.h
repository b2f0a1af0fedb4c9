#pragma once

#include "block/BlockLayer.h"
#include "block/EndIoSink.h"
#include "metrics/LatencyHistogram.h"
#include "workload/Job.h"

#include <string>
#include <vector>

namespace blkmq {

// The workload's ops.
enum class WorkloadOp : std::uint8_t {
    JobStep, // a = job
    Submit, // a = job; b = Workload::kNextIo: queued by the last submission for fio's loop
    Reap, // a = job
    ScriptStep, // a = CPU
    Poll, // a = job: blk_poll() on the job's hctx (hipri)
};

// fio-like jobs, scripted steps, and competing network receive load. Each job is a task pinned to one CPU
// that submits until `iodepth` io_units are in flight, then reaps every
// completed one in one io_getevents call (sleeping until one completes).
// Latency is fio's `lat`: from the start of submission to the reap.
class Workload final : public OpHandler, public EndIoSink {
public:
    Workload(Sim& sim, Machine& machine, BlockLayer& block, const Scenario& scenario);
    // A copy of `o` on `sim`, `machine` and `block` (Engine::clone): block's end_io sink.
    Workload(const Workload& o, Sim& sim, Machine& machine, BlockLayer& block);
    Workload& operator=(const Workload&) = delete;

    // Wakes every job at t = 0 and schedules the script's steps.
    void start();
    // Schedules the first packet of every net_rx load on each of its CPUs.
    void startNetRx();
    void onScriptStep(int step);
    void onThinkDone(int job);
    // A packet of net_rx load `load` arrives at `cpu`; the next one is scheduled.
    void onNetPacket(int cpu, int load);

    [[gnu::hot]] void perform(int cpu, Op op, OpStack& stack) override;
    OpName opName(std::uint8_t code) const override;
    // The next step of a driver tag allocation in progress: ida-lock-split's steal_tags() runs in
    // steps with interrupts on and no lock held (PercpuIdaTags).
    bool lockBoundary(const Op& op) const override;
    [[gnu::hot]] void endIo(int cpu, const Request& rq) override;

    const std::vector<Job>& jobs() const { return m_jobs; }
    // The jobs and the script's progress (docs/check.md); the latency histograms only record.
    void hashState(StateHash& h) const { h(m_jobs, m_scriptRq, m_releaseEarly, m_scriptQueue, m_scriptTask); }
    // Each latency is recorded once, in the interval's histogram; the whole run's is the intervals
    // closed by resetInterval() plus the open one (the same buckets as recording both on every I/O).
    LatencyHistogram latency() const { return m_closedLat.merged(m_intervalLat); }
    // Latencies reaped since the last resetInterval() (time-series percentiles).
    const LatencyHistogram& intervalLatency() const { return m_intervalLat; }
    // Tag allocation latency: from a submission's first blk_mq_get_tag() to its tag, steps and sleeps
    // included; whole run and since the last resetInterval().
    LatencyHistogram tagAllocLatency() const { return m_closedAllocLat.merged(m_intervalAllocLat); }
    const LatencyHistogram& intervalTagAllocLatency() const { return m_intervalAllocLat; }
    void resetInterval()
    {
        m_closedLat.add(m_intervalLat);
        m_closedAllocLat.add(m_intervalAllocLat);
        m_intervalLat.reset();
        m_intervalAllocLat.reset();
    }
    // Whether anything may still submit to device `dev`: a job that is not
    // asleep waiting for its own requests, or a script step still to come.
    bool maySubmit(int dev) const;
    // A task asleep in blk_mq_get_tag(), named for the stall detector: "job 3 (randread on CPU 3)".
    Sleeper sleeper(int task) const;
    // Scripted request name → request index, -1 before its submission.
    int scriptRequest(const std::string& id) const;
    const std::vector<ScriptStep>& script() const { return m_script; }

private:
    Workload(const Workload&) = default; // the copy constructor above, before its fix-ups
    // Submit's b: the op was queued by the last submission for fio's loop (submit()).
    static constexpr std::int32_t kNextIo = 1;
    [[gnu::hot]] void jobStep(Job& job, OpStack& stack);
    [[gnu::hot]] void submit(int cpu, Job& job, OpStack& stack, bool nextIo);
    [[gnu::noinline]] void wakeReaper(int cpu, Job& job); // endIo(): the job sleeps in io_getevents()
    [[gnu::hot]] void reap(Job& job);
    void scriptStep(int cpu, OpStack& stack);
    void scheduleNetPacket(int cpu, int load);

    Sim* m_sim;
    Machine* m_machine;
    BlockLayer* m_block;
    OpSet<WorkloadOp> m_ops;
    std::vector<NetRxLoad> m_netRx;
    std::vector<Job> m_jobs;
    std::vector<JobSpec> m_specs;
    std::vector<ScriptStep> m_script;
    std::vector<int> m_scriptRq; // per step: the request a submit step made
    std::vector<bool> m_releaseEarly; // per submit step: completed before submitted
    std::vector<std::vector<int>> m_scriptQueue; // per CPU: submit steps waiting to run
    std::vector<int> m_scriptTask; // per CPU
    LatencyHistogram m_closedLat; // the intervals before the open one
    LatencyHistogram m_intervalLat;
    LatencyHistogram m_closedAllocLat;
    LatencyHistogram m_intervalAllocLat;
};

} // namespace blkmq
