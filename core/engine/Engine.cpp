#include "engine/Engine.h"

#include "block/BlockLayer.h"
#include "cpu/Machine.h"
#include "workload/Workload.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>

namespace blkmq {

Engine::Engine(const Scenario& scenario)
    : m_scenario(scenario)
{
    m_sim = std::make_unique<Sim>(m_scenario.topology, m_scenario.costs, m_scenario.seed);
    if (m_scenario.choices.on) {
        m_sim->choices.on = true;
        m_sim->choices.latencyPoints = m_scenario.choices.latency_points;
        m_sim->choices.lockBoundaries = m_scenario.choices.lock_boundaries;
        m_sim->choices.script = m_scenario.choices.taken;
    }
    m_machine = std::make_unique<Machine>(*m_sim);
    m_block = std::make_unique<BlockLayer>(*m_sim, *m_machine, m_scenario);
    m_workload = std::make_unique<Workload>(*m_sim, *m_machine, *m_block, m_scenario);
    m_machine->setThreadirqs(m_scenario.kernel.threadirqs);
    m_machine->setRtRuntime(m_scenario.kernel.sched_rt_runtime);
    m_block->setEndIoSink(m_workload.get());
    m_series.reserve(static_cast<std::size_t>(m_scenario.duration.ns() / m_scenario.sample_interval.ns()) + 2);
    m_workload->start();
    m_sim->schedule(m_scenario.sample_interval, EventKind::Sample, EventPriority::Bookkeeping);
    m_workload->startNetRx();
    m_loadedJson = std::make_shared<const std::string>(m_scenario.sourceJson);
    m_liveChanges = std::make_shared<const std::vector<Command>>();
}

Engine::~Engine() = default;

Engine::Engine(const Engine& o, CloneOf) { copyRun(o); }

std::unique_ptr<Engine> Engine::clone() const { return std::unique_ptr<Engine>(new Engine(*this, CloneOf {})); }

void Engine::restore(const Engine& from)
{
    const auto sinks = m_sim->sinks;
    const int nrSinks = m_sim->nrSinks;
    copyRun(from);
    m_sim->sinks = sinks;
    m_sim->nrSinks = nrSinks;
}

void Engine::copyRun(const Engine& o)
{
    // The new components are built before the old ones go: each copy reads only o's.
    m_scenario = o.m_scenario;
    auto sim = std::make_unique<Sim>(*o.m_sim, m_scenario.topology);
    auto machine = std::make_unique<Machine>(*o.m_machine, *sim);
    auto block = std::make_unique<BlockLayer>(*o.m_block, *sim, *machine);
    auto workload = std::make_unique<Workload>(*o.m_workload, *sim, *machine, *block);
    m_workload = std::move(workload);
    m_block = std::move(block);
    m_machine = std::move(machine);
    m_sim = std::move(sim);
    m_applied = o.m_applied;
    m_fingerprint = o.m_fingerprint;
    m_events = o.m_events;
    m_wallSeconds = o.m_wallSeconds;
    m_series = o.m_series;
    m_lastSample = o.m_lastSample;
    m_lastSampleTime = o.m_lastSampleTime;
    m_markers = o.m_markers;
    m_stallDetected = o.m_stallDetected;
    m_firstStall = o.m_firstStall;
    m_stallEvents = o.m_stallEvents;
    m_stuck = o.m_stuck;
    m_stuckSubmitters = o.m_stuckSubmitters;
    m_firstStuckNames = o.m_firstStuckNames;
    m_firstStuckSubmitters = o.m_firstStuckSubmitters;
    m_stallExplanation = o.m_stallExplanation;
    m_stallSteps = o.m_stallSteps;
    m_snapshotInterval = o.m_snapshotInterval;
    m_nextSnapshot = o.m_nextSnapshot;
    m_loadedJson = o.m_loadedJson;
    m_liveChanges = o.m_liveChanges;
    m_scriptIds = o.m_scriptIds;
}

void Engine::hashState(StateHash& h) const
{
    m_sim->hashState(h);
    m_machine->hashState(h);
    m_block->hashState(h);
    m_workload->hashState(h);
}

std::size_t Engine::stateBytes() const
{
    std::size_t n = sizeof(Engine) + sizeof(Sim) + sizeof(Machine) + sizeof(BlockLayer) + sizeof(Workload)
        + m_sim->queue.bytes() + m_scenario.sourceJson.size();
    for (int c = 0; c < m_machine->nrCpus(); ++c) {
        const CpuState& cpu = m_machine->cpu(c);
        n += sizeof(CpuState) + heapBytes(cpu.hardirq) + heapBytes(cpu.softirq)
            + cpu.irqs.capacity() * sizeof(PendingIrq) + heapBytes(cpu.tasks) + heapBytes(cpu.runnableFifo)
            + heapBytes(cpu.runnableOther);
        const BlkCpu& b = m_block->blkCpu(c);
        n += sizeof(BlkCpu) + b.kblockd.capacity() * sizeof(int) + b.rx.entries.capacity() * sizeof(int)
            + b.ibCq.entries.capacity() * sizeof(int);
    }
    for (int t = 0; t < m_machine->nrTasks(); ++t)
        n += sizeof(Task) + heapBytes(m_machine->task(t).stack) + heapBytes(m_machine->task(t).allowed);
    n += m_block->poolSize() * (sizeof(Request) + sizeof(int));
    for (const Hctx& h : m_block->hctxs())
        n += sizeof(Hctx) + sizeof(Cacheline) * 2 + heapBytes(h.cpus) + heapBytes(h.schedWaiters);
    for (const RequestQueue& q : m_block->queues())
        n += sizeof(RequestQueue) + heapBytes(q.cpuToHctx) + heapBytes(q.cmdIssueLocks);
    for (const TagSet& set : m_block->tagSets())
        for (const BlkMqTags& tags : set.tags)
            n += sizeof(BlkMqTags) + tags.alloc().bytes();
    for (const Job& j : m_workload->jobs())
        n += sizeof(Job) + heapBytes(j.iouSubmitted) + heapBytes(j.freeIous) + heapBytes(j.completedIous);
    n += heapBytes(m_series.rows()) + heapBytes(m_markers) + heapBytes(m_applied) + heapBytes(m_stallSteps);
    return n;
}

bool Engine::addTraceSink(TraceSink* sink)
{
    if (m_sim->nrSinks == Sim::kMaxSinks)
        return false;
    m_sim->sinks[static_cast<std::size_t>(m_sim->nrSinks++)] = sink;
    return true;
}

void Engine::removeTraceSink(TraceSink* sink)
{
    auto& s = m_sim->sinks;
    const auto end = s.begin() + m_sim->nrSinks;
    const auto it = std::find(s.begin(), end, sink);
    if (it == end)
        return;
    std::copy(it + 1, end, it);
    s[static_cast<std::size_t>(--m_sim->nrSinks)] = nullptr;
}

TraceRing& Engine::enableTrace(std::size_t capacity)
{
    if (!m_trace) {
        m_trace = std::make_unique<TraceRing>(capacity);
        addTraceSink(m_trace.get());
    }
    return *m_trace;
}

bool Engine::eventDue(SimTime limit)
{
    if (m_inbox.pending())
        applyCommands();
    return !m_sim->queue.empty() && m_sim->queue.topTime() <= limit;
}

std::size_t Engine::pendingEvents() const { return m_sim->queue.size(); }

void Engine::setKeepPicks(bool on) { m_machine->setKeepPicks(on); }
void Engine::setTagOwnPath(bool on) { m_block->setTagOwnPath(on); }

bool Engine::step()
{
    if (!eventDue(m_scenario.duration))
        return false;
    const auto t0 = std::chrono::steady_clock::now();
    processNext();
    m_wallSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return true;
}

void Engine::runUntil(SimTime t)
{
    if (t > m_scenario.duration)
        t = m_scenario.duration;
    const auto t0 = std::chrono::steady_clock::now();
    while (eventDue(t))
        processNext();
    if (m_sim->now < t)
        m_sim->now = t;
    if (t == m_scenario.duration)
        checkStalls();
    m_wallSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool Engine::runUntil(SimTime t, StopCondition& stop)
{
    if (t > m_scenario.duration)
        t = m_scenario.duration;
    const auto t0 = std::chrono::steady_clock::now();
    stop.arm(*this);
    bool reached = false;
    while (!reached && eventDue(t)) {
        processNext();
        reached = stop.reached(*this);
    }
    if (!reached) {
        if (m_sim->now < t)
            m_sim->now = t;
        if (t == m_scenario.duration) {
            checkStalls();
            reached = stop.reached(*this);
        }
    }
    stop.disarm(*this);
    m_wallSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return reached;
}

bool Engine::runUntil(StopCondition& stop, std::uint64_t maxEvents)
{
    const auto t0 = std::chrono::steady_clock::now();
    stop.arm(*this);
    bool reached = stop.reached(*this);
    for (std::uint64_t n = 0; !reached && n < maxEvents && eventDue(m_scenario.duration); ++n) {
        processNext();
        reached = stop.reached(*this);
    }
    stop.disarm(*this);
    m_wallSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return reached;
}

void Engine::processNext()
{
    Event e = m_sim->queue.pop();
    if (m_sim->choices.on) [[unlikely]]
        e = chooseSameTime(e);
    m_sim->now = e.time;
    m_fingerprint.add(e);
    ++m_events;
    dispatchEvent(e);
    if (m_snapshotInterval.ns() > 0 && m_sim->now >= m_nextSnapshot) {
        publishSnapshot();
        m_nextSnapshot = m_sim->now + m_snapshotInterval;
    }
}

// Choice points (docs/check.md): of the hardware and CPU events due at e's instant, the run's
// choice happens first; the others go back in their order. Markers and stops stay before them,
// samples after them.
Event Engine::chooseSameTime(const Event& e)
{
    Choices& c = m_sim->choices;
    c.events = m_events;
    c.nowNs = e.time.ns();
    EventQueue& q = m_sim->queue;
    const bool movable = e.prio == EventPriority::Hardware || e.prio == EventPriority::Cpu;
    if (!movable || q.empty() || q.topTime() != e.time)
        return e;
    std::vector<Event> due { e };
    while (!q.empty() && q.topTime() == e.time && due.size() < static_cast<std::size_t>(Choices::kMaxOptions))
        due.push_back(q.pop());
    int options = 0;
    for (const Event& d : due)
        options += d.prio == EventPriority::Hardware || d.prio == EventPriority::Cpu ? 1 : 0;
    int pick = 0;
    if (options > 1)
        pick = c.take(ChoiceKind::SameTime, options);
    Event chosen = e;
    int k = 0;
    for (const Event& d : due) {
        const bool candidate = d.prio == EventPriority::Hardware || d.prio == EventPriority::Cpu;
        if (candidate && k++ == pick)
            chosen = d;
        else
            q.push(d);
    }
    if (options > 1)
        c.note(static_cast<std::int64_t>(chosen.kind) << 32 | static_cast<std::uint32_t>(chosen.a));
    return chosen;
}

void Engine::dispatchEvent(const Event& e)
{
    switch (e.kind) {
    case EventKind::CpuBoundary:
        m_machine->onBoundary(e.a);
        break;
    case EventKind::IrqRaise:
        m_machine->onIrqRaise(e.a, static_cast<IrqKind>(e.b), e.c);
        break;
    case EventKind::DeviceDone:
        m_block->onDeviceDone(e.a);
        break;
    case EventKind::TaskWake:
        m_machine->onTaskWake(e.a);
        break;
    case EventKind::Sample:
        sample();
        m_block->idleTagUsers();
        checkStalls();
        if (m_sim->now + m_scenario.sample_interval <= m_scenario.duration)
            m_sim->schedule(m_sim->now + m_scenario.sample_interval, EventKind::Sample, EventPriority::Bookkeeping);
        break;
    case EventKind::ScriptStep:
        m_workload->onScriptStep(e.a);
        break;
    case EventKind::ThinkDone:
        m_workload->onThinkDone(e.a);
        break;
    case EventKind::NetPacket:
        m_workload->onNetPacket(e.a, e.b);
        break;
    case EventKind::RtPeriod:
        m_machine->onRtPeriod(e.a);
        break;
    case EventKind::Marker:
    case EventKind::Stop:
        break;
    }
}

void Engine::applyCommands()
{
    for (const LiveChange& c : m_inbox.drain()) {
        m_applied.push_back({ m_events, c.command(), m_sim->now.ns() });
        const std::string text = c.command().path + "=" + c.command().value;
        if (auto applied = c.applyTo(m_scenario); !applied) {
            addMarker("rejected " + text + ": " + applied.error());
            continue;
        }
        // The interval in progress ends here: its rates are the kernel's before the switch, and the
        // next ones after it (a plot would otherwise draw the new kernel's rates from the interval's
        // start, before the switch was made).
        sample();
        m_sim->costs = m_scenario.costs;
        m_machine->setThreadirqs(m_scenario.kernel.threadirqs);
        m_machine->setRtRuntime(m_scenario.kernel.sched_rt_runtime);
        m_block->setKernel(m_scenario.kernel);
        for (std::size_t d = 0; d < m_scenario.devices.size(); ++d)
            m_block->setRqAffinity(static_cast<int>(d), m_scenario.devices[d].rq_affinity);
        auto changes = std::make_shared<std::vector<Command>>(*m_liveChanges);
        changes->push_back(c.command());
        m_liveChanges = std::move(changes);
        addMarker(text);
    }
}

void Engine::checkStalls()
{
    std::vector<bool> live(m_block->tagSets().size(), false);
    for (std::size_t d = 0; d < m_block->queues().size(); ++d)
        if (m_workload->maySubmit(static_cast<int>(d)))
            live[static_cast<std::size_t>(m_block->queues()[d].tagSet)] = true;
    StallReport r
        = m_block->findStalls(m_scenario.stall_age, live, [this](int task) { return m_workload->sleeper(task); });
    m_stuck = std::move(r.stuck);
    m_stuckSubmitters = std::move(r.stuckSubmitters);
    if ((m_stuck.empty() && m_stuckSubmitters.empty()) || m_stallDetected)
        return;
    m_stallDetected = true;
    m_firstStall = m_sim->now;
    m_stallEvents = m_events;
    m_stallExplanation = std::move(r.explanation);
    m_stallSteps = std::move(r.steps);
    for (int rq : m_stuck)
        m_firstStuckNames.push_back(m_block->requestName(rq));
    m_firstStuckSubmitters = m_stuckSubmitters;
    addMarker(m_firstStuckNames.empty()
            ? "stall: " + m_firstStuckSubmitters.front() + " has slept for a tag longer than stall_age"
            : "stall: " + m_firstStuckNames.front() + " is stuck");
}

void Engine::addMarker(const std::string& text)
{
    m_markers.push_back({ m_sim->now.ns(), text });
    Event e;
    e.time = m_sim->now;
    e.kind = EventKind::Marker;
    e.a = static_cast<int>(m_markers.size()) - 1;
    for (char ch : text)
        m_fingerprint.mix(static_cast<unsigned char>(ch));
    m_fingerprint.add(e);
    m_sim->trace(TraceKind::Marker, -1, -1, e.a);
}

MetricSample Engine::metricSample() const
{
    MetricSample m;
    m.counters = m_sim->counters;
    for (int cpu = 0; cpu < m_machine->nrCpus(); ++cpu)
        for (std::size_t k = 0; k < m.busy_ns.size(); ++k)
            m.busy_ns[k] += m_machine->cpu(cpu).busy[k];
    return m;
}

void Engine::sample()
{
    const double dt = (m_sim->now - m_lastSampleTime).seconds();
    if (dt <= 0)
        return;
    const MetricSample now = metricSample();
    const MetricInput in { now, m_lastSample, dt, m_machine->nrCpus(), m_workload->intervalLatency(),
        m_workload->intervalTagAllocLatency(), m_block->inFlight(), static_cast<int>(m_workload->jobs().size()) };
    m_series.append({ m_sim->now.ns(), computeMetrics(in) });
    m_lastSample = now;
    m_lastSampleTime = m_sim->now;
    m_workload->resetInterval();
}

std::optional<SeriesRow> Engine::intervalSoFar() const
{
    const SimTime elapsed = m_sim->now - m_lastSampleTime;
    if (elapsed.ns() * 20 < m_scenario.sample_interval.ns() || elapsed.ns() <= 0)
        return std::nullopt;
    const MetricSample now = metricSample();
    const MetricInput in { now, m_lastSample, elapsed.seconds(), m_machine->nrCpus(), m_workload->intervalLatency(),
        m_workload->intervalTagAllocLatency(), m_block->inFlight(), static_cast<int>(m_workload->jobs().size()) };
    return SeriesRow { m_sim->now.ns(), computeMetrics(in) };
}

void Engine::publishSnapshot()
{
    auto s = std::make_shared<Snapshot>();
    s->now = m_sim->now;
    s->events = m_events;
    s->counters = m_sim->counters;
    s->totals = totals();
    s->scenarioJson = m_loadedJson;
    s->liveChanges = m_liveChanges;
    if (!m_scriptIds)
        m_scriptIds = std::make_shared<const std::vector<std::string>>(m_block->scriptIds());
    s->scriptIds = m_scriptIds;
    s->markers = m_markers.size();
    s->fingerprint = m_fingerprint.hex();
    s->intervalSoFar = intervalSoFar();
    for (int c = 0; c < m_machine->nrCpus(); ++c) {
        const CpuState& cs = m_machine->cpu(c);
        CpuSnapshot o;
        o.idle = cs.idle;
        o.running = cs.running;
        o.softirqPending = cs.softirqPending;
        o.doneListLen = m_block->blkCpu(c).done.size + m_block->blkCpu(c).doneBatch.size;
        o.callSingleLen = m_block->blkCpu(c).callSingleQueue.size;
        o.currentTask = cs.current;
        o.busy_ns = cs.busy;
        o.restartProfile = m_block->restart().profile().cpus()[static_cast<std::size_t>(c)];
        o.kernelDepth = m_machine->kernelPath(c, o.kernelPath);
        s->cpus.push_back(o);
    }
    for (const Hctx& h : m_block->hctxs()) {
        const int index = static_cast<int>(s->hctxs.size());
        HctxSnapshot o;
        o.dev = h.dev;
        o.index = h.index;
        o.vectorCpu = h.vectorCpu;
        o.dispatchLen = h.dispatch.size;
        o.schedLen = h.schedFifo.size;
        o.atDevice = h.atDevice;
        o.cqLen = h.cq.size;
        o.restart = m_block->restart().marked(index);
        o.tags = h.tags;
        o.tagsInUse = m_block->tags(h.tags).alloc().inUse();
        o.tagsHeld = h.tagUse.held;
        o.tagDepth = m_block->tags(h.tags).alloc().depth();
        s->hctxs.push_back(o);
    }
    std::size_t nTags = 0;
    for (const TagSet& set : m_block->tagSets())
        nTags = std::max(nTags, static_cast<std::size_t>(set.firstTags + set.nrHwQueues));
    s->tagMaps.resize(nTags);
    for (std::size_t t = 0; t < nTags; ++t) {
        const TagAllocator& a = m_block->tags(static_cast<int>(t)).alloc();
        if (a.depth() > 4096)
            continue;
        auto& map = s->tagMaps[t];
        map.resize(static_cast<std::size_t>(a.depth()));
        for (int tag = 0; tag < a.depth(); ++tag)
            map[static_cast<std::size_t>(tag)] = a.isSet(tag) ? kTagInUse : kTagFree;
        a.mapCaches(map, kTagLost);
    }
    // Where completing requests are: the CPU whose list holds them.
    std::vector<int> atCpu(m_block->poolSize(), -1);
    const auto mark = [&](const RqList& list, int cpu) {
        for (int rq = list.head; rq >= 0; rq = m_block->request(rq).next)
            atCpu[static_cast<std::size_t>(rq)] = cpu;
    };
    for (const Hctx& h : m_block->hctxs())
        mark(h.cq, h.vectorCpu);
    for (int c = 0; c < m_machine->nrCpus(); ++c) {
        const BlkCpu& b = m_block->blkCpu(c);
        mark(b.callSingleQueue, c);
        mark(b.csdBatch, c);
        mark(b.done, c);
        mark(b.doneBatch, c);
    }
    for (int i = 0; i < static_cast<int>(m_block->poolSize()); ++i) {
        const Request& r = m_block->request(i);
        if (r.state == RqState::Free)
            continue;
        const bool stuck = std::find(m_stuck.begin(), m_stuck.end(), i) != m_stuck.end();
        s->requests.push_back({ i, r.cpu, r.hctx, r.state, r.submitted.ns(), r.dispatched.ns(), stuck,
            atCpu[static_cast<std::size_t>(i)], r.script, r.tag });
    }
    const SchedRestart& restart = m_block->restart();
    for (std::size_t q = 0; q < restart.shape().queues.size(); ++q)
        s->queueRestartCounters.push_back(restart.queueCounter(static_cast<int>(q)));
    for (std::size_t t = 0; t < restart.shape().tagSets.size(); ++t)
        s->tagSetRestartCounters.push_back(restart.tagSetCounter(static_cast<int>(t)));
    s->stalled = m_stallDetected;
    s->firstStallNs = m_stallDetected ? m_firstStall.ns() : -1;
    std::lock_guard lock(m_snapshotMutex);
    m_snapshot = std::move(s);
}

std::shared_ptr<const Snapshot> Engine::snapshot() const
{
    std::lock_guard lock(m_snapshotMutex);
    return m_snapshot;
}

} // namespace blkmq
