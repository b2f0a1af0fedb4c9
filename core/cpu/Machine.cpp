#include "cpu/Machine.h"

#include <algorithm>
#include <cassert>

namespace blkmq {

Machine::Machine(Sim& sim)
    : m_sim(&sim)
    , m_cpus(static_cast<std::size_t>(sim.topo.nrCpus()))
{
    for (int c = 0; c < nrCpus(); ++c) {
        auto& cpu = m_cpus[static_cast<std::size_t>(c)];
        cpu.hardirq.reserve(64);
        cpu.softirq.reserve(64);
        cpu.irqs.reserve(64);
        cpu.ksoftirqd = createTask(TaskKind::Ksoftirqd, c, m_ops(MachineOp::KsoftirqdStep, c), false);
    }
}

Machine::Machine(const Machine& o, Sim& sim)
    : Machine(o)
{
    m_sim = &sim;
    for (CpuState& c : m_cpus) {
        c.picked = nullptr;
        c.repick = true;
    }
    m_currentStack = nullptr;
}

void Machine::replaceHandler(const OpHandler* from, OpHandler* to)
{
    std::replace(m_handlers.begin(), m_handlers.end(), const_cast<OpHandler*>(from), to);
}

const void* Machine::sameStack(const Machine& from, const void* stack) const
{
    for (std::size_t i = 0; i < m_cpus.size(); ++i) {
        if (stack == &from.m_cpus[i].hardirq)
            return &m_cpus[i].hardirq;
        if (stack == &from.m_cpus[i].softirq)
            return &m_cpus[i].softirq;
    }
    for (std::size_t i = 0; i < m_tasks.size(); ++i)
        if (stack == &from.m_tasks[i].stack)
            return &m_tasks[i].stack;
    return nullptr;
}

std::uint8_t Machine::addHandler(OpHandler* handler)
{
    m_handlers.push_back(handler);
    return static_cast<std::uint8_t>(m_handlers.size() - 1);
}

int Machine::createTask(TaskKind kind, int cpu, Op loop, bool fifo)
{
    Task t;
    t.kind = kind;
    t.cpu = cpu;
    t.loop = loop;
    t.fifo = fifo;
    t.stack.reserve(32);
    m_tasks.push_back(std::move(t));
    const int id = static_cast<int>(m_tasks.size()) - 1;
    auto& c = m_cpus[static_cast<std::size_t>(cpu)];
    c.tasks.push_back(id);
    (fifo ? c.runnableFifo : c.runnableOther).reserve(c.tasks.size());
    if (kind == TaskKind::Kworker)
        c.kworker = id;
    return id;
}

int Machine::createIrqThread(int cpu, int vector)
{
    const int task = createTask(TaskKind::IrqThread, cpu, m_ops(MachineOp::IrqThreadStep, vector), true);
    if (vector >= static_cast<int>(m_vectorThread.size()))
        m_vectorThread.resize(static_cast<std::size_t>(vector) + 1, -1);
    m_vectorThread[static_cast<std::size_t>(vector)] = task;
    return task;
}

void Machine::allowMigration(int id, std::vector<int> cpus)
{
    Task& t = task(id);
    assert(!t.fifo && cpus.size() > 1);
    // Every CPU it may land on keeps room for it, so that moving never allocates.
    for (int c : cpus) {
        auto& s = m_cpus[static_cast<std::size_t>(c)];
        if (c != t.cpu) {
            s.tasks.reserve(s.tasks.capacity() + 1);
            s.runnableOther.reserve(s.runnableOther.capacity() + 1);
        }
    }
    t.allowed = std::move(cpus);
}

int Machine::vectorThread(int vector) const
{
    return vector < static_cast<int>(m_vectorThread.size()) ? m_vectorThread[static_cast<std::size_t>(vector)] : -1;
}

void Machine::raiseIrq(int cpu, IrqKind kind, int arg, SimTime at)
{
    m_sim->schedule(at, EventKind::IrqRaise, EventPriority::Hardware, cpu, static_cast<int>(kind), arg);
}

bool Machine::in_interrupt(int cpu) const
{
    const auto& c = m_cpus[static_cast<std::size_t>(cpu)];
    if (c.hardirqActive || c.softirqActive)
        return true;
    if (c.current < 0)
        return false;
    const Task& t = task(c.current);
    return t.inSoftirq || t.bhDisabled;
}

void Machine::__raise_softirq_irqoff(int cpu, int nr)
{
    m_cpus[static_cast<std::size_t>(cpu)].softirqPending |= 1u << nr;
    ++m_sim->counters.softirq_raises;
    charge(m_sim->costs.softirq_raise_ns);
    m_sim->trace(TraceKind::SoftirqRaise, cpu, -1, nr);
}

void Machine::raise_softirq_irqoff(int cpu, int nr)
{
    __raise_softirq_irqoff(cpu, nr);
    // Outside interrupt context nothing will run the softirq soon: hand it to ksoftirqd.
    if (!in_interrupt(cpu))
        wakeup_softirqd(cpu);
}

void Machine::localBhDisable(int cpu)
{
    m_cpus[static_cast<std::size_t>(cpu)].repick = true;
    if (m_currentTask >= 0 && m_context != ExecContext::Hardirq)
        task(m_currentTask).bhDisabled = true;
}

void Machine::localBhEnable(int cpu)
{
    m_cpus[static_cast<std::size_t>(cpu)].repick = true;
    if (m_currentTask >= 0 && m_context != ExecContext::Hardirq)
        task(m_currentTask).bhDisabled = false;
    if (m_currentStack && !in_interrupt(cpu) && m_cpus[static_cast<std::size_t>(cpu)].softirqPending)
        m_currentStack->push_back(m_ops(MachineOp::SoftirqStart, 0));
}

void Machine::wakeup_softirqd(int cpu)
{
    const int t = m_cpus[static_cast<std::size_t>(cpu)].ksoftirqd;
    Task& ks = task(t);
    if (ks.runnable || ks.wakePending)
        return;
    ++m_sim->counters.ksoftirqd_wakeups;
    charge(m_sim->costs.wakeup_ns);
    m_sim->trace(TraceKind::KsoftirqdWake, cpu, -1, 0);
    makeRunnable(t);
}

void Machine::makeRunnable(int id)
{
    Task& t = task(id);
    t.runnable = true;
    m_cpus[static_cast<std::size_t>(t.cpu)].repick = true;
    t.wakePending = false;
    if (t.stack.empty())
        t.stack.push_back(t.loop);
    if (!t.fifo) // CFS place_entity(): a sleeper gets at most one granularity of credit against min_vruntime
        t.vruntime = std::max(t.vruntime, minVruntime(t.cpu) - m_sim->costs.sched_granularity_ns);
    enqueueTask(id);
}

void Machine::sleepTask(int id)
{
    Task& t = task(id);
    if (!t.runnable)
        return;
    t.runnable = false;
    auto& c = m_cpus[static_cast<std::size_t>(t.cpu)];
    c.repick = true;
    dequeueTask(id);
    if (c.runnableOther.empty()) // min_vruntime never goes back (update_min_vruntime())
        c.idleVruntime = std::max(c.idleVruntime, t.vruntime);
}

// idle_cpu(): nothing runnable, no wake-up on its way.
bool Machine::cpuIdle(int cpu) const
{
    const auto& c = m_cpus[static_cast<std::size_t>(cpu)];
    return c.runnableOther.empty() && c.runnableFifo.empty() && c.wakesPending == 0;
}

// cfs_rq->min_vruntime, as far as the lab keeps it: the front of the runqueue, else what it had last.
std::int64_t Machine::minVruntime(int cpu) const
{
    const auto& c = m_cpus[static_cast<std::size_t>(cpu)];
    return c.runnableOther.empty() ? c.idleVruntime : task(c.runnableOther.front()).vruntime;
}

// select_task_rq_fair() → select_idle_sibling() (kernel/sched/fair.c, v4.14): the task's previous
// CPU if it is idle; else, within that CPU's last-level cache and the task's cpus_allowed, a core
// whose threads are all idle, else an idle CPU, each scanned from the previous CPU + 1, wrapping;
// else the previous CPU. The waker's pull (wake_affine) is left out: here the waker is the
// completion of the task's own I/O, mostly on the CPU it submitted from.
int Machine::selectTaskRq(const Task& t) const
{
    const int prev = t.cpu;
    if (cpuIdle(prev))
        return prev;
    const Topology& topo = m_sim->topo;
    const int n = topo.nrCpus();
    const auto allowed = [&](int c) { return std::binary_search(t.allowed.begin(), t.allowed.end(), c); };
    int idleCpu = -1;
    for (int i = 1; i < n; ++i) {
        const int c = (prev + i) % n;
        if (!topo.cpusShareCache(prev, c) || !allowed(c) || !cpuIdle(c))
            continue;
        bool wholeCore = true;
        for (int s = 0; s < n && wholeCore; ++s)
            if (s != c && topo.cpu(s).core == topo.cpu(c).core)
                wholeCore = cpuIdle(s);
        if (wholeCore)
            return c; // select_idle_core()
        if (idleCpu < 0)
            idleCpu = c; // select_idle_cpu()
    }
    return idleCpu >= 0 ? idleCpu : prev;
}

// Moves a sleeping task to `to`.
void Machine::migrate(int id, int to)
{
    Task& t = task(id);
    const int from = t.cpu;
    auto& f = m_cpus[static_cast<std::size_t>(from)];
    auto& dst = m_cpus[static_cast<std::size_t>(to)];
    f.tasks.erase(std::find(f.tasks.begin(), f.tasks.end(), id));
    dst.tasks.push_back(id);
    if (f.current == id) {
        f.current = -1;
        f.currentIsJob = false;
    }
    f.repick = dst.repick = true;
    t.vruntime += minVruntime(to) - minVruntime(from); // vruntime is relative to the runqueue it is on
    t.cpu = to;
    ++m_sim->counters.migrations;
}

namespace {
// The runqueue order of SCHED_OTHER tasks: smallest vruntime first, then creation order.
struct ByVruntime {
    const std::vector<Task>& tasks;
    bool operator()(int a, int b) const
    {
        const auto va = tasks[static_cast<std::size_t>(a)].vruntime, vb = tasks[static_cast<std::size_t>(b)].vruntime;
        return va != vb ? va < vb : a < b;
    }
};
} // namespace

void Machine::enqueueTask(int id)
{
    auto& c = m_cpus[static_cast<std::size_t>(task(id).cpu)];
    if (task(id).fifo)
        c.runnableFifo.insert(std::lower_bound(c.runnableFifo.begin(), c.runnableFifo.end(), id), id);
    else
        c.runnableOther.insert(
            std::lower_bound(c.runnableOther.begin(), c.runnableOther.end(), id, ByVruntime { m_tasks }), id);
}

void Machine::dequeueTask(int id)
{
    auto& c = m_cpus[static_cast<std::size_t>(task(id).cpu)];
    auto& q = task(id).fifo ? c.runnableFifo : c.runnableOther;
    const auto it = task(id).fifo ? std::lower_bound(q.begin(), q.end(), id)
                                  : std::lower_bound(q.begin(), q.end(), id, ByVruntime { m_tasks });
    assert(it != q.end() && *it == id);
    q.erase(it);
}

// addVruntime() of a runnable task with others on its runqueue: it moves right, past the tasks its
// vruntime has now overtaken.
void Machine::addVruntimeQueued(int id, std::int64_t ns)
{
    Task& t = task(id);
    auto& c = m_cpus[static_cast<std::size_t>(t.cpu)];
    c.repick = true; // the next task may now preempt it
    auto& q = c.runnableOther;
    const auto from = std::lower_bound(q.begin(), q.end(), id, ByVruntime { m_tasks });
    assert(from != q.end() && *from == id);
    t.vruntime += ns;
    std::rotate(from, from + 1, std::lower_bound(from + 1, q.end(), id, ByVruntime { m_tasks }));
}

void Machine::wakeTask(int id, int fromCpu)
{
    Task& t = task(id);
    if (t.runnable || t.wakePending)
        return;
    if (!t.allowed.empty() && !(id == m_currentTask && t.cpu == m_executingCpu))
        if (const int to = selectTaskRq(t); to != t.cpu)
            migrate(id, to);
    if (fromCpu < 0 || fromCpu == t.cpu) {
        makeRunnable(id);
        kick(t.cpu);
        return;
    }
    t.wakePending = true;
    ++m_cpus[static_cast<std::size_t>(t.cpu)].wakesPending;
    m_sim->schedule(opNow() + SimTime(m_sim->costs.ipiLatency(m_sim->topo, fromCpu, t.cpu)), EventKind::TaskWake,
        EventPriority::Cpu, id);
}

void Machine::onTaskWake(int id)
{
    task(id).wakePending = false;
    --m_cpus[static_cast<std::size_t>(task(id).cpu)].wakesPending;
    if (!task(id).runnable) {
        makeRunnable(id);
        kick(task(id).cpu);
    }
}

void Machine::setRtRuntime(SimTime runtime)
{
    // sched_rt_runtime_exceeded(): a zero runtime resets rt_time instead of throttling (no RT task
    // could be made with it, but the irq threads exist from boot): no limit either.
    m_rtRuntimeNs = runtime.ns() == 0 ? kRtPeriodNs : std::min(runtime.ns(), kRtPeriodNs);
    for (int cpu = 0; cpu < nrCpus(); ++cpu) {
        CpuState& c = m_cpus[static_cast<std::size_t>(cpu)];
        if (c.rtThrottled && (m_rtRuntimeNs >= kRtPeriodNs || c.rtTime <= m_rtRuntimeNs)) {
            c.rtThrottled = false; // a raised limit lets its tasks run at once
            c.repick = true;
            kick(cpu);
        }
    }
}

void Machine::rtReplenish(CpuState& c)
{
    const std::int64_t now = m_sim->now.ns();
    if (now < c.rtPeriodEnd)
        return;
    const std::int64_t overrun = (now - c.rtPeriodEnd) / kRtPeriodNs + 1;
    c.rtPeriodEnd += overrun * kRtPeriodNs;
    c.rtTime -= std::min(c.rtTime, overrun * m_rtRuntimeNs);
    if (c.rtThrottled && c.rtTime < m_rtRuntimeNs) {
        c.rtThrottled = false;
        c.repick = true;
    }
}

void Machine::rtAccount(int cpu, std::int64_t ns)
{
    CpuState& c = m_cpus[static_cast<std::size_t>(cpu)];
    rtReplenish(c);
    c.rtTime += ns;
    if (c.rtThrottled || c.rtTime <= m_rtRuntimeNs)
        return;
    // sched_rt_runtime_exceeded(): the kernel notices at its next tick or reschedule, the lab at the end
    // of the op that went over ("sched: RT throttling activated").
    c.rtThrottled = true;
    c.repick = true;
    ++m_sim->counters.rt_throttled;
    m_sim->schedule(SimTime(c.rtPeriodEnd), EventKind::RtPeriod, EventPriority::Cpu, cpu);
}

void Machine::onRtPeriod(int cpu)
{
    CpuState& c = m_cpus[static_cast<std::size_t>(cpu)];
    rtReplenish(c);
    if (c.rtThrottled) // still over after this period's refill
        m_sim->schedule(SimTime(c.rtPeriodEnd), EventKind::RtPeriod, EventPriority::Cpu, cpu);
    else
        kick(cpu);
}

void Machine::kick(int cpu)
{
    auto& c = m_cpus[static_cast<std::size_t>(cpu)];
    if (c.boundaryPending || cpu == m_executingCpu)
        return;
    c.boundaryPending = true;
    m_sim->schedule(m_sim->now, EventKind::CpuBoundary, EventPriority::Cpu, cpu);
}

void Machine::onIrqRaise(int cpu, IrqKind kind, int arg)
{
    auto& c = m_cpus[static_cast<std::size_t>(cpu)];
    c.irqs.push_back({ kind, arg });
    c.repick = true;
    kick(cpu);
}

int Machine::pickTask(int cpu) const
{
    const auto& c = m_cpus[static_cast<std::size_t>(cpu)];
    const auto ready = [&](int id) { return task(id).runnable && !task(id).stack.empty(); };
    const int cur = c.current;
    bool curOk = cur >= 0 && ready(cur);
    if (curOk && (task(cur).inSoftirq || task(cur).bhDisabled))
        return cur; // bh disabled implies preemption disabled
    if (curOk && task(cur).fifo && !c.rtThrottled)
        return cur;
    curOk = curOk && !task(cur).fifo; // a throttled SCHED_FIFO task waits for its next period
    // The first ready task of each runqueue other than the current one: the
    // lowest-id SCHED_FIFO task, and the SCHED_OTHER task with the smallest
    // vruntime (the lower id on a tie).
    const auto first = [&](const std::vector<int>& q) {
        for (int id : q)
            if (id != cur && ready(id))
                return id;
        return -1;
    };
    const int bestFifo = c.rtThrottled ? -1 : first(c.runnableFifo);
    const int bestOther = first(c.runnableOther);
    if (bestFifo >= 0)
        return bestFifo;
    if (!curOk)
        return bestOther;
    // wakeup_preempt_entity(): the granularity is scaled by the weight of the task that would preempt.
    if (bestOther >= 0
        && task(bestOther).vruntime + m_sim->costs.sched_granularity_ns * Task::kNice0Weight / task(bestOther).weight
            < task(cur).vruntime)
        return bestOther;
    return cur;
}

OpStack* Machine::pickStack(int cpu, ExecContext& ctx)
{
    auto& c = m_cpus[static_cast<std::size_t>(cpu)];
    m_currentTask = c.current;
    if (!c.hardirq.empty()) {
        ctx = ExecContext::Hardirq;
        return &c.hardirq;
    }
    if (c.irqQueued()) {
        const PendingIrq irq = c.irqs.pop_front();
        const Op handler = irq.kind == IrqKind::DeviceVector && m_threadirqs && vectorThread(irq.arg) >= 0
            ? m_ops(MachineOp::WakeIrqThread, irq.arg)
            : irqHandler(irq.kind, irq.arg);
        c.hardirq.push_back(m_ops(MachineOp::IrqExit, static_cast<int>(irq.kind)));
        c.hardirq.push_back(handler);
        c.hardirq.push_back(m_ops(MachineOp::IrqEntry, static_cast<int>(irq.kind)));
        ctx = ExecContext::Hardirq;
        return &c.hardirq;
    }
    if (!c.softirq.empty()) {
        ctx = ExecContext::Softirq;
        return &c.softirq;
    }
    const int t = pickTask(cpu);
    if (t < 0)
        return nullptr;
    if (t != c.current) {
        charge(m_sim->costs.context_switch_ns);
        ++m_sim->counters.context_switches;
        c.current = t;
        c.currentIsJob = task(t).kind == TaskKind::Job;
    }
    m_currentTask = t;
    ctx = task(t).context();
    return &task(t).stack;
}

void Machine::onBoundary(int cpu)
{
    auto& c = m_cpus[static_cast<std::size_t>(cpu)];
    c.boundaryPending = false;
    m_executingCpu = cpu;
    // The stack the last boundary picked runs on unless something changed what pickStack() decides
    // on (c.repick): an irq arrived, a task of this CPU was woken or slept, the running task's bh or
    // softirq state changed, or its vruntime passed another task's. Else only its stack running dry
    // can change the pick: only irq_exit fills the softirq stack, as the last op of the hardirq
    // stack, and only pickStack() fills the hardirq stack and changes the current task.
    // tst_determinism runs every preset, and live switches, both ways (setKeepPicks).
    OpStack* stack = c.picked; // checked below, with the rest, before the first op
    ExecContext ctx = c.running;
    KernelFrame::Level level = c.level;
    bool jobCur = jobCurrent(cpu);
    m_currentTask = c.current;
    for (int guard = 0;; ++guard) {
        m_charge = 0;
        m_userCharge = 0;
        if (!stack || stack->empty() || c.repick || !m_keepPicks) {
            c.repick = false;
            stack = pickStack(cpu, ctx);
            c.picked = stack;
            if (!stack) {
                c.idle = true;
                c.current = -1;
                c.currentIsJob = false;
                break;
            }
            c.idle = false;
            c.running = ctx;
            level = stack == &c.hardirq ? KernelFrame::Level::Hardirq
                : stack == &c.softirq   ? KernelFrame::Level::Softirq
                                        : KernelFrame::Level::Task;
            c.level = level;
            jobCur = jobCurrent(cpu); // only pickStack() changes the current task
        }
        m_context = ctx;
        if (m_sim->choices.lockBoundaries && stack->back().owner != 0
            && m_handlers[stack->back().owner]->lockBoundary(stack->back()) && held(cpu))
            break;
        const Op op = stack->back();
        stack->pop_back();
        // What this level does now (kernelPath): the op, and the last op of another kind before it.
        LevelOp& doing = c.doing[static_cast<std::size_t>(level)];
        if (doing.op.owner != op.owner || doing.op.code != op.code)
            doing.caller = doing.op;
        doing.op = op;
        doing.task = m_currentTask;
        doing.valid = true;
        m_currentStack = stack;
        perform(cpu, op, *stack);
        m_currentStack = nullptr;
        if (m_charge > 0) {
            c.busy[static_cast<int>(ctx)] += m_charge;
            if (jobCur) { // getrusage(): interrupts count as system time of the task they interrupt
                m_sim->counters.job_user_ns += static_cast<std::uint64_t>(m_userCharge);
                m_sim->counters.job_sys_ns += static_cast<std::uint64_t>(m_charge - m_userCharge);
            }
            const bool inTask = level == KernelFrame::Level::Task;
            if (m_sim->tracing())
                m_sim->slice({ m_sim->now.ns(), m_sim->now.ns() + m_charge, inTask ? m_currentTask : -1, op.a,
                    static_cast<std::int16_t>(cpu), ctx, op.owner, op.code });
            if (inTask) {
                addVruntime(m_currentTask, m_charge);
                if (task(m_currentTask).fifo && m_rtRuntimeNs < kRtPeriodNs)
                    rtAccount(cpu, m_charge);
            }
        }
        // Zero-cost ops (decisions) chain within the same instant; a
        // pathological chain is cut so time always advances.
        if (m_charge > 0 || guard > 100000) {
            c.boundaryPending = true;
            m_sim->schedule(m_sim->now + SimTime(std::max<std::int64_t>(m_charge, 1)), EventKind::CpuBoundary,
                EventPriority::Cpu, cpu);
            break;
        }
    }
    m_executingCpu = -1;
    m_charge = 0;
    m_userCharge = 0;
}

// A check's Hold choice (docs/check.md): the CPU goes on now, or its action waits until the next
// pending event has happened (its boundary is pushed after that event's).
bool Machine::held(int cpu)
{
    Choices& choices = m_sim->choices;
    if (m_sim->queue.empty() || choices.made.size() >= choices.depth)
        return false;
    const SimTime until = m_sim->queue.topTime();
    if (choices.take(ChoiceKind::Hold, 2) == 0) {
        choices.note(cpu);
        return false;
    }
    choices.note((until - m_sim->now).ns() << 16 | cpu);
    m_cpus[static_cast<std::size_t>(cpu)].boundaryPending = true;
    m_sim->schedule(until, EventKind::CpuBoundary, EventPriority::Cpu, cpu);
    return true;
}

OpName Machine::opName(Op op) const
{
    if (op.owner == 0)
        return machineOpName(static_cast<MachineOp>(op.code));
    return op.owner < m_handlers.size() ? m_handlers[op.owner]->opName(op.code) : OpName {};
}

OpName Machine::machineOpName(MachineOp op)
{
    switch (op) {
    case MachineOp::IrqEntry:
        return { "irq_enter" };
    case MachineOp::IrqExit:
        return { "irq_exit" };
    case MachineOp::SoftirqStart:
    case MachineOp::SoftirqLoop:
    case MachineOp::SoftirqAfter:
        return { "__do_softirq" };
    case MachineOp::KsoftirqdStep:
        return { "run_ksoftirqd" };
    case MachineOp::IrqThreadStep:
        return { "irq_thread → irq_thread_fn" };
    case MachineOp::BhDisable:
        return { "local_bh_disable" };
    case MachineOp::BhEnable:
        return { "local_bh_enable" };
    case MachineOp::WakeIrqThread:
        return { "irq_default_primary_handler → __irq_wake_thread" };
    }
    return {};
}

int Machine::kernelPath(int cpu, KernelPath& out) const
{
    const CpuState& c = m_cpus[static_cast<std::size_t>(cpu)];
    int n = 0;
    const auto level = [&](KernelFrame::Level lv, ExecContext context, const char* via) -> KernelFrame& {
        KernelFrame& f = out[static_cast<std::size_t>(n++)];
        f = {};
        f.level = lv;
        f.context = context;
        f.via = via;
        f.running = !c.idle && c.level == lv;
        const LevelOp& d = c.doing[static_cast<std::size_t>(lv)];
        if (d.valid && (lv != KernelFrame::Level::Task || d.task == c.current)) {
            const OpName name = opName(d.op);
            f.path = name.path;
            if (name.nested)
                f.caller = opName(d.caller).path;
        }
        return f;
    };
    const bool inIrq = c.softirqActive || c.hardirqActive || (!c.idle && c.level != KernelFrame::Level::Task);
    if (c.current >= 0) {
        const Task& t = task(c.current);
        const bool bh = t.inSoftirq && t.kind != TaskKind::Ksoftirqd;
        level(KernelFrame::Level::Task, t.context(), bh ? "local_bh_enable" : nullptr).task = taskKindName(t.kind);
    } else if (inIrq) { // an interrupt on an idle CPU: the idle task was running
        KernelFrame& f = out[static_cast<std::size_t>(n++)];
        f = {};
        f.task = "swapper (idle)";
    }
    if (c.softirqActive || (!c.idle && c.level == KernelFrame::Level::Softirq))
        level(KernelFrame::Level::Softirq, ExecContext::Softirq, "irq_exit");
    if (c.hardirqActive || (!c.idle && c.level == KernelFrame::Level::Hardirq))
        level(KernelFrame::Level::Hardirq, ExecContext::Hardirq, nullptr);
    return n;
}

void Machine::perform(int cpu, Op op, OpStack& stack)
{
    if (op.owner == 0)
        performMachineOp(cpu, op, stack);
    else
        m_handlers[op.owner]->perform(cpu, op, stack);
}

void Machine::enterSoftirq(int cpu, OpStack& stack, bool on)
{
    auto& c = m_cpus[static_cast<std::size_t>(cpu)];
    c.repick = true;
    if (&stack == &c.softirq)
        c.softirqActive = on;
    else
        task(m_currentTask).inSoftirq = on;
}

void Machine::performMachineOp(int cpu, Op op, OpStack& stack)
{
    auto& c = m_cpus[static_cast<std::size_t>(cpu)];
    const Costs& k = m_sim->costs;
    switch (OpSet<MachineOp>::code(op)) {
    case MachineOp::IrqEntry:
        charge(k.irq_entry_ns);
        c.hardirqActive = true;
        ++m_sim->counters.hardirqs;
        m_sim->trace(TraceKind::IrqEnter, cpu, -1, op.a);
        break;
    case MachineOp::IrqExit:
        charge(k.irq_exit_ns);
        c.hardirqActive = false;
        m_sim->trace(TraceKind::IrqExit, cpu, -1, op.a);
        // invoke_softirq() (v5.10)
        if (!in_interrupt(cpu) && c.softirqPending) {
            if (task(c.ksoftirqd).runnable)
                break; // ksoftirqd is already on it
            if (!m_threadirqs)
                c.softirq.push_back(m_ops(MachineOp::SoftirqStart, 0));
            else
                wakeup_softirqd(cpu);
        }
        break;
    case MachineOp::SoftirqStart:
        enterSoftirq(cpu, stack, true);
        c.softirqStart = m_sim->now;
        c.softirqRestarts = 0;
        stack.push_back(m_ops(MachineOp::SoftirqLoop, 0));
        break;
    case MachineOp::SoftirqLoop: {
        charge(k.softirq_entry_ns);
        const std::uint32_t pending = c.softirqPending;
        c.softirqPending = 0;
        m_sim->trace(TraceKind::SoftirqRun, cpu, -1, static_cast<int>(pending));
        stack.push_back(m_ops(MachineOp::SoftirqAfter, 0));
        // Handlers run in bit order: push the highest first.
        for (int nr = NR_SOFTIRQS_MODELLED - 1; nr >= 0; --nr) {
            if (!(pending & (1u << nr)))
                continue;
            if (m_hasSoftirqHandler[static_cast<std::size_t>(nr)])
                stack.push_back(m_softirqHandler[static_cast<std::size_t>(nr)]);
        }
        break;
    }
    case MachineOp::SoftirqAfter:
        if (c.softirqPending) {
            if ((opNow() - c.softirqStart).ns() < k.softirq_time_limit_ns
                && c.softirqRestarts + 1 < k.softirq_restart_limit) {
                ++c.softirqRestarts;
                stack.push_back(m_ops(MachineOp::SoftirqLoop, 0));
                break;
            }
            wakeup_softirqd(cpu);
        }
        enterSoftirq(cpu, stack, false);
        break;
    case MachineOp::KsoftirqdStep:
        if (c.softirqPending) {
            stack.push_back(m_ops(MachineOp::KsoftirqdStep, cpu));
            stack.push_back(m_ops(MachineOp::SoftirqStart, 0));
        } else {
            sleepTask(m_currentTask);
        }
        break;
    case MachineOp::IrqThreadStep: {
        Task& t = task(m_currentTask);
        if (t.irqPending) {
            t.irqPending = false;
            stack.push_back(m_ops(MachineOp::IrqThreadStep, op.a));
            stack.push_back(m_ops(MachineOp::BhEnable, 0));
            stack.push_back(irqHandler(IrqKind::DeviceVector, op.a));
            stack.push_back(m_ops(MachineOp::BhDisable, 0));
        } else {
            sleepTask(m_currentTask);
        }
        break;
    }
    case MachineOp::BhDisable:
        localBhDisable(cpu);
        break;
    case MachineOp::BhEnable:
        localBhEnable(cpu);
        break;
    case MachineOp::WakeIrqThread: {
        const int t = vectorThread(op.a);
        task(t).irqPending = true;
        charge(k.wakeup_ns);
        wakeTask(t, cpu);
        break;
    }
    default:
        assert(false && "not a machine op");
    }
}

} // namespace blkmq
