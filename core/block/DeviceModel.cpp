// The device models but mtip32xx's (block/Mtip32xx.cpp), and what a driver may call.
#include "block/DeviceModel.h"

#include "block/BlockLayer.h"

#include <array>

namespace blkmq {

namespace {
constexpr int kIrqModes = static_cast<int>(IrqMode::Mtip32xx) + 1;
}

// --- what a driver may call ---

Sim& DeviceModel::sim(BlockLayer& b) { return *b.m_sim; }
Machine& DeviceModel::machine(BlockLayer& b) { return *b.m_machine; }
Request& DeviceModel::request(BlockLayer& b, int rq) { return b.request(rq); }
RequestQueue& DeviceModel::queue(BlockLayer& b, int dev) { return b.m_queues[static_cast<std::size_t>(dev)]; }
Hctx& DeviceModel::hctx(BlockLayer& b, int index) { return b.m_hctxs[static_cast<std::size_t>(index)]; }
BlkCpu& DeviceModel::blkCpu(BlockLayer& b, int cpu) { return b.m_cpu[static_cast<std::size_t>(cpu)]; }
std::vector<Request>& DeviceModel::pool(BlockLayer& b) { return b.m_pool; }
Op DeviceModel::op(BlockLayer& b, BlockOp code, int a, int b2) { return b.m_ops(code, a, b2); }
SimTime DeviceModel::finishTime(BlockLayer& b, int dev) { return b.deviceFinish(dev); }
void DeviceModel::completeRequest(BlockLayer& b, int cpu, int rq) { b.blkMqCompleteRequest(cpu, rq); }
void DeviceModel::endRequest(BlockLayer& b, int cpu, int rq) { b.completeRq(cpu, rq); }
void DeviceModel::raiseRx(BlockLayer& b, int cpu) { b.raiseRx(cpu); }

void DeviceModel::finishAt(BlockLayer& b, int rq, SimTime at)
{
    b.m_sim->schedule(at, EventKind::DeviceDone, EventPriority::Hardware, rq);
}

// --- what a model does unless it says otherwise: a device that finishes a request after its
// service time and raises its hw queue's interrupt vector (nvme_irq()) ---

void DeviceModel::queueRq(BlockLayer& b, int /*cpu*/, int rq) const
{
    finishAt(b, rq, finishTime(b, request(b, rq).dev));
}

void DeviceModel::release(BlockLayer& b, int rq) const { finishAt(b, rq, sim(b).now); }

void DeviceModel::done(BlockLayer& b, int rq) const
{
    Request& r = request(b, rq);
    Hctx& h = hctx(b, r.hctx);
    if (r.polled) { // poll queues have no interrupt
        h.pollCq.pushBack(pool(b), rq);
        return;
    }
    // One interrupt for every completion the handler will find: none is raised while one is pending.
    h.cq.pushBack(pool(b), rq);
    if (!h.irqRaised) {
        h.irqRaised = true;
        machine(b).raiseIrq(
            h.vectorCpu, IrqKind::DeviceVector, r.hctx, sim(b).now + SimTime(sim(b).costs.irq_delivery_ns));
    }
}

// nvme_poll(): the submitter reaps its hctx's completion queue.
int DeviceModel::poll(BlockLayer& b, int cpu, int dev) const
{
    Hctx& h = hctx(b, queue(b, dev).cpuToHctx[static_cast<std::size_t>(cpu)]);
    machine(b).charge(sim(b).costs.poll_ns);
    int found = 0;
    while (!h.pollCq.empty()) {
        machine(b).charge(sim(b).costs.cqe_ns);
        completeRequest(b, cpu, h.pollCq.popFront(pool(b)));
        ++found;
    }
    return found;
}

namespace {

// null_blk irqmode=0 (NULL_IRQ_NONE) and 1 (NULL_IRQ_SOFTIRQ): the request is done inside
// ->queue_rq, by end_cmd() itself or by blk_mq_complete_request() (which completes in BLOCK_SOFTIRQ).
class InQueueRqModel final : public DeviceModel {
public:
    using End = void (*)(BlockLayer&, int cpu, int rq);
    InQueueRqModel(IrqMode mode, const char* name, int nullBlk, const char* summary, End end)
        : DeviceModel(mode, name, nullBlk, summary)
        , m_end(end)
    {
    }
    bool holds() const override { return false; }
    void queueRq(BlockLayer& b, int cpu, int rq) const override
    {
        --hctx(b, request(b, rq).hctx).atDevice;
        m_end(b, cpu, rq);
    }
    static void end(BlockLayer& b, int cpu, int rq) { endRequest(b, cpu, rq); }
    static void complete(BlockLayer& b, int cpu, int rq) { completeRequest(b, cpu, rq); }

private:
    End m_end;
};

// null_blk irqmode=2 (NULL_IRQ_TIMER): an hrtimer on the submitting CPU ends the request in hardirq.
class TimerModel final : public DeviceModel {
public:
    TimerModel()
        : DeviceModel(IrqMode::Timer, "timer", 2,
            "null_blk irqmode=2: an hrtimer on the submitting CPU completes the request in hardirq")
    {
    }
    void queueRq(BlockLayer& b, int cpu, int rq) const override
    {
        machine(b).raiseIrq(cpu, IrqKind::Timer, rq, finishTime(b, request(b, rq).dev));
    }
    void release(BlockLayer& b, int rq) const override
    {
        machine(b).raiseIrq(request(b, rq).cpu, IrqKind::Timer, rq, sim(b).now);
    }
};

// NVMe over PCIe: a completion queue and an interrupt vector per hw queue (nvme_irq()); poll queues.
class NvmeModel final : public DeviceModel {
public:
    NvmeModel()
        : DeviceModel(IrqMode::Nvme, "nvme", -1,
            "NVMe: a completion queue and an interrupt vector per hw queue (nvme_irq()); polled I/O")
    {
    }
    bool vectorPerHwQueue() const override { return true; }
    bool pollable() const override { return true; }
};

// virtio-blk, the oracle's guest disk: a virtqueue and a vector per hw queue (virtblk_done()).
class VirtioModel final : public DeviceModel {
public:
    VirtioModel()
        : DeviceModel(IrqMode::Virtio, "virtio", -1,
            "virtio-blk: a virtqueue and an interrupt vector per hw queue (virtblk_done())")
    {
    }
    bool vectorPerHwQueue() const override { return true; }
};

// nvme-tcp: the completion PDU arrives on the queue's TCP connection, which RSS steers to one CPU,
// and NAPI takes it in NET_RX softirq.
class NapiModel final : public DeviceModel {
public:
    NapiModel()
        : DeviceModel(IrqMode::Napi, "napi", -1,
            "nvme-tcp: completions arrive on the queue's TCP connection, steered by RSS, taken by NAPI in "
            "NET_RX softirq")
    {
    }
    void done(BlockLayer& b, int rq) const override
    {
        const Request& r = request(b, rq);
        const auto& rss = queue(b, r.dev).spec.rss_cpus;
        const std::uint64_t flow
            = (static_cast<std::uint64_t>(r.dev) << 32 | static_cast<std::uint32_t>(hctx(b, r.hctx).index))
            * 0x9e3779b97f4a7c15ULL;
        const int target = rss.empty()
            ? static_cast<int>((flow >> 32) % static_cast<std::uint64_t>(sim(b).topo.nrCpus()))
            : rss[static_cast<std::size_t>((flow >> 32) % rss.size())];
        blkCpu(b, target).rx.entries.push_back(rq);
        raiseRx(b, target);
    }
};

// ibtrs/rtrs over RDMA: one connection per CPU; the request went out on the submitting CPU's, and its
// CQ's completion vector (con->cpu % num_comp_vectors) is taken to sit on that CPU. One interrupt,
// then irq_poll until the CQ is empty (ib_req_notify_cq).
class RdmaModel final : public DeviceModel {
public:
    RdmaModel()
        : DeviceModel(IrqMode::Rdma, "rdma", -1,
            "ibtrs over RDMA: a CQ per CPU's connection, one interrupt, then irq_poll in IRQ_POLL softirq")
    {
    }
    void done(BlockLayer& b, int rq) const override
    {
        const Request& r = request(b, rq);
        BlkCpu& c = blkCpu(b, r.cpu);
        c.ibCq.entries.push_back(rq);
        if (!c.ibCq.polling) {
            c.ibCq.polling = true;
            machine(b).raiseIrq(r.cpu, IrqKind::RdmaCq, r.cpu, sim(b).now + SimTime(sim(b).costs.irq_delivery_ns));
        }
    }
};

// usb-storage: the driver's thread issues one command at a time and waits for the host
// controller's interrupt (usb_stor_control_thread()).
class KthreadModel final : public DeviceModel {
public:
    KthreadModel()
        : DeviceModel(IrqMode::Kthread, "kthread", -1,
            "usb-storage: a driver thread issues one command at a time and waits for the controller's "
            "interrupt")
    {
    }
    void probe(BlockLayer& b, int dev) const override
    {
        RequestQueue& q = queue(b, dev);
        q.kthread = machine(b).createTask(
            TaskKind::Kthread, hctx(b, q.firstHctx).vectorCpu, op(b, BlockOp::UsbStep, dev), false);
    }
    void queueRq(BlockLayer& b, int cpu, int rq) const override { queueForThread(b, rq, cpu); }
    void release(BlockLayer& b, int rq) const override { queueForThread(b, rq, -1); }
    void done(BlockLayer& b, int rq) const override
    {
        const Request& r = request(b, rq);
        queue(b, r.dev).kthreadDone = true;
        machine(b).raiseIrq(
            hctx(b, r.hctx).vectorCpu, IrqKind::Usb, r.dev, sim(b).now + SimTime(sim(b).costs.irq_delivery_ns));
    }

private:
    static void queueForThread(BlockLayer& b, int rq, int fromCpu)
    {
        RequestQueue& q = queue(b, request(b, rq).dev);
        q.kthreadPending.pushBack(pool(b), rq);
        machine(b).wakeTask(q.kthread, fromCpu);
    }
};

} // namespace

const DeviceModel& mtip32xxModel(); // block/Mtip32xx.cpp

std::span<const DeviceModel* const> DeviceModel::all()
{
    static const InQueueRqModel none(
        IrqMode::None, "none", 0, "null_blk irqmode=0: ->queue_rq ends the request itself", InQueueRqModel::end);
    static const InQueueRqModel softirq(IrqMode::Softirq, "softirq", 1,
        "null_blk irqmode=1: ->queue_rq calls blk_mq_complete_request(), which completes in BLOCK_SOFTIRQ",
        InQueueRqModel::complete);
    static const TimerModel timer;
    static const NvmeModel nvme;
    static const NapiModel napi;
    static const KthreadModel kthread;
    static const RdmaModel rdma;
    static const VirtioModel virtio;
    static const std::array<const DeviceModel*, kIrqModes> models
        = { &none, &softirq, &timer, &nvme, &napi, &kthread, &rdma, &virtio, &mtip32xxModel() };
    return models;
}

const DeviceModel* DeviceModel::find(const std::string& nameOrNumber)
{
    for (const DeviceModel* m : all())
        if (nameOrNumber == m->name()
            || (m->nullBlkIrqmode() >= 0 && nameOrNumber == std::to_string(m->nullBlkIrqmode())))
            return m;
    return nullptr;
}

} // namespace blkmq
