// BlockLayer, completion side: handing a request to its device model (block/DeviceModel.h), blk_mq_complete_request()
// with the 2020 series' patches, the IPI and BLOCK softirq paths, NAPI
// receive, the usb-storage-like driver thread, polling, ->complete, and the free.
#include "block/BlockLayer.h"

#include "block/DeviceModel.h"

#include <cassert>
#include <cmath>

namespace blkmq {

namespace {
constexpr int kNapiBudget = 64; // packets per NAPI poll (netdev weight)
constexpr int kIbPollBudget = 256; // CQEs per ib_poll_handler() (IB_POLL_BUDGET_IRQ, v4.14)
}

std::int64_t BlockLayer::serviceTime(int dev)
{
    const CompletionDist& d = m_queues[static_cast<std::size_t>(dev)].spec.completion;
    if (m_sim->choices.on)
        return choiceServiceTime(d);
    switch (d.kind) {
    case CompletionDist::Kind::Uniform:
        return d.a + static_cast<std::int64_t>(m_sim->rng.below(static_cast<std::uint64_t>(d.b - d.a + 1)));
    case CompletionDist::Kind::Exponential:
        return std::llround(m_sim->rng.exponential(static_cast<double>(d.a)));
    case CompletionDist::Kind::Fixed:
        break;
    }
    return d.a;
}

SimTime BlockLayer::deviceFinish(int dev)
{
    const SimTime now = m_machine->opNow();
    const std::int64_t ns = serviceTime(dev);
    RequestQueue& q = m_queues[static_cast<std::size_t>(dev)];
    if (q.channelFree.empty())
        return now + SimTime(ns);
    // A random read's address picks its channel; the channel serves its commands one after another.
    SimTime& free = q.channelFree[static_cast<std::size_t>(m_sim->rng.below(q.channelFree.size()))];
    free = std::max(free, now) + SimTime(ns);
    return free;
}

// A service time as a choice point: one of the distribution's points (sim/Choices.h).
std::int64_t BlockLayer::choiceServiceTime(const CompletionDist& d)
{
    Choices& c = m_sim->choices;
    const int n = c.latencyPoints;
    std::int64_t ns = d.a;
    switch (d.kind) {
    case CompletionDist::Kind::Uniform:
        if (n < 2 || d.a == d.b)
            return Choices::uniformPoint(d.a, d.b, 0, 1);
        ns = Choices::uniformPoint(d.a, d.b, c.take(ChoiceKind::Latency, n), n);
        break;
    case CompletionDist::Kind::Exponential:
        if (n < 2)
            return Choices::exponentialPoint(static_cast<double>(d.a), 0, 1);
        ns = Choices::exponentialPoint(static_cast<double>(d.a), c.take(ChoiceKind::Latency, n), n);
        break;
    case CompletionDist::Kind::Fixed:
        return d.a;
    }
    c.note(ns);
    return ns;
}

void BlockLayer::startDevice(int cpu, int rq)
{
    const Request& r = request(rq);
    if (r.hold && !r.released)
        return; // the script completes it
    m_queues[static_cast<std::size_t>(r.dev)].model->queueRq(*this, cpu, rq);
}

void BlockLayer::release(int rq)
{
    Request& r = request(rq);
    const bool wasHeld = r.hold && !r.released;
    r.released = true;
    if (!wasHeld || r.state != RqState::AtDevice)
        return; // it starts normally once it reaches the device
    m_queues[static_cast<std::size_t>(r.dev)].model->release(*this, rq);
}

void BlockLayer::onDeviceDone(int rq)
{
    Request& r = request(rq);
    Hctx& hctx = m_hctxs[static_cast<std::size_t>(r.hctx)];
    --hctx.atDevice;
    r.state = RqState::Complete; // the device is done; the completion path has it now
    m_sim->trace(TraceKind::DeviceDone, hctx.vectorCpu, rq, r.hctx);
    m_queues[static_cast<std::size_t>(r.dev)].model->done(*this, rq);
}

int BlockLayer::poll(int cpu, int dev) { return m_queues[static_cast<std::size_t>(dev)].model->poll(*this, cpu, dev); }

void BlockLayer::netPacket(int cpu, std::int64_t costNs)
{
    BlkCpu& b = m_cpu[static_cast<std::size_t>(cpu)];
    b.rx.loadCost = costNs;
    b.rx.entries.push_back(-1);
    raiseRx(cpu);
}

void BlockLayer::raiseRx(int cpu)
{
    BlkCpu& b = m_cpu[static_cast<std::size_t>(cpu)];
    if (b.rx.polling)
        return; // NAPI is polling: the NIC interrupt stays masked
    b.rx.polling = true;
    m_machine->raiseIrq(cpu, IrqKind::NicRx, cpu, m_sim->now + SimTime(m_sim->costs.irq_delivery_ns));
}

// One entry of a softirq poll, one per action (op.a = budget left, 0 = a new poll). The next
// entry's poll goes under what this entry's completion pushes (a restart walk). A drained queue
// turns its interrupt back on (napi_complete_done, irq_poll_complete + ib_req_notify_cq); a spent
// budget raises the softirq again.
void BlockLayer::pollEntry(int cpu, Op op, OpStack& stack, PollQueue& q, int budget, int softirq, std::int64_t entryNs)
{
    if (op.a > 0)
        budget = op.a;
    if (q.entries.empty()) {
        q.polling = false;
        return;
    }
    const int rq = q.entries.pop_front();
    const bool more = !q.entries.empty();
    if (more && budget > 1) {
        op.a = budget - 1;
        stack.push_back(op);
    }
    if (rq < 0) {
        m_machine->charge(q.loadCost);
    } else {
        m_machine->charge(entryNs);
        blkMqCompleteRequest(cpu, rq);
    }
    if (!more)
        q.polling = false;
    else if (budget <= 1)
        m_machine->__raise_softirq_irqoff(cpu, softirq);
}

void BlockLayer::blkMqCompleteRequest(int cpu, int rq)
{
    Request& r = request(rq);
    r.state = RqState::Complete;
    r.completeCalled = m_machine->opNow();
    r.completeCpu = static_cast<std::int16_t>(cpu);
    if (!completeRemote(cpu, rq))
        completeRq(cpu, rq);
}

// blk_mq_complete_request_remote(), v5.10 plus the switched-on patches.
// Returns false when the caller completes the request right here.
bool BlockLayer::completeRemote(int cpu, int rq)
{
    Request& r = request(rq);
    const RequestQueue& q = m_queues[static_cast<std::size_t>(r.dev)];
    if (r.polled)
        return false;
    if (m_patches.singleCtxLocal && m_hctxs[static_cast<std::size_t>(r.hctx)].cpus.size() == 1)
        return false; // rq->mq_hctx->nr_ctx == 1: pointless to redirect
    if (m_patches.processDirect && !m_machine->in_interrupt(cpu) && m_machine->context() != ExecContext::Hardirq)
        return false; // Christoph Hellwig: from process context just call ->complete
    if (CompletionPolicy::needIpi(m_sim->topo, m_patches, m_machine->threadirqs(), cpu, r.cpu, q.spec.rq_affinity)) {
        ++m_sim->counters.remote;
        r.redirected = true;
        if (m_patches.llist) {
            // blk_mq_complete_send_ipi(): the IPI only if the target's list was empty
            if (pushDone(cpu, r.cpu, rq))
                sendCompletionIpi(cpu, r.cpu, -1);
        } else {
            sendCompletionIpi(cpu, r.cpu, rq);
        }
        return true;
    }
    if (q.nrHwQueues > 1)
        return false;
    completeLocalSoftirq(cpu, rq);
    return true;
}

// smp_call_function_single_async() with the request's csd (rq >= 0) or, for
// complete-llist, the target CPU's blk_cpu_csd (rq = -1).
void BlockLayer::sendCompletionIpi(int cpu, int target, int rq)
{
    BlkCpu& t = m_cpu[static_cast<std::size_t>(target)];
    const bool wasEmpty = t.callSingleQueue.empty() && !t.blockCsdQueued;
    if (rq < 0) {
        if (t.blockCsdQueued)
            return; // csd still in flight: -EBUSY, its IPI is on the way
        t.blockCsdQueued = true;
    } else {
        t.callSingleQueue.pushBack(m_pool, rq);
    }
    touchListHead(t.callSingleOwner, cpu);
    if (!wasEmpty)
        return; // the target's queue was not empty: its IPI is on the way
    m_machine->charge(m_sim->costs.ipi_send_ns);
    ++m_sim->counters.ipis;
    m_sim->trace(TraceKind::IpiSend, cpu, rq, target);
    m_machine->raiseIrq(target, IrqKind::CallFunction, 0,
        m_machine->opNow() + SimTime(m_sim->costs.ipiLatency(m_sim->topo, cpu, target)));
}

// Moving a list head's cacheline to the CPU that writes it.
void BlockLayer::touchListHead(int& owner, int cpu)
{
    if (owner >= 0 && owner != cpu)
        m_machine->charge(m_sim->costs.cacheline(m_sim->topo, owner, cpu));
    owner = cpu;
}

// Adds to `target`'s blk_cpu_done; true if the list was empty.
bool BlockLayer::pushDone(int cpu, int target, int rq)
{
    BlkCpu& t = m_cpu[static_cast<std::size_t>(target)];
    const bool wasEmpty = t.done.empty();
    t.done.pushBack(m_pool, rq);
    touchListHead(t.doneOwner, cpu);
    m_sim->trace(TraceKind::DoneListAdd, cpu, rq, target);
    return wasEmpty;
}

// The single-queue path: complete through this CPU's BLOCK softirq.
void BlockLayer::completeLocalSoftirq(int cpu, int rq)
{
    const bool processContext = !m_machine->in_interrupt(cpu) && m_machine->context() != ExecContext::Hardirq;
    const bool bh = m_patches.localBh && processContext;
    if (bh)
        m_machine->localBhDisable(cpu);
    if (m_patches.llist) {
        // preempt_disable(); llist_add(); raise_softirq() if it was empty; preempt_enable()
        if (pushDone(cpu, cpu, rq))
            m_machine->raise_softirq(cpu, BLOCK_SOFTIRQ);
    } else {
        triggerSoftirq(cpu, rq);
    }
    if (bh)
        m_machine->localBhEnable(cpu); // the softirq runs here, in this task
}

// blk_mq_trigger_softirq(): irqs off, append to blk_cpu_done, raise if it was empty.
void BlockLayer::triggerSoftirq(int cpu, int rq)
{
    if (pushDone(cpu, cpu, rq))
        m_machine->raise_softirq_irqoff(cpu, BLOCK_SOFTIRQ);
}

void BlockLayer::completeRq(int cpu, int rq)
{
    Request& r = request(rq);
    if (r.permit) { // ibnbd_clt_rdma_ev(): ibnbd_put_tag() before blk_mq_end_request()
        r.permit = false;
        m_machine->charge(m_sim->costs.tag_put_ns);
        m_permits[static_cast<std::size_t>(m_queues[static_cast<std::size_t>(r.dev)].tagSet)].put(
            cpu, [&](int h) { delayQueue(cpu, h); });
    }
    m_machine->charge(m_sim->costs.complete_ns);
    if (cpu != r.cpu)
        m_machine->charge(m_sim->costs.rq_cachelines * m_sim->costs.cacheline(m_sim->topo, r.cpu, cpu));
    ++m_sim->counters.complete_by_context[static_cast<int>(m_machine->context())];
    const SimTime now = m_machine->opNow();
    m_sim->trace(TraceKind::Complete, cpu, rq, static_cast<int>(m_machine->context()));
    m_clat.record((now - r.dispatched).ns());
    if (r.completeCalled.ns() >= 0)
        m_completionDelay.record((now - r.completeCalled).ns());
    ++m_sim->counters.completed;
    m_sim->counters.completed_redirected += r.redirected ? 1 : 0;
    m_sim->counters.bytes += static_cast<std::uint64_t>(r.bytes);
    if (m_endIo)
        m_endIo->endIo(cpu, r);
    freeRequest(cpu, rq);
}

// blk_mq_free_request(), from __blk_mq_end_request(): the driver tag back, then the restart.
void BlockLayer::freeRequest(int cpu, int rq)
{
    Request& r = request(rq);
    const int h = r.hctx;
    Hctx& hctx = m_hctxs[static_cast<std::size_t>(h)];
    if (r.tag >= 0)
        putDriverTag(cpu, rq);
    if (r.schedSlot) {
        --hctx.schedInUse;
        if (!hctx.schedWaiters.empty()) {
            const int t = hctx.schedWaiters.front();
            hctx.schedWaiters.erase(hctx.schedWaiters.begin());
            m_machine->charge(m_sim->costs.wakeup_ns);
            m_machine->wakeTask(t, cpu);
        }
    }
    r.state = RqState::Free;
    --m_inFlight;
    m_freeRqs.push_back(rq);
    m_restart->onFree(h, { rq, r.script, r.job });
}

// blk_mq_put_driver_tag(): block/BlkMqTags does the work.
void BlockLayer::putDriverTag(int cpu, int rq)
{
    Request& r = request(rq);
    Hctx& hctx = m_hctxs[static_cast<std::size_t>(r.hctx)];
    const int tag = r.tag;
    r.tag = -1;
    m_tags[static_cast<std::size_t>(hctx.tags)]->put(cpu, tag, r.cpu, hctx.tagUse);
}

void BlockLayer::performCompletionOp(int cpu, Op op, OpStack& stack)
{
    BlkCpu& b = m_cpu[static_cast<std::size_t>(cpu)];
    switch (OpSet<BlockOp>::code(op)) {
    case BlockOp::HandleCq: { // nvme_irq(): drain the completion queue
        Hctx& hctx = m_hctxs[static_cast<std::size_t>(op.a)];
        if (hctx.cq.empty()) {
            hctx.irqRaised = false;
            break;
        }
        const int rq = hctx.cq.popFront(m_pool);
        m_machine->charge(m_sim->costs.cqe_ns);
        // The next CQE goes under what this completion pushes (a restart walk): the kernel
        // returns from blk_mq_sched_restart() before it looks at the next one.
        const bool more = !hctx.cq.empty();
        if (more)
            stack.push_back(op);
        blkMqCompleteRequest(cpu, rq);
        if (!more)
            hctx.irqRaised = false;
        break;
    }
    case BlockOp::TimerComplete:
        --m_hctxs[static_cast<std::size_t>(request(op.a).hctx)].atDevice;
        completeRq(cpu, op.a);
        break;
    case BlockOp::CsdFlush: { // flush_smp_call_function_queue(): take the whole queue
        RqList taken = b.callSingleQueue.take();
        while (!taken.empty())
            b.csdBatch.pushBack(m_pool, taken.popFront(m_pool));
        touchListHead(b.callSingleOwner, cpu);
        if (b.blockCsdQueued) {
            b.blockCsdQueued = false;
            stack.push_back(m_ops(BlockOp::CsdRaiseBlock, 0));
        }
        if (!b.csdBatch.empty())
            stack.push_back(m_ops(BlockOp::CsdRunOne, 0));
        break;
    }
    case BlockOp::CsdRunOne: { // __blk_mq_complete_request_remote() for one request
        const int rq = b.csdBatch.popFront(m_pool);
        m_machine->charge(m_sim->costs.csd_ns);
        if (!b.csdBatch.empty()) // the next one after this one's completion has returned
            stack.push_back(op);
        if (m_patches.remoteSoftirq || m_queues[static_cast<std::size_t>(request(rq).dev)].nrHwQueues == 1)
            triggerSoftirq(cpu, rq);
        else
            completeRq(cpu, rq);
        break;
    }
    case BlockOp::CsdRaiseBlock: // complete-llist: the IPI only raises the softirq
        m_machine->charge(m_sim->costs.csd_ns);
        m_machine->__raise_softirq_irqoff(cpu, BLOCK_SOFTIRQ);
        break;
    case BlockOp::BlockSoftirq: { // blk_done_softirq(): take the whole list
        RqList taken = b.done.take();
        if (!taken.empty())
            touchListHead(b.doneOwner, cpu);
        while (!taken.empty())
            b.doneBatch.pushBack(m_pool, taken.popFront(m_pool));
        if (!b.doneBatch.empty())
            stack.push_back(m_ops(BlockOp::CompleteFromBatch, 0));
        break;
    }
    case BlockOp::CompleteFromBatch: {
        const int rq = b.doneBatch.popFront(m_pool);
        if (!b.doneBatch.empty()) // the next one after this one's completion has returned
            stack.push_back(op);
        completeRq(cpu, rq);
        break;
    }
    case BlockOp::NapiSchedule: // the NIC's hardirq: napi_schedule()
        m_machine->__raise_softirq_irqoff(cpu, NET_RX_SOFTIRQ);
        break;
    case BlockOp::NetRxPoll: // net_rx_action() → the driver's poll; nvme-tcp completes in the receive path
        pollEntry(cpu, op, stack, b.rx, kNapiBudget, NET_RX_SOFTIRQ, m_sim->costs.net_rx_pkt_ns);
        break;
    case BlockOp::IbCqIrq: // ib_cq_completion_softirq(): irq_poll_sched()
        m_machine->__raise_softirq_irqoff(cpu, IRQ_POLL_SOFTIRQ);
        break;
    case BlockOp::IrqPoll: // irq_poll_softirq() → ib_poll_handler(); the ULP's ->done completes right here
        pollEntry(cpu, op, stack, b.ibCq, kIbPollBudget, IRQ_POLL_SOFTIRQ, m_sim->costs.cqe_ns);
        break;
    case BlockOp::UsbIrq: { // the host controller's interrupt: wake the driver thread
        const RequestQueue& q = m_queues[static_cast<std::size_t>(op.a)];
        m_machine->charge(m_sim->costs.wakeup_ns);
        m_machine->wakeTask(q.kthread, cpu);
        break;
    }
    case BlockOp::UsbStep: { // usb_stor_control_thread(): one command at a time
        RequestQueue& q = m_queues[static_cast<std::size_t>(op.a)];
        if (q.kthreadCurrent >= 0 && q.kthreadDone) {
            const int rq = q.kthreadCurrent;
            q.kthreadCurrent = -1;
            q.kthreadDone = false;
            stack.push_back(op);
            blkMqCompleteRequest(cpu, rq); // from preemptible process context
        } else if (q.kthreadCurrent < 0 && !q.kthreadPending.empty()) {
            q.kthreadCurrent = q.kthreadPending.popFront(m_pool);
            m_machine->charge(m_sim->costs.queue_rq_ns);
            m_sim->schedule(deviceFinish(op.a), EventKind::DeviceDone, EventPriority::Hardware, q.kthreadCurrent);
            m_machine->sleepTask(m_machine->currentTask()); // wait for the command to finish
        } else {
            m_machine->sleepTask(m_machine->currentTask());
        }
        break;
    }
    default:
        performMtipOp(cpu, op, stack);
    }
}

} // namespace blkmq
