// BlockLayer, irqmode mtip32xx: how v3.15's driver for the Micron P320/P420 cards completes
// (drivers/block/mtip32xx/mtip32xx.c as converted to blk-mq in v3.15-rc1, "mtip32xx: convert to use
// blk-mq"). The card sets a bit in its slot group's completed register for each command it has done
// and raises one MSI while the HBA's interrupt status is clear. mtip_irq_handler() reads every
// group's register, completes group 0 right there in hardirq and queues each other group that has
// bits on its own work item, bound to a CPU of the card's node (dd->work[i].cpu_binding). The
// interrupt stays off until the last of those has finished (irq_workers_active reaching 0 writes
// HOST_IRQ_STAT back), so completions that arrive meanwhile wait in the registers and are taken
// together by the next interrupt. Each command ends with blk_mq_end_io() where it was found: no
// IPI, whatever rq_affinity says, and its tag is freed into the completing CPU's cache.
#include "block/BlockLayer.h"
#include "block/DeviceModel.h"

#include <algorithm>
#include <cassert>

namespace blkmq {

namespace {

constexpr int kGroups = Mtip32xxPort::kMaxSlotGroups;

// The HBA raises its MSI for the completed bits that are set (the caller knows some are) while its
// interrupt status is clear.
void raiseHbaIrq(Machine& machine, const Sim& sim, Mtip32xxPort& p, int vectorCpu, int dev)
{
    if (p.irqOff || p.irqRaised)
        return;
    p.irqRaised = true;
    machine.raiseIrq(vectorCpu, IrqKind::AhciHba, dev, sim.now + SimTime(sim.costs.irq_delivery_ns));
}

class Mtip32xxModel final : public DeviceModel {
public:
    Mtip32xxModel()
        : DeviceModel(IrqMode::Mtip32xx, "mtip32xx", -1,
            "v3.15's Micron P320/P420 driver: one interrupt for a batch of slot groups, completed in hardirq "
            "and in bound work items, the interrupt off until the last of them is done")
    {
    }
    std::string refuses(const DeviceSpec& d) const override
    {
        if (d.submit_queues == 1 && d.hw_queue_depth <= 255)
            return {};
        return "mtip32xx has one hw queue of at most 255 tags (8 slot groups of 32 command slots, one kept for the "
               "internal command); this device has "
            + std::to_string(d.submit_queues) + " of " + std::to_string(d.hw_queue_depth);
    }

    // mtip_pci_probe(): the interrupt's CPU and two more work CPUs, each the least used CPU of the card's
    // node (get_least_used_cpu_on_node(), counting the bindings made so far, this card's and earlier
    // cards'), shared out over the eight groups as the driver does. The interrupt is on the hw queue's
    // vector CPU (the scenario's irq_affinity, which the driver's irq_set_affinity_hint() names).
    void probe(BlockLayer& b, int dev) const override
    {
        RequestQueue& q = queue(b, dev);
        const Topology& topo = sim(b).topo;
        const int isr = hctx(b, q.firstHctx).vectorCpu;
        std::vector<int> nodeCpus;
        for (int c = 0; c < topo.nrCpus(); ++c)
            if (topo.cpu(c).node == topo.cpu(isr).node)
                nodeCpus.push_back(c);
        // cpu_use[] is the driver's, across its cards: what the cards probed before this one took.
        std::vector<int> use(static_cast<std::size_t>(topo.nrCpus()), 0);
        for (int d = 0; d < dev; ++d)
            if (const auto& bound = queue(b, d).mtip.cpuBinding; !bound.empty())
                for (int g = 0; g < 3; ++g)
                    ++use[static_cast<std::size_t>(bound[static_cast<std::size_t>(g)])];
        ++use[static_cast<std::size_t>(isr)];
        const auto leastUsed = [&] {
            int best = nodeCpus.front();
            for (int c : nodeCpus)
                if (use[static_cast<std::size_t>(c)] < use[static_cast<std::size_t>(best)])
                    best = c;
            ++use[static_cast<std::size_t>(best)];
            return best;
        };
        const int w1 = leastUsed();
        const int w2 = leastUsed();
        q.mtip.cpuBinding = { isr, w1, w2, isr, w1, w2, w2, w1 };
        const int groups = Mtip32xxPort::slotGroups(q.spec.hw_queue_depth);
        q.mtip.completed.resize(static_cast<std::size_t>(groups));
        q.mtip.work.resize(static_cast<std::size_t>(groups));
        // create_workqueue(): bound, normal priority; its items run in the CPU's nice-0 kworker.
        for (int g = 1; g < groups; ++g) {
            const int cpu = q.mtip.cpuBinding[static_cast<std::size_t>(g)];
            BlkCpu& c = blkCpu(b, cpu);
            if (c.mtipKworker < 0)
                c.mtipKworker = machine(b).createTask(TaskKind::Kworker, cpu, op(b, BlockOp::MtipWorker, cpu), false);
        }
    }

    // The card has finished a command: its bit in the completed register of its slot group.
    void done(BlockLayer& b, int rq) const override
    {
        const Request& r = request(b, rq);
        RequestQueue& q = queue(b, r.dev);
        q.mtip.completed[static_cast<std::size_t>(Mtip32xxPort::slotGroup(r.tag))].pushBack(pool(b), rq);
        raiseHbaIrq(machine(b), sim(b), q.mtip, hctx(b, q.firstHctx).vectorCpu, r.dev);
    }
};

} // namespace

const DeviceModel& mtip32xxModel()
{
    static const Mtip32xxModel model;
    return model;
}

void BlockLayer::performMtipOp(int cpu, Op op, OpStack& stack)
{
    switch (OpSet<BlockOp>::code(op)) {
    case BlockOp::MtipIrq: { // mtip_handle_irq()
        Mtip32xxPort& p = m_queues[static_cast<std::size_t>(op.a)].mtip;
        p.irqRaised = false;
        const int groups = static_cast<int>(p.completed.size());
        // readl(HOST_IRQ_STAT), readl + writel(PORT_IRQ_STAT), readl(port->completed[i]) for each group
        m_machine->charge((2 + groups) * m_sim->costs.mmio_read_ns + m_sim->costs.mmio_write_ns);
        int workers = 0;
        for (int g = 0; g < groups; ++g) {
            assert(p.work[static_cast<std::size_t>(g)].empty() && "no worker is active while the interrupt is on");
            p.work[static_cast<std::size_t>(g)] = p.completed[static_cast<std::size_t>(g)].take();
            workers += p.work[static_cast<std::size_t>(g)].empty() ? 0 : 1;
        }
        if (workers == 0) { // "SDB interrupt but nothing to complete": acknowledge it
            m_machine->charge(m_sim->costs.mmio_write_ns);
            break;
        }
        p.irqOff = true;
        p.workersActive = workers;
        for (int g = 1; g < groups; ++g) {
            if (p.work[static_cast<std::size_t>(g)].empty())
                continue;
            const int target = p.cpuBinding[static_cast<std::size_t>(g)];
            BlkCpu& t = m_cpu[static_cast<std::size_t>(target)];
            t.mtipWork.push_back(op.a * kGroups + g); // queue_work_on(cpu_binding, isr_workq, work)
            m_machine->charge(m_sim->costs.wakeup_ns);
            m_machine->wakeTask(t.mtipKworker, cpu);
        }
        if (!p.work[0].empty()) { // group 0 is completed in the handler
            m_machine->charge(m_sim->costs.mmio_write_ns); // writel(completed, port->completed[0])
            stack.push_back(m_ops(BlockOp::MtipSdbfx, op.a, 0));
        }
        break;
    }
    case BlockOp::MtipSdbfx: { // one completed bit: mtip_async_complete() → blk_mq_end_io()
        RqList& work = m_queues[static_cast<std::size_t>(op.a)].mtip.work[static_cast<std::size_t>(op.b)];
        const int rq = work.popFront(m_pool);
        m_machine->charge(m_sim->costs.cqe_ns); // the bit, the command, dma_unmap_sg()
        // What this completion pushes (a restart, a wake-up) runs before the next bit.
        stack.push_back(work.empty() ? m_ops(BlockOp::MtipGroupDone, op.a, op.b) : op);
        completeRq(cpu, rq);
        break;
    }
    case BlockOp::MtipGroupDone: { // the last worker writes HOST_IRQ_STAT: the interrupt is back on
        Mtip32xxPort& p = m_queues[static_cast<std::size_t>(op.a)].mtip;
        if (--p.workersActive > 0)
            break;
        m_machine->charge(m_sim->costs.mmio_write_ns);
        p.irqOff = false;
        if (std::any_of(p.completed.begin(), p.completed.end(), [](const RqList& l) { return !l.empty(); }))
            raiseHbaIrq(*m_machine, *m_sim, p,
                m_hctxs[static_cast<std::size_t>(m_queues[static_cast<std::size_t>(op.a)].firstHctx)].vectorCpu, op.a);
        break;
    }
    case BlockOp::MtipWorker: { // worker_thread: one work item at a time
        BlkCpu& b = m_cpu[static_cast<std::size_t>(op.a)];
        if (b.mtipWork.empty()) {
            m_machine->sleepTask(m_machine->currentTask());
            break;
        }
        const int item = b.mtipWork.pop_front();
        stack.push_back(op);
        m_machine->charge(m_sim->costs.mmio_write_ns); // writel(completed, port->completed[group])
        stack.push_back(m_ops(BlockOp::MtipSdbfx, item / kGroups, item % kGroups));
        break;
    }
    default:
        assert(false && "not an mtip32xx op");
    }
}

} // namespace blkmq
