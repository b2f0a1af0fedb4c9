#include "block/BlockLayer.h"

#include "block/CpuQueueMap.h"
#include "block/CompletionPolicy.h"
#include "block/DeviceModel.h"
#include "restart/RestartRegistry.h"
#include "tags/TagRegistry.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace blkmq {

BlockLayer::BlockLayer(Sim& sim, Machine& machine, const Scenario& scenario)
    : m_sim(&sim)
    , m_machine(&machine)
    , m_cpu(static_cast<std::size_t>(sim.topo.nrCpus()))
{
    m_ops = OpSet<BlockOp>(machine.addHandler(this));
    machine.setIrqHandler(IrqKind::DeviceVector, m_ops(BlockOp::HandleCq));
    machine.setIrqHandler(IrqKind::CallFunction, m_ops(BlockOp::CsdFlush));
    machine.setIrqHandler(IrqKind::Timer, m_ops(BlockOp::TimerComplete));
    machine.setIrqHandler(IrqKind::NicRx, m_ops(BlockOp::NapiSchedule));
    machine.setIrqHandler(IrqKind::Usb, m_ops(BlockOp::UsbIrq));
    machine.setIrqHandler(IrqKind::RdmaCq, m_ops(BlockOp::IbCqIrq));
    machine.setIrqHandler(IrqKind::AhciHba, m_ops(BlockOp::MtipIrq));
    machine.setSoftirqHandler(BLOCK_SOFTIRQ, m_ops(BlockOp::BlockSoftirq));
    machine.setSoftirqHandler(NET_RX_SOFTIRQ, m_ops(BlockOp::NetRxPoll));
    machine.setSoftirqHandler(IRQ_POLL_SOFTIRQ, m_ops(BlockOp::IrqPoll));
    const int nrCpus = sim.topo.nrCpus();
    for (int c = 0; c < nrCpus; ++c) {
        // kblockd is WQ_HIGHPRI: its workers run at nice -20.
        const int kworker = m_machine->createTask(TaskKind::Kworker, c, m_ops(BlockOp::KworkerStep, c), false);
        m_machine->task(kworker).weight = Task::kNiceMinus20Weight;
        m_cpu[static_cast<std::size_t>(c)].kblockd.reserve(16);
    }
    for (const auto& spec : scenario.devices) {
        RequestQueue q;
        q.spec = spec;
        q.model = &DeviceModel::of(spec.irqmode);
        q.nrHwQueues = spec.submit_queues;
        if (spec.cmd_issue_lock)
            q.cmdIssueLocks.resize(static_cast<std::size_t>(Mtip32xxPort::slotGroups(spec.hw_queue_depth)));
        q.channelFree.assign(static_cast<std::size_t>(spec.channels), SimTime(0));
        const int dev = static_cast<int>(m_queues.size());
        // "spread" vectors are managed interrupts; the queue map follows them or not.
        std::vector<int> managedVectorCpu;
        const std::vector<int> managedMap = spec.irq_affinity.empty()
            ? managedMapQueues(sim.topo, spec.submit_queues, managedVectorCpu)
            : std::vector<int>();
        const std::vector<int> map = spec.queue_map == QueueMap::Managed ? managedMap
            : spec.queue_map == QueueMap::Explicit                       ? spec.queue_of_cpu
                                                                         : blkMqMapQueues(sim.topo, spec.submit_queues);
        auto set
            = std::find_if(m_tagSets.begin(), m_tagSets.end(), [&](const TagSet& t) { return t.name == spec.tag_set; });
        if (set == m_tagSets.end()) {
            TagSet t;
            t.name = spec.tag_set;
            t.firstTags = static_cast<int>(m_tags.size());
            t.nrHwQueues = spec.submit_queues;
            const TagAllocatorInfo* allocator = TagRegistry::find(scenario.kernel.tags);
            assert(allocator && "kernel.tags is validated by the loader");
            t.tags.reserve(static_cast<std::size_t>(spec.submit_queues));
            // hctx->nr_ctx as v3.14's blk_mq_map_swqueue() counts it: a ctx for every possible CPU,
            // and blk_mq_update_queue_map() maps each offline one to queue 0 ("If the cpu isn't
            // online, the cpu is mapped to first hctx"), so hctx 0 counts them all.
            const int possible = std::max(scenario.possible_cpus, nrCpus);
            for (int i = 0; i < spec.submit_queues; ++i) {
                const int nrCtx
                    = static_cast<int>(std::count(map.begin(), map.end(), i)) + (i == 0 ? possible - nrCpus : 0);
                TagAllocatorArgs args { spec.hw_queue_depth, nrCtx, possible, scenario.kernel.tag_patches, sim.topo,
                    sim.costs, sim.rng };
                t.tags.emplace_back(sim, machine, allocator->make(args), DispatchWake::of(*this));
            }
            for (BlkMqTags& tags : t.tags) // the vector's buffer moves with the TagSet
                m_tags.push_back(&tags);
            m_tagSets.push_back(std::move(t));
            set = m_tagSets.end() - 1;
        }
        set->queues.push_back(dev);
        q.tagSet = static_cast<int>(set - m_tagSets.begin());
        q.firstHctx = static_cast<int>(m_hctxs.size());
        q.cpuToHctx.resize(static_cast<std::size_t>(nrCpus));
        for (int i = 0; i < spec.submit_queues; ++i) {
            Hctx h;
            h.dev = dev;
            h.index = i;
            h.tags = set->firstTags + i;
            h.tagUse.hctx = static_cast<int>(m_hctxs.size());
            for (int c = 0; c < nrCpus; ++c)
                if (map[static_cast<std::size_t>(c)] == i)
                    h.cpus.push_back(c);
            if (!spec.irq_affinity.empty())
                h.vectorCpu = spec.irq_affinity[static_cast<std::size_t>(i)];
            else if (!managedVectorCpu.empty())
                h.vectorCpu = managedVectorCpu[static_cast<std::size_t>(i)];
            else
                h.vectorCpu = h.cpus.empty() ? i % nrCpus : h.cpus.front();
            h.nrRequests = 2 * std::min(spec.hw_queue_depth, 128); // BLKDEV_MAX_RQ
            m_hctxs.push_back(std::move(h));
            const int vector = static_cast<int>(m_hctxs.size()) - 1;
            // Every vector gets its irq thread so threadirqs can be switched live.
            if (q.model->vectorPerHwQueue())
                m_machine->createIrqThread(m_hctxs.back().vectorCpu, vector);
        }
        for (int c = 0; c < nrCpus; ++c)
            q.cpuToHctx[static_cast<std::size_t>(c)] = q.firstHctx + map[static_cast<std::size_t>(c)];
        m_queues.push_back(std::move(q));
        m_queues.back().model->probe(*this, dev);
    }
    m_hctxLines.resize(m_hctxs.size());
    for (const TagSet& t : m_tagSets) {
        auto spec = std::find_if(
            scenario.tag_sets.begin(), scenario.tag_sets.end(), [&](const TagSetSpec& s) { return s.name == t.name; });
        const int permits = spec == scenario.tag_sets.end() ? 0 : spec->driver_permits;
        m_permits.emplace_back(permits, nrCpus, permits ? static_cast<int>(m_hctxs.size()) : 0);
    }
    for (Hctx& h : m_hctxs)
        h.tagUse.shared
            = m_tagSets[static_cast<std::size_t>(m_queues[static_cast<std::size_t>(h.dev)].tagSet)].queues.size() > 1;
    for (const auto& step : scenario.script)
        m_scriptIds.push_back(step.id);
    RestartShape shape;
    for (const Hctx& h : m_hctxs)
        shape.hctxs.push_back({ h.dev, h.index, h.tags, h.tagUse.shared });
    for (const RequestQueue& rq : m_queues)
        shape.queues.push_back({ rq.spec.name, rq.firstHctx, rq.nrHwQueues, rq.tagSet });
    for (const TagSet& t : m_tagSets)
        shape.tagSets.push_back({ t.name, t.queues });
    m_restart = Cloned<SchedRestart>(
        std::make_unique<SchedRestart>(sim, machine, std::move(shape), static_cast<RestartHost&>(*this)));
    setKernel(scenario.kernel);
    m_pool.reserve(1024);
    m_freeRqs.reserve(1024);
}

BlockLayer::BlockLayer(const BlockLayer& o, Sim& sim, Machine& machine)
    : BlockLayer(o)
{
    m_sim = &sim;
    m_machine = &machine;
    m_endIo = nullptr;
    machine.replaceHandler(&o, this);
    m_tags.clear(); // by global index: the sets' tags in order, as the constructor made them
    for (TagSet& set : m_tagSets)
        for (BlkMqTags& tags : set.tags) {
            tags.rebind(sim, machine, DispatchWake::of(*this),
                [this](int h) -> TagUser& { return m_hctxs[static_cast<std::size_t>(h)].tagUse; });
            m_tags.push_back(&tags);
        }
    m_restart->rebind(*o.m_restart, sim, machine, *this);
}

void BlockLayer::setKernel(const KernelSpec& k)
{
    m_patches = k.patches;
    const RestartVariant* restart = RestartRegistry::find(k.restart);
    assert(restart && "kernel.restart is validated by the loader");
    if (restart)
        m_restart->setVariant(*restart);
    m_dispatchMode = k.dispatch;
    for (BlkMqTags* tags : m_tags)
        tags->setFairSharing(k.tag_fair_share, k.tag_idle);
}

int BlockLayer::findQueue(const std::string& name) const
{
    for (std::size_t i = 0; i < m_queues.size(); ++i)
        if (m_queues[i].spec.name == name)
            return static_cast<int>(i);
    return -1;
}

// The pool only grows up to the run's peak number of live requests.
int BlockLayer::growPool()
{
    m_pool.emplace_back();
    return static_cast<int>(m_pool.size()) - 1;
}

// blk_mq_get_driver_tag(): block/BlkMqTags does the work (the put is on the completion side).
int BlockLayer::getDriverTag(int cpu, int h, TagAlloc* progress)
{
    Hctx& hctx = m_hctxs[static_cast<std::size_t>(h)];
    return m_tags[static_cast<std::size_t>(hctx.tags)]->get(cpu, hctx.tagUse, progress);
}

void BlockLayer::idleTagUsers()
{
    for (BlkMqTags* tags : m_tags)
        tags->idleUsers();
}

void BlockLayer::setTagOwnPath(bool on)
{
    for (BlkMqTags* tags : m_tags)
        tags->setOwnPath(on);
}

int BlockLayer::getRequest(int cpu, int dev, int task, int bytes, TagAlloc* progress, bool woken)
{
    const RequestQueue& q = m_queues[static_cast<std::size_t>(dev)];
    const int h = q.cpuToHctx[static_cast<std::size_t>(cpu)];
    Hctx& hctx = m_hctxs[static_cast<std::size_t>(h)];
    int tag = -1;
    if (q.spec.scheduler != SchedulerKind::None) {
        if (hctx.schedInUse >= hctx.nrRequests) {
            if (task >= 0)
                hctx.schedWaiters.push_back(task);
            ++m_sim->counters.tag_sleeps;
            return -1;
        }
        ++hctx.schedInUse;
    } else {
        tag = getDriverTag(cpu, h, progress);
        if (tag == kTagInProgress)
            return kTagInProgress;
        if (tag >= 0 && woken)
            tag = m_tags[static_cast<std::size_t>(hctx.tags)]->afterWait(cpu, tag, hctx.tagUse);
        if (tag < 0) {
            if (task >= 0)
                m_tags[static_cast<std::size_t>(hctx.tags)]->sleep(task, hctx.tagUse);
            ++m_sim->counters.tag_sleeps;
            return -1;
        }
    }
    writeTagsLine(h, cpu); // data->hctx->queued++
    const int rq = allocRq();
    Request& r = request(rq);
    r.tag = tag;
    r.schedSlot = q.spec.scheduler != SchedulerKind::None;
    r.hctx = h;
    r.cpu = static_cast<std::int16_t>(cpu);
    r.dev = static_cast<std::int16_t>(dev);
    r.bytes = bytes;
    r.submitted = m_machine->opNow();
    ++m_inFlight;
    ++m_sim->counters.submitted;
    return rq;
}

void BlockLayer::submit(int cpu, int rq, bool bypassScheduler, bool runQueue)
{
    Request& r = request(rq);
    const int h = r.hctx;
    Hctx& hctx = m_hctxs[static_cast<std::size_t>(h)];
    RequestQueue& q = m_queues[static_cast<std::size_t>(r.dev)];
    r.waitSince = m_machine->opNow();
    m_sim->trace(TraceKind::Submit, cpu, rq, h, r.script);
    if (bypassScheduler || q.spec.scheduler != SchedulerKind::None) {
        // blk_mq_request_bypass_insert() / blk_mq_sched_insert_request(..., async = true)
        if (bypassScheduler) {
            r.state = RqState::Dispatch;
            hctx.dispatch.pushBack(m_pool, rq);
            stateLine(hctx).write(cpu); // under hctx->lock
        } else {
            m_machine->charge(m_sim->costs.sched_insert_ns);
            r.state = RqState::Sched;
            hctx.schedFifo.pushBack(m_pool, rq);
            ++q.schedQueued;
        }
        if (runQueue)
            runHwQueueAsync(cpu, h);
    } else if (!hctx.dispatch.empty()) {
        // No scheduler, but requests wait on hctx->dispatch: __blk_mq_insert_request() into the
        // software queue (schedFifo stands for the ctx lists of the hctx), then run the queue.
        r.state = RqState::Sched;
        hctx.schedFifo.pushBack(m_pool, rq);
        if (runQueue)
            dispatch(cpu, h);
    } else if (hctx.stopped) {
        // blk_mq_try_issue_directly() on a stopped hctx: insert into the software queue, no run.
        r.state = RqState::Sched;
        hctx.schedFifo.pushBack(m_pool, rq);
    } else {
        RqList one;
        one.pushBack(m_pool, rq);
        dispatchList(cpu, h, one);
    }
}

void BlockLayer::runQueue(int cpu, int dev)
{
    dispatch(cpu, m_queues[static_cast<std::size_t>(dev)].cpuToHctx[static_cast<std::size_t>(cpu)]);
}

// blk_mq_sched_dispatch_requests(): requests on hctx->dispatch go first and
// mark the hctx RESTART; whether the scheduler's requests (or, without a
// scheduler, the software queues') follow depends on the dispatch mode.
void BlockLayer::dispatch(int cpu, int h)
{
    Hctx& hctx = m_hctxs[static_cast<std::size_t>(h)];
    if (hctx.stopped)
        return;
    writeTagsLine(h, cpu); // hctx->run++
    ++hctx.run;
    const bool hasSched = m_queues[static_cast<std::size_t>(hctx.dev)].spec.scheduler != SchedulerKind::None;
    if (!hctx.dispatch.empty()) {
        RqList list = hctx.dispatch.take();
        stateLine(hctx).write(cpu); // spin_lock(&hctx->lock); list_splice_init(&hctx->dispatch, ...)
        m_restart->mark(h);
        const Dispatched d = dispatchList(cpu, h, list);
        // v4.11 to v4.14 ask the scheduler if it returned false ("we did have work but weren't able to
        // make progress"), v4.15 if it returned true; v4.11 to v4.14 without a scheduler never.
        const bool pull = m_dispatchMode == DispatchMode::V4_11 ? !madeProgress(d) && hasSched : madeProgress(d);
        if (!pull)
            return;
    } else if (!hasSched) {
        // blk_mq_flush_busy_ctxs(): every software queue at once.
        RqList list = hctx.schedFifo.take();
        dispatchList(cpu, h, list);
        return;
    }
    // One request at a time: the scheduler's (blk_mq_do_dispatch_sched in v4.15), or the software
    // queues' (blk_mq_do_dispatch_ctx, v4.15, here only after hctx->dispatch made progress).
    if (hasSched) {
        // dd_dispatch_request(): the queue's oldest request, whichever hctx it came through; it is
        // issued on its own hctx (blk_mq_get_driver_tag() takes rq->mq_hctx's tags).
        RequestQueue& q = m_queues[static_cast<std::size_t>(hctx.dev)];
        while (q.schedQueued > 0) {
            m_machine->charge(m_sim->costs.sched_dispatch_ns);
            Hctx& from = m_hctxs[static_cast<std::size_t>(schedOldest(q))];
            const int rq = from.schedFifo.popFront(m_pool);
            --q.schedQueued;
            RqList one;
            one.pushBack(m_pool, rq);
            if (!madeProgress(dispatchList(cpu, request(rq).hctx, one)))
                break;
        }
        return;
    }
    while (!hctx.schedFifo.empty()) {
        RqList one;
        one.pushBack(m_pool, hctx.schedFifo.popFront(m_pool));
        if (!madeProgress(dispatchList(cpu, h, one)))
            break;
    }
}

// The hctx whose scheduler FIFO holds the queue's oldest request (the lower index on a tie). With
// one hctx per queue in use, as every preset with pinned jobs has, that is the one hctx.
int BlockLayer::schedOldest(const RequestQueue& q) const
{
    int best = -1;
    SimTime oldest;
    for (int h = q.firstHctx; h < q.firstHctx + q.nrHwQueues; ++h) {
        const RqList& fifo = m_hctxs[static_cast<std::size_t>(h)].schedFifo;
        if (fifo.empty())
            continue;
        const SimTime since = request(fifo.head).waitSince;
        if (best < 0 || since < oldest) {
            best = h;
            oldest = since;
        }
    }
    return best;
}

// What blk_mq_dispatch_rq_list() returns: whether it issued anything (and,
// from 5e3d02bbafad, did not end with BLK_STS_RESOURCE).
bool BlockLayer::madeProgress(const Dispatched& d) const
{
    if (m_dispatchMode == DispatchMode::V4_11)
        return d.queued > 0;
    return d.queued > 0 && d.last != Issue::Busy;
}

// The first failed driver tag of a dispatch. v4.11 to v4.15
// (blk_mq_dispatch_wait_add): park the hctx on one of its tags' wait queues
// unless TAG_WAITING says it is parked already, and try the tag once more.
// v4.16 on (blk_mq_mark_tag_wait, with the own-hctx restart): without shared
// tags RESTART is enough; with them the hctx waits on a wait queue, and leaves
// it again if the retried tag is got.
bool BlockLayer::tagWait(int h)
{
    Hctx& hctx = m_hctxs[static_cast<std::size_t>(h)];
    BlkMqTags& tags = *m_tags[static_cast<std::size_t>(hctx.tags)];
    if (m_restart->variant().tagWait() == RestartVariant::TagWait::MarkTagWait && !hctx.tagUse.shared) {
        m_restart->mark(h, SchedRestart::MarkReason::NoTag);
        return true;
    }
    const bool parked = tags.park(hctx.tagUse);
    if (parked) { // TAG_WAITING in the state, dispatch_wait on a wait queue
        stateLine(hctx).write(m_machine->executingCpu());
        writeTagsLine(h, m_machine->executingCpu());
    }
    return parked;
}

// blk_mq_dispatch_wake(): off the wait queue, TAG_WAITING cleared, and the hctx is run.
void BlockLayer::dispatchWake(int cpu, int h)
{
    Hctx& hctx = m_hctxs[static_cast<std::size_t>(h)];
    hctx.tagUse.parked = false;
    stateLine(hctx).write(m_machine->executingCpu());
    writeTagsLine(h, m_machine->executingCpu());
    runHwQueueAsync(cpu, h);
}

// blk_mq_dispatch_rq_list(): issue in order; on the first failure the rest
// goes back to the head of hctx->dispatch, and the hctx is rerun at once
// unless RESTART or a tag wait will rerun it.
BlockLayer::Dispatched BlockLayer::dispatchList(int cpu, int h, RqList& list)
{
    Hctx& hctx = m_hctxs[static_cast<std::size_t>(h)];
    Dispatched d;
    while (!list.empty()) {
        const int rq = list.popFront(m_pool);
        Issue result = issue(cpu, rq);
        if (result == Issue::NoTag && tagWait(h)) {
            result = issue(cpu, rq); // "a tag was freed in the window"
            if (result == Issue::Ok && m_restart->variant().tagWait() == RestartVariant::TagWait::MarkTagWait
                && hctx.tagUse.parked)
                m_tags[static_cast<std::size_t>(hctx.tags)]->unpark(hctx.tagUse);
        }
        if (result == Issue::Ok) {
            ++d.queued;
            continue;
        }
        d.last = result;
        RqList rest;
        rest.pushBack(m_pool, rq);
        while (!list.empty())
            rest.pushBack(m_pool, list.popFront(m_pool));
        const SimTime now = m_machine->opNow();
        for (int i = rest.head; i >= 0; i = request(i).next) {
            if (request(i).state != RqState::Dispatch)
                request(i).waitSince = now;
            request(i).state = RqState::Dispatch;
            ++m_sim->counters.requeued;
            m_sim->trace(TraceKind::Requeue, cpu, i, h);
        }
        hctx.dispatch.spliceFront(m_pool, rest);
        stateLine(hctx).write(cpu); // under hctx->lock
        writeTagsLine(h, cpu); // hctx->dispatched[]++
        const bool marked = m_restart->marked(h);
        const bool parked = hctx.tagUse.parked;
        const bool rerun = m_dispatchMode == DispatchMode::V4_11
            ? !marked && !parked
            : !marked || (result == Issue::NoTag && !parked && hctx.tagUse.shared);
        if (rerun)
            runHwQueueAsync(cpu, h);
        return d;
    }
    if (d.queued > 0)
        writeTagsLine(h, cpu); // hctx->dispatched[]++
    return d;
}

BlockLayer::Issue BlockLayer::issue(int cpu, int rq)
{
    Request& r = request(rq);
    Hctx& hctx = m_hctxs[static_cast<std::size_t>(r.hctx)];
    if (r.tag < 0) {
        r.tag = getDriverTag(cpu, r.hctx);
        if (r.tag < 0)
            return Issue::NoTag;
    }
    m_machine->charge(m_sim->costs.queue_rq_ns);
    RequestQueue& q = m_queues[static_cast<std::size_t>(r.dev)];
    if (q.spec.queue_limit && hctx.atDevice >= q.spec.queue_limit) {
        ++m_sim->counters.dispatch_busy;
        return Issue::Busy;
    }
    DriverPermits& permits = m_permits[static_cast<std::size_t>(q.tagSet)];
    if (permits.enabled() && !r.permit) {
        m_machine->charge(m_sim->costs.tag_get_ns);
        if (!permits.get()) {
            // ibnbd_clt_dev_kick_mq_queue(IBNBD_DELAY_IFBUSY): stop the hctx and wait on this CPU's
            // requeue list. A failed get means every permit is in flight, so the list is always taken.
            hctx.stopped = true;
            stateLine(hctx).write(cpu);
            permits.addToRequeue(cpu, r.hctx);
            ++m_sim->counters.dispatch_busy;
            return Issue::Busy;
        }
        r.permit = true;
    }
    if (!q.cmdIssueLocks.empty()) {
        // mtip_issue_ncq_command(): spin_lock(&port->cmd_issue_lock[slot >> 5]), write SACT and CI, unlock.
        Spinlock& lock = q.cmdIssueLocks[static_cast<std::size_t>(Mtip32xxPort::slotGroup(r.tag))];
        const std::int64_t asked = m_machine->opNow().ns();
        std::int64_t spin = 0;
        const std::int64_t got = lock.lock(cpu, asked, m_sim->topo, m_sim->costs, spin);
        const std::int64_t held = 2 * m_sim->costs.mmio_write_ns;
        lock.unlock(got + held);
        m_machine->charge(got - asked + held);
        m_machine->lockTime(cpu, LockCaller::QueueRq, got - asked);
    }
    r.dispatched = m_machine->opNow();
    r.state = RqState::AtDevice;
    ++hctx.atDevice;
    m_sim->trace(TraceKind::Dispatch, cpu, rq, r.hctx);
    startDevice(cpu, rq);
    return Issue::Ok;
}

bool BlockLayer::hasPending(int h) const
{
    // blk_mq_hctx_has_pending(): hctx->dispatch, the software queues, or the scheduler's has_work,
    // which for mq-deadline is the whole queue's (dd_has_work()).
    const Hctx& hctx = m_hctxs[static_cast<std::size_t>(h)];
    const RequestQueue& q = m_queues[static_cast<std::size_t>(hctx.dev)];
    return !hctx.dispatch.empty()
        || (q.spec.scheduler != SchedulerKind::None ? q.schedQueued > 0 : !hctx.schedFifo.empty());
}

// blk_mq_run_hw_queue(hctx, async = true): kblockd work on one of the hctx's CPUs.
void BlockLayer::runHwQueueAsync(int fromCpu, int h)
{
    if (m_hctxs[static_cast<std::size_t>(h)].stopped)
        return; // __blk_mq_delay_run_hw_queue(): blk_mq_hctx_stopped()
    queueRunWork(fromCpu, h);
}

// blk_mq_delay_queue(hctx, 0), v4.14: stop the hctx, mark it START_ON_RUN and queue its run work,
// which clears both and runs it.
void BlockLayer::delayQueue(int fromCpu, int h)
{
    Hctx& hctx = m_hctxs[static_cast<std::size_t>(h)];
    hctx.stopped = true;
    hctx.startOnRun = true;
    stateLine(hctx).write(fromCpu);
    queueRunWork(fromCpu, h);
}

void BlockLayer::queueRunWork(int fromCpu, int h)
{
    Hctx& hctx = m_hctxs[static_cast<std::size_t>(h)];
    if (hctx.runQueued)
        return;
    hctx.runQueued = true;
    int target = hctx.vectorCpu;
    if (!hctx.cpus.empty()) {
        target = hctx.cpus[static_cast<std::size_t>(hctx.nextRunCpu)];
        hctx.nextRunCpu = (hctx.nextRunCpu + 1) % static_cast<int>(hctx.cpus.size());
    }
    m_cpu[static_cast<std::size_t>(target)].kblockd.push_back(h);
    m_machine->wakeTask(m_machine->cpu(target).kworker, fromCpu < 0 ? m_machine->executingCpu() : fromCpu);
}

OpName BlockLayer::opName(std::uint8_t code) const
{
    switch (static_cast<BlockOp>(code)) {
    case BlockOp::HandleCq:
        return { "nvme_irq → nvme_process_cq → blk_mq_complete_request" };
    case BlockOp::TimerComplete:
        return { "hrtimer_interrupt → null_cmd_timer_expired → blk_mq_complete_request" };
    case BlockOp::CsdFlush:
        return { "flush_smp_call_function_queue" };
    case BlockOp::CsdRunOne:
        return { "flush_smp_call_function_queue → __blk_mq_complete_request_remote → ->complete" };
    case BlockOp::BlockSoftirq:
        return { "__do_softirq → blk_done_softirq" };
    case BlockOp::CompleteFromBatch:
        return { "__do_softirq → blk_done_softirq → ->complete" };
    case BlockOp::KworkerStep:
        return { "worker_thread" };
    case BlockOp::RunHctx:
        return { "worker_thread → blk_mq_run_work_fn → __blk_mq_run_hw_queue" };
    case BlockOp::CsdRaiseBlock:
        return { "flush_smp_call_function_queue → raise_softirq(BLOCK_SOFTIRQ)" };
    case BlockOp::NapiSchedule:
        return { "nic_irq → napi_schedule" };
    case BlockOp::NetRxPoll:
        return { "__do_softirq → net_rx_action → napi_poll → ->complete" };
    case BlockOp::UsbIrq:
        return { "usb_hcd_irq → wake_up_process(usb-storage)" };
    case BlockOp::IbCqIrq:
        return { "ib_cq_completion_softirq → irq_poll_sched" };
    case BlockOp::IrqPoll:
        return { "__do_softirq → irq_poll_softirq → ib_poll_handler → ->done" };
    case BlockOp::UsbStep:
        return { "usb_stor_control_thread" };
    case BlockOp::MtipIrq:
        return { "mtip_irq_handler → mtip_handle_irq" };
    case BlockOp::MtipSdbfx:
        return { "mtip_workq_sdbfx → mtip_async_complete → blk_mq_end_io" };
    case BlockOp::MtipGroupDone:
        return { "mtip_workq_sdbfx → writel(HOST_IRQ_STAT)" };
    case BlockOp::MtipWorker:
        return { "worker_thread → mtip_workq_sdbf" };
    }
    return {};
}

void BlockLayer::perform(int cpu, Op op, OpStack& stack)
{
    BlkCpu& b = m_cpu[static_cast<std::size_t>(cpu)];
    switch (OpSet<BlockOp>::code(op)) {
    case BlockOp::KworkerStep:
        if (!b.kblockd.empty()) {
            const int h = b.kblockd.pop_front();
            stack.push_back(m_ops(BlockOp::KworkerStep, cpu));
            stack.push_back(m_ops(BlockOp::RunHctx, h));
        } else {
            m_machine->sleepTask(m_machine->currentTask());
        }
        break;
    case BlockOp::RunHctx: { // blk_mq_run_work_fn()
        Hctx& hctx = m_hctxs[static_cast<std::size_t>(op.a)];
        hctx.runQueued = false;
        if (hctx.stopped) {
            if (!hctx.startOnRun)
                break;
            hctx.stopped = hctx.startOnRun = false;
            stateLine(hctx).write(cpu);
        }
        dispatch(cpu, op.a);
        break;
    }
    default:
        performCompletionOp(cpu, op, stack);
    }
}

} // namespace blkmq
