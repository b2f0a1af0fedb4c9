#pragma once

#include "cpu/KernelPath.h"
#include "cpu/OpHandler.h"
#include "cpu/Task.h"
#include "sim/RingQueue.h"
#include "cpu/Sim.h"
#include "sim/ExecContext.h"

#include <array>
#include <vector>

namespace blkmq {

// The Machine's own ops: interrupt and softirq mechanics.
enum class MachineOp : std::uint8_t {
    IrqEntry,
    IrqExit,
    SoftirqStart,
    SoftirqLoop,
    SoftirqAfter,
    KsoftirqdStep,
    IrqThreadStep, // a = device vector
    BhDisable,
    BhEnable,
    WakeIrqThread, // a = device vector (threadirqs: the hardirq only wakes the thread)
};

// The op last performed on each level of a CPU (Task, Softirq, Hardirq), for KernelFrame.
struct LevelOp {
    Op op;
    Op caller; // the last op of another kind on this level: the one a nested op runs inside
    int task = -1; // Task level: whose op
    bool valid = false;
    void hashState(StateHash& h) const { h(op, caller, task, valid); }
};

struct PendingIrq {
    IrqKind kind;
    std::int32_t arg;
    void hashState(StateHash& h) const { h(kind, arg); }
};

// sched_rt_period_us: the period of RT bandwidth (kernel/sched/rt.c, def_rt_bandwidth).
inline constexpr std::int64_t kRtPeriodNs = 1'000'000'000;

// One CPU: its context stacks, pending interrupts and softirqs, its tasks,
// and its busy time by context. What every action reads or writes comes first, within one
// cacheline (with hundreds of CPUs, each event is at another CPU whose state has left the
// nearer caches: every line of it an action touches is a miss).
struct alignas(64) CpuState {
    // The stack pickStack() chose last, and whether anything since may change its choice (onBoundary).
    OpStack* picked = nullptr;
    int current = -1; // task at task level, -1 = idle
    bool currentIsJob = false; // `current` is a job thread (read on every action; set with `current`)
    bool repick = true;
    bool boundaryPending = false; // an action is in progress
    bool idle = true;
    ExecContext running = ExecContext::Task;
    KernelFrame::Level level = KernelFrame::Level::Task; // of the op in progress
    bool hardirqActive = false;
    bool softirqActive = false; // __do_softirq on the softirq level (from irq_exit)
    bool rtThrottled = false; // rt_rq->rt_throttled: its SCHED_FIFO tasks wait for the next period
    std::array<std::int64_t, kExecContexts> busy {};
    std::array<LevelOp, 3> doing {}; // by KernelFrame::Level
    OpStack hardirq;
    OpStack softirq;
    RingQueue<PendingIrq> irqs;
    std::vector<int> tasks;
    int wakesPending = 0; // tasks of this CPU woken by another CPU, not yet runnable (ttwu_pending)
    std::int64_t idleVruntime = 0; // min_vruntime while its CFS runqueue is empty: the largest vruntime it emptied at
    // The runqueue: runnable SCHED_FIFO tasks by id, runnable SCHED_OTHER
    // tasks by (vruntime, id). Picking a task and placing a woken one look at
    // the front instead of every task on the CPU; both keep capacity for all
    // of the CPU's tasks, so waking and sleeping never allocate.
    std::vector<int> runnableFifo;
    std::vector<int> runnableOther;
    std::uint32_t softirqPending = 0;
    SimTime softirqStart;
    int softirqRestarts = 0;
    int ksoftirqd = -1;
    int kworker = -1;
    std::int64_t rtTime = 0; // rt_rq->rt_time: SCHED_FIFO run time counted against the current period
    std::int64_t rtPeriodEnd = kRtPeriodNs; // when the current RT bandwidth period ends
    // Driver tag allocations made on this CPU and those of them served locally (Counters::tag_*).
    std::uint64_t tagAllocs = 0;
    std::uint64_t tagLocalHits = 0;

    bool irqQueued() const { return !irqs.empty(); }
    // All but the kept pick (Machine::setKeepPicks: a pick made afresh is the same) and what only
    // records: busy time and the tag allocation counts.
    void hashState(StateHash& h) const
    {
        h(current, currentIsJob, boundaryPending, idle, running, level, hardirqActive, softirqActive, doing, hardirq,
            softirq, irqs, tasks, wakesPending, idleVruntime, runnableFifo, runnableOther, softirqPending, softirqStart,
            softirqRestarts, ksoftirqd, kworker, rtThrottled, rtTime, rtPeriodEnd);
    }
};

// The CPUs of the virtual machine and the kernel mechanics that do not
// depend on the block layer: action boundaries, hardirq entry/exit, softirq
// raise/run/ksoftirqd, local_bh_disable/enable, threaded irq handlers and a
// CFS-like scheduler. Priority: hardirq > softirq > task; interrupts are
// taken at action boundaries. See docs/model.md for the timing rules.
class Machine {
public:
    explicit Machine(Sim& sim);
    // A copy of `o` on `sim` (Engine::clone). The components copied after it give it their handlers
    // (replaceHandler). CpuState::picked points into the machine, so the copy keeps no pick: each
    // CPU picks afresh before its next op, as with setKeepPicks(false), which runs the same events.
    Machine(const Machine& o, Sim& sim);
    Machine& operator=(const Machine&) = delete;
    // A copied component's handler in place of the original's.
    void replaceHandler(const OpHandler* from, OpHandler* to);
    // The stack of this machine that is `stack` of `from` (the machine this one is a copy of): a
    // CPU's hardirq or softirq stack or a task's; nullptr if it is none of them.
    const void* sameStack(const Machine& from, const void* stack) const;

    // The CPUs and tasks (docs/check.md); the handlers and vectors are the scenario's.
    void hashState(StateHash& h) const { h(m_cpus, m_tasks, m_vectorThread, m_threadirqs); }

    // Registers a component that performs ops of its own; the number is the `owner` of its ops.
    std::uint8_t addHandler(OpHandler* handler);
    // The op each kind of interrupt starts with (its a = the irq's argument), and each softirq's handler.
    void setIrqHandler(IrqKind kind, Op handler) { m_irqHandler[static_cast<std::size_t>(kind)] = handler; }
    void setSoftirqHandler(int nr, Op handler)
    {
        m_softirqHandler[static_cast<std::size_t>(nr)] = handler;
        m_hasSoftirqHandler[static_cast<std::size_t>(nr)] = true;
    }
    void setThreadirqs(bool on) { m_threadirqs = on; }
    // Off: pick afresh before every op, keeping nothing (tst_determinism checks that a kept pick
    // never changes an event).
    void setKeepPicks(bool on) { m_keepPicks = on; }
    bool threadirqs() const { return m_threadirqs; }
    // RT throttling (kernel/sched/rt.c at v6.1: sched_rt_runtime_exceeded(), do_sched_rt_period_timer()):
    // a CPU's SCHED_FIFO tasks may run `runtime` of each kRtPeriodNs; past it they are not picked
    // until the period ends. Per CPU, as since RT_RUNTIME_SHARE went off by default (2586af1ac187,
    // v5.10). A runtime of a whole period or more never throttles (sched_rt_runtime_us = -1).
    void setRtRuntime(SimTime runtime);

    // A task whose body is `loop`: pushed whenever it is made runnable with nothing to do.
    int createTask(TaskKind kind, int cpu, Op loop, bool fifo);
    // The threaded handler of a device vector (SCHED_FIFO, runs the vector's irq handler).
    int createIrqThread(int cpu, int vector);
    // Lets a SCHED_OTHER task move among `cpus` (its cpus_allowed, more than one): each wake-up places
    // it, within the last-level cache of the CPU it last ran on (selectTaskRq).
    void allowMigration(int id, std::vector<int> cpus);
    Task& task(int id) { return m_tasks[static_cast<std::size_t>(id)]; }
    const Task& task(int id) const { return m_tasks[static_cast<std::size_t>(id)]; }
    int nrTasks() const { return static_cast<int>(m_tasks.size()); }
    int vectorThread(int vector) const;

    const CpuState& cpu(int id) const { return m_cpus[static_cast<std::size_t>(id)]; }
    // What `cpu` executes now in the kernel's words, outermost level first; returns the number of levels.
    int kernelPath(int cpu, KernelPath& out) const;
    OpName opName(Op op) const;
    CpuState& cpu(int id) { return m_cpus[static_cast<std::size_t>(id)]; }
    int nrCpus() const { return static_cast<int>(m_cpus.size()); }

    // --- for the op being performed ---
    void charge(std::int64_t ns) { m_charge += ns; }
    // CPU time in user space (fio's own work): charged like any other, counted as the job's user time.
    void chargeUser(std::int64_t ns)
    {
        m_charge += ns;
        m_userCharge += ns;
    }
    // Time `cpu` spent in _raw_spin_lock for `who` (the lock profile; a job's share when it is current).
    void lockTime(int cpu, LockCaller who, std::int64_t ns)
    {
        m_sim->counters.lock_ns[static_cast<std::size_t>(who)] += static_cast<std::uint64_t>(ns);
        if (jobCurrent(cpu))
            m_sim->counters.job_lock_ns[static_cast<std::size_t>(who)] += static_cast<std::uint64_t>(ns);
    }
    // A job thread is the current task of `cpu` (the task any interrupt there is accounted to).
    bool jobCurrent(int cpu) const { return m_cpus[static_cast<std::size_t>(cpu)].currentIsJob; }
    SimTime opNow() const { return m_sim->now + SimTime(m_charge); }
    ExecContext context() const { return m_context; }
    int currentTask() const { return m_currentTask; }
    int executingCpu() const { return m_executingCpu; }
    // The stack (context) the op runs on: an interrupted context resumes on its own stack.
    const void* currentStack() const { return m_currentStack; }

    // Makes an interrupt pending on `cpu` at time `at` (an event).
    void raiseIrq(int cpu, IrqKind kind, int arg, SimTime at);
    // The three raise variants of kernel/softirq.c, on the executing CPU.
    void __raise_softirq_irqoff(int cpu, int nr);
    void raise_softirq_irqoff(int cpu, int nr);
    void raise_softirq(int cpu, int nr) { raise_softirq_irqoff(cpu, nr); } // irqsave is implicit: ops are atomic
    void wakeup_softirqd(int cpu);
    bool in_interrupt(int cpu) const;
    // local_bh_disable()/local_bh_enable() in the running task; at enable,
    // pending softirqs run in that task right after the current action.
    void localBhDisable(int cpu);
    // Queues an op to run on the current stack right after the current action.
    void pushOp(Op op) { m_currentStack->push_back(op); }
    void localBhEnable(int cpu);

    // Makes a sleeping task runnable: at once if it lives on `fromCpu` (or
    // fromCpu < 0), else after the remote wake-up latency.
    void wakeTask(int task, int fromCpu);
    void sleepTask(int task);
    void kick(int cpu);

    // --- events ---
    // [[gnu::hot]] here and on the other functions every I/O or event passes through: GCC puts them
    // together in .text.hot, so the hot path is one compact run of code. Scattered over the binary,
    // more of its lines fell into some sets of the 8-way L1 instruction cache than it holds
    // (docs/performance.md).
    [[gnu::hot]] void onBoundary(int cpu);
    void onIrqRaise(int cpu, IrqKind kind, int arg);
    void onTaskWake(int task);
    void onRtPeriod(int cpu); // the RT period timer, for a throttled CPU

private:
    Machine(const Machine&) = default; // the copy constructor above, before its fix-ups
    OpStack* pickStack(int cpu, ExecContext& ctx);
    int pickTask(int cpu) const;
    [[gnu::hot]] void perform(int cpu, Op op, OpStack& stack);
    void performMachineOp(int cpu, Op op, OpStack& stack);
    static OpName machineOpName(MachineOp op);
    void makeRunnable(int task);
    void enqueueTask(int task);
    void dequeueTask(int task);
    // CFS wake-up placement of tasks with cpus_allowed (Task::allowed).
    bool cpuIdle(int cpu) const;
    int selectTaskRq(const Task& t) const;
    void migrate(int id, int to);
    std::int64_t minVruntime(int cpu) const;
    // Runs on every charged op of a task: inline up to the rare case of overtaking another task.
    void addVruntime(int id, std::int64_t ns)
    {
        Task& t = task(id);
        if (ns == 0 || t.fifo)
            return;
        if (t.weight != Task::kNice0Weight)
            ns = ns * Task::kNice0Weight / t.weight; // calc_delta_fair()
        if (!t.runnable || m_cpus[static_cast<std::size_t>(t.cpu)].runnableOther.size() == 1) {
            t.vruntime += ns; // not queued, or alone: nothing to overtake
            return;
        }
        addVruntimeQueued(id, ns);
    }
    void addVruntimeQueued(int id, std::int64_t ns);
    void rtAccount(int cpu, std::int64_t ns); // update_curr_rt() of a SCHED_FIFO op's time
    void rtReplenish(CpuState& c); // do_sched_rt_period_timer() for the periods over by now
    void enterSoftirq(int cpu, OpStack& stack, bool on);
    bool held(int cpu); // a Hold choice at a lock boundary: true if the CPU waits
    Op irqHandler(IrqKind kind, int arg) const
    {
        Op op = m_irqHandler[static_cast<std::size_t>(kind)];
        op.a = arg;
        return op;
    }

    Sim* m_sim;
    OpSet<MachineOp> m_ops { 0 };
    std::vector<OpHandler*> m_handlers { nullptr }; // by owner; 0 = this
    std::array<Op, kIrqKinds> m_irqHandler {};
    std::array<Op, NR_SOFTIRQS_MODELLED> m_softirqHandler {};
    std::array<bool, NR_SOFTIRQS_MODELLED> m_hasSoftirqHandler {};
    bool m_threadirqs = false;
    std::int64_t m_rtRuntimeNs = 950'000'000; // sched_rt_runtime_us
    std::vector<CpuState> m_cpus;
    std::vector<Task> m_tasks;
    std::vector<int> m_vectorThread;
    // the op being performed
    std::int64_t m_charge = 0;
    std::int64_t m_userCharge = 0; // of m_charge, chargeUser()
    ExecContext m_context = ExecContext::Task;
    int m_currentTask = -1;
    int m_executingCpu = -1;
    OpStack* m_currentStack = nullptr;
    bool m_keepPicks = true;
};

} // namespace blkmq
