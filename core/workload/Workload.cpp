#include "workload/Workload.h"

#include "block/DeviceModel.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <cmath>

namespace blkmq {

namespace {

// The devices a job may target: the one named, or name0..nameN-1.
std::vector<int> devicesFor(const BlockLayer& block, const std::string& name)
{
    std::vector<int> out;
    const int exact = block.findQueue(name);
    if (exact >= 0)
        return { exact };
    for (std::size_t i = 0; i < block.queues().size(); ++i) {
        const std::string& n = block.queues()[i].spec.name;
        if (n.rfind(name, 0) == 0 && n.size() > name.size()
            && std::all_of(n.begin() + static_cast<std::ptrdiff_t>(name.size()), n.end(),
                [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
            out.push_back(static_cast<int>(i));
    }
    return out;
}

} // namespace

Workload::Workload(Sim& sim, Machine& machine, BlockLayer& block, const Scenario& scenario)
    : m_sim(&sim)
    , m_machine(&machine)
    , m_block(&block)
    , m_ops(machine.addHandler(this))
    , m_netRx(scenario.net_rx)
    , m_specs(scenario.jobs)
    , m_script(scenario.script)
    , m_scriptRq(scenario.script.size(), -1)
    , m_releaseEarly(scenario.script.size(), false)
    , m_scriptQueue(static_cast<std::size_t>(sim.topo.nrCpus()))
    , m_scriptTask(static_cast<std::size_t>(sim.topo.nrCpus()), -1)
{
    const int nrCpus = sim.topo.nrCpus();
    std::vector<int> jobsOnCpu(static_cast<std::size_t>(nrCpus), 0);
    for (std::size_t s = 0; s < scenario.jobs.size(); ++s) {
        const JobSpec& spec = scenario.jobs[s];
        std::vector<int> allowed = spec.cpus_allowed;
        if (allowed.empty())
            for (int c = 0; c < nrCpus; ++c)
                allowed.push_back(c);
        const std::vector<int> devs = devicesFor(block, spec.device);
        for (int k = 0; k < spec.numjobs; ++k) {
            Job job;
            job.spec = static_cast<int>(s);
            job.dev = devs[static_cast<std::size_t>(k) % devs.size()];
            if (spec.cpus_allowed_policy == CpusAllowedPolicy::Split) {
                job.cpu = allowed[static_cast<std::size_t>(k) % allowed.size()];
            } else {
                // The scheduler would balance: start on the least loaded allowed CPU.
                job.cpu = *std::min_element(allowed.begin(), allowed.end(), [&](int a, int b) {
                    return jobsOnCpu[static_cast<std::size_t>(a)] < jobsOnCpu[static_cast<std::size_t>(b)];
                });
            }
            ++jobsOnCpu[static_cast<std::size_t>(job.cpu)];
            job.iodepth = spec.iodepth;
            job.batch = spec.iodepth_batch_submit;
            job.bytes = spec.bs;
            job.thinktime = spec.thinktime_ns;
            job.ioLeft = spec.number_ios > 0 ? spec.number_ios : -1;
            job.hipri = spec.hipri && block.queues()[static_cast<std::size_t>(job.dev)].model->pollable();
            job.iouSubmitted.resize(static_cast<std::size_t>(spec.iodepth));
            for (int i = spec.iodepth - 1; i >= 0; --i)
                job.freeIous.push_back(i);
            job.completedIous.resize(static_cast<std::size_t>(spec.iodepth));
            job.task = machine.createTask(
                TaskKind::Job, job.cpu, m_ops(WorkloadOp::JobStep, static_cast<int>(m_jobs.size())), false);
            if (spec.cpus_allowed_policy == CpusAllowedPolicy::Shared && allowed.size() > 1)
                machine.allowMigration(job.task, allowed); // the scheduler may move it among them
            m_jobs.push_back(std::move(job));
        }
    }
    for (const auto& step : m_script) {
        if (step.op != ScriptStep::Op::Complete && m_scriptTask[static_cast<std::size_t>(step.cpu)] < 0)
            m_scriptTask[static_cast<std::size_t>(step.cpu)]
                = machine.createTask(TaskKind::Script, step.cpu, m_ops(WorkloadOp::ScriptStep, step.cpu), false);
    }
}

Workload::Workload(const Workload& o, Sim& sim, Machine& machine, BlockLayer& block)
    : Workload(o)
{
    m_sim = &sim;
    m_machine = &machine;
    m_block = &block;
    machine.replaceHandler(&o, this);
    block.setEndIoSink(this);
}

void Workload::start()
{
    for (const Job& job : m_jobs)
        m_machine->wakeTask(job.task, -1);
    for (std::size_t i = 0; i < m_script.size(); ++i)
        m_sim->schedule(m_script[i].at, EventKind::ScriptStep, EventPriority::Control, static_cast<int>(i));
}

void Workload::startNetRx()
{
    for (std::size_t l = 0; l < m_netRx.size(); ++l)
        for (int cpu : m_netRx[l].cpus)
            scheduleNetPacket(cpu, static_cast<int>(l));
}

void Workload::onNetPacket(int cpu, int load)
{
    m_block->netPacket(cpu, m_netRx[static_cast<std::size_t>(load)].cost_ns);
    scheduleNetPacket(cpu, load);
}

// Poisson arrivals: exponential gaps at the load's rate.
void Workload::scheduleNetPacket(int cpu, int load)
{
    const double mean = 1e9 / m_netRx[static_cast<std::size_t>(load)].pps;
    double gap;
    if (!m_sim->choices.on) {
        gap = m_sim->rng.exponential(mean);
    } else {
        Choices& c = m_sim->choices;
        const int n = c.latencyPoints;
        const std::int64_t ns = n < 2 ? Choices::exponentialPoint(mean, 0, 1)
                                      : Choices::exponentialPoint(mean, c.take(ChoiceKind::NetGap, n), n);
        if (n >= 2)
            c.note(ns);
        gap = static_cast<double>(ns);
    }
    m_sim->schedule(m_sim->now + SimTime(std::max<std::int64_t>(1, std::llround(gap))), EventKind::NetPacket,
        EventPriority::Hardware, cpu, load);
}

int Workload::scriptRequest(const std::string& id) const
{
    for (std::size_t i = 0; i < m_script.size(); ++i)
        if (m_script[i].op == ScriptStep::Op::Submit && m_script[i].id == id)
            return m_scriptRq[i];
    return -1;
}

void Workload::onScriptStep(int i)
{
    const ScriptStep& step = m_script[static_cast<std::size_t>(i)];
    if (step.op == ScriptStep::Op::Submit || step.op == ScriptStep::Op::Run) {
        m_scriptQueue[static_cast<std::size_t>(step.cpu)].push_back(i);
        m_machine->wakeTask(m_scriptTask[static_cast<std::size_t>(step.cpu)], -1);
        return;
    }
    for (std::size_t s = 0; s < m_script.size(); ++s) {
        if (m_script[s].op != ScriptStep::Op::Submit || m_script[s].id != step.id)
            continue;
        if (m_scriptRq[s] >= 0 && m_block->request(m_scriptRq[s]).script == static_cast<int>(s)
            && m_block->request(m_scriptRq[s]).state != RqState::Free)
            m_block->release(m_scriptRq[s]);
        else if (m_scriptRq[s] < 0)
            m_releaseEarly[s] = true;
    }
}

void Workload::onThinkDone(int job)
{
    m_jobs[static_cast<std::size_t>(job)].thinking = false;
    m_machine->wakeTask(m_jobs[static_cast<std::size_t>(job)].task, -1);
}

Sleeper Workload::sleeper(int task) const
{
    for (std::size_t j = 0; j < m_jobs.size(); ++j)
        if (const Job& job = m_jobs[j]; job.task == task)
            return { "job " + std::to_string(j) + " (" + m_specs[static_cast<std::size_t>(job.spec)].name + " on CPU "
                    + std::to_string(m_machine->task(job.task).cpu) + ")",
                job.allocSince };
    for (std::size_t cpu = 0; cpu < m_scriptTask.size(); ++cpu)
        if (m_scriptTask[cpu] == task)
            return { "the script's submitter on CPU " + std::to_string(cpu), m_sim->now };
    return { "task " + std::to_string(task), m_sim->now };
}

bool Workload::maySubmit(int dev) const
{
    for (const Job& job : m_jobs) {
        if (job.dev != dev)
            continue;
        const Task& t = m_machine->task(job.task);
        if (t.runnable || t.wakePending || job.thinking)
            return true;
    }
    for (std::size_t i = 0; i < m_script.size(); ++i) {
        const ScriptStep& st = m_script[i];
        if (st.op == ScriptStep::Op::Complete || m_block->findQueue(st.device) != dev)
            continue;
        if (st.at > m_sim->now)
            return true;
        const auto& q = m_scriptQueue[static_cast<std::size_t>(st.cpu)];
        if (std::find(q.begin(), q.end(), static_cast<int>(i)) != q.end())
            return true;
    }
    return false;
}

bool Workload::lockBoundary(const Op& op) const
{
    return OpSet<WorkloadOp>::code(op) == WorkloadOp::Submit
        && m_jobs[static_cast<std::size_t>(op.a)].tagAlloc.state != 0;
}

OpName Workload::opName(std::uint8_t code) const
{
    switch (static_cast<WorkloadOp>(code)) {
    case WorkloadOp::JobStep:
        return { "fio: td_io_queue" };
    case WorkloadOp::Submit:
        return { "io_submit → blk_mq_submit_bio → blk_mq_run_hw_queue" };
    case WorkloadOp::Reap:
        return { "io_getevents" };
    case WorkloadOp::ScriptStep:
        return { "a workload.script step" };
    case WorkloadOp::Poll:
        return { "io_getevents → blk_poll" };
    }
    return {};
}

void Workload::perform(int cpu, Op op, OpStack& stack)
{
    switch (OpSet<WorkloadOp>::code(op)) {
    case WorkloadOp::JobStep:
        jobStep(m_jobs[static_cast<std::size_t>(op.a)], stack);
        break;
    case WorkloadOp::Submit:
        submit(cpu, m_jobs[static_cast<std::size_t>(op.a)], stack, op.b == kNextIo);
        break;
    case WorkloadOp::Reap:
        reap(m_jobs[static_cast<std::size_t>(op.a)]);
        break;
    case WorkloadOp::ScriptStep:
        scriptStep(cpu, stack);
        break;
    case WorkloadOp::Poll:
        m_block->poll(cpu, m_jobs[static_cast<std::size_t>(op.a)].dev);
        break;
    default:
        assert(false && "not a workload op");
    }
}

void Workload::jobStep(Job& job, OpStack& stack)
{
    const int self = static_cast<int>(&job - m_jobs.data());
    if (job.inflight() < job.iodepth && job.ioLeft != 0) {
        stack.push_back(m_ops(WorkloadOp::JobStep, self));
        stack.push_back(m_ops(WorkloadOp::Submit, self));
    } else if (job.nrCompleted > 0) {
        stack.push_back(m_ops(WorkloadOp::JobStep, self));
        stack.push_back(m_ops(WorkloadOp::Reap, self));
    } else if (job.hipri) {
        stack.push_back(m_ops(WorkloadOp::JobStep, self));
        stack.push_back(m_ops(WorkloadOp::Poll, self)); // spin in blk_poll() instead of sleeping
    } else {
        job.waitingCompletion = true; // io_getevents(min_nr = 1) sleeps
        m_machine->sleepTask(job.task);
    }
}

void Workload::submit(int cpu, Job& job, OpStack& stack, bool nextIo)
{
    const int self = static_cast<int>(&job - m_jobs.data());
    // The next I/O that the last submission queued for fio's loop, in an action that began with a
    // context switch into this task: before that shortcut, jobStep() ran first, its action ended
    // with the switch's cost, and the submission came in the next action. So it does here. (Here,
    // not in perform(): there it made every op of the workload save and restore six registers.)
    if (nextIo && m_machine->opNow() > m_sim->now) {
        stack.push_back(m_ops(WorkloadOp::Submit, self));
        return;
    }
    const Costs& k = m_sim->costs;
    if (!job.submitCharged) {
        if (job.batchPos == 0)
            m_machine->charge(k.syscall_ns); // one io_submit per batch
        if (++job.batchPos == job.batch) // not a modulo: an integer division on every I/O
            job.batchPos = 0;
        m_machine->chargeUser(k.fio_user_ns);
        m_machine->charge(k.submit_ns - k.fio_user_ns);
        job.submitCharged = true;
        job.allocSince = m_machine->opNow();
    }
    const int rq = m_block->getRequest(cpu, job.dev, job.task, job.bytes, &job.tagAlloc, job.tagWoken);
    if (rq == BlockLayer::kTagInProgress) { // the next step of the allocation in the next action
        stack.push_back(m_ops(WorkloadOp::Submit, self));
        return;
    }
    if (rq < 0) {
        // Sleep in blk_mq_get_tag; JobStep (below on the stack) retries when woken.
        job.tagWoken = true;
        m_machine->sleepTask(job.task);
        return;
    }
    job.submitCharged = false;
    job.tagWoken = false;
    const std::int64_t allocNs = (m_machine->opNow() - job.allocSince).ns();
    m_intervalAllocLat.record(allocNs);
    if (job.ioLeft > 0)
        --job.ioLeft;
    const JobSpec& spec = m_specs[static_cast<std::size_t>(job.spec)];
    const int iou = job.freeIous.back();
    job.freeIous.pop_back();
    job.iouSubmitted[static_cast<std::size_t>(iou)] = m_sim->now;
    Request& r = m_block->request(rq);
    r.job = self;
    r.iou = iou;
    r.polled = job.hipri;
    // A share of requests bypasses the scheduler, as flushes and requeues do.
    bool bypass;
    if (!m_sim->choices.on)
        bypass = spec.bypass_pct > 0 && m_sim->rng.uniform() * 100.0 < spec.bypass_pct;
    else if (spec.bypass_pct <= 0 || spec.bypass_pct >= 100)
        bypass = spec.bypass_pct >= 100;
    else { // both, where both can happen (docs/check.md)
        bypass = m_sim->choices.take(ChoiceKind::Bypass, 2) == 1;
        m_sim->choices.note(bypass);
    }
    // fio's loop goes on to the next I/O if jobStep() would: only this task's own ops (a submission,
    // a reap) change what it decides on, so deciding now is deciding in its next action, and the
    // stack is the one jobStep() would leave (JobStep stays below). One action less per I/O. Pushed
    // before the submission, so that what it pushes (a restart walk) runs first, as before.
    if (job.inflight() < job.iodepth && job.ioLeft != 0)
        stack.push_back(m_ops(WorkloadOp::Submit, self, kNextIo));
    m_block->submit(cpu, rq, bypass);
}

void Workload::reap(Job& job)
{
    const Costs& k = m_sim->costs;
    const auto n = static_cast<std::int64_t>(job.nrCompleted);
    m_machine->charge(k.syscall_ns + k.reap_ns * n);
    const SimTime now = m_machine->opNow();
    for (int i = 0; i < job.nrCompleted; ++i) {
        const int iou = job.completedIous[static_cast<std::size_t>(i)];
        const std::int64_t lat = (now - job.iouSubmitted[static_cast<std::size_t>(iou)]).ns();
        m_intervalLat.record(lat);
        job.freeIous.push_back(iou);
    }
    m_sim->counters.reaped += static_cast<std::uint64_t>(n);
    job.nrCompleted = 0;
    if (job.thinktime > 0) {
        m_sim->schedule(now + SimTime(job.thinktime), EventKind::ThinkDone, EventPriority::Cpu,
            static_cast<int>(&job - m_jobs.data()));
        job.thinking = true;
        m_machine->sleepTask(job.task);
    }
}

void Workload::endIo(int cpu, const Request& rq)
{
    if (rq.job < 0) { // a script's request: no one reaps it, its latency ends at its completion
        m_intervalLat.record((m_machine->opNow() - rq.submitted).ns());
        return;
    }
    Job& job = m_jobs[static_cast<std::size_t>(rq.job)];
    assert(job.nrCompleted < job.iodepth);
    job.completedIous[static_cast<std::size_t>(job.nrCompleted++)] = rq.iou;
    if (job.waitingCompletion) [[unlikely]]
        wakeReaper(cpu, job);
}

void Workload::wakeReaper(int cpu, Job& job)
{
    job.waitingCompletion = false;
    m_machine->charge(m_sim->costs.wakeup_ns);
    m_machine->wakeTask(job.task, cpu);
}

void Workload::scriptStep(int cpu, OpStack& stack)
{
    auto& queue = m_scriptQueue[static_cast<std::size_t>(cpu)];
    const int task = m_scriptTask[static_cast<std::size_t>(cpu)];
    if (queue.empty()) {
        m_machine->sleepTask(task);
        return;
    }
    const int i = queue.front();
    const ScriptStep& step = m_script[static_cast<std::size_t>(i)];
    if (step.op == ScriptStep::Op::Run) {
        queue.erase(queue.begin());
        stack.push_back(m_ops(WorkloadOp::ScriptStep, cpu));
        m_block->runQueue(cpu, m_block->findQueue(step.device));
        return;
    }
    m_machine->charge(m_sim->costs.submit_ns);
    const int rq = m_block->getRequest(cpu, m_block->findQueue(step.device), task, 4096);
    if (rq < 0) {
        m_machine->sleepTask(task); // retried when a tag is freed
        return;
    }
    queue.erase(queue.begin());
    Request& r = m_block->request(rq);
    r.script = i;
    r.hold = step.hold;
    r.released = m_releaseEarly[static_cast<std::size_t>(i)];
    m_scriptRq[static_cast<std::size_t>(i)] = rq;
    stack.push_back(m_ops(WorkloadOp::ScriptStep, cpu));
    m_block->submit(cpu, rq, step.bypass, step.run);
}

} // namespace blkmq
