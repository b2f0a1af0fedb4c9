#pragma once

#include "cpu/Op.h"
#include "spec/Scenario.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace blkmq {

class BlockLayer;
class Machine;
enum class BlockOp : std::uint8_t;
struct BlkCpu;
struct Hctx;
struct Request;
struct RequestQueue;
struct Sim;

// A driver and the device behind it, as blk-mq meets them through blk_mq_ops: what ->queue_rq does
// once the device has taken a request, how the device's completion reaches the kernel, and
// ->poll. One model per irqmode (a scenario's devices[].irqmode), registered in DeviceModel::all().
//
// A model keeps no state: a device's state is its RequestQueue's and, per CPU, BlkCpu's, so an
// engine copies (Engine::clone) and hashes (docs/check.md) without knowing the models. The
// interrupt and softirq handlers a model's completion raises (the vector's, NAPI's, irq_poll's, the
// driver thread's, mtip32xx's) are ops of the block layer (block/BlockLayer.h BlockOp), as the
// kernel's handlers run in the contexts the Machine models.
//
// A device that completes a batch per notification does it in done(): it collects finished
// requests where its handler will find them and raises one notification while none is pending
// (nvme's completion queue and hctx->irqRaised, NAPI's receive ring, the RDMA CQ, mtip32xx's slot
// groups).
class DeviceModel {
public:
    virtual ~DeviceModel() = default;

    // Every model, in IrqMode order; of() and find() look them up.
    static std::span<const DeviceModel* const> all();
    static const DeviceModel& of(IrqMode mode) { return *all()[static_cast<std::size_t>(mode)]; }
    // By its name in scenario files, or by null_blk's irqmode number ("0", "1", "2"); null if none.
    static const DeviceModel* find(const std::string& nameOrNumber);

    IrqMode mode() const { return m_mode; }
    const char* name() const { return m_name; }
    const char* summary() const { return m_summary; }
    // null_blk's irqmode module parameter for this model (0 none, 1 softirq, 2 timer), or -1.
    int nullBlkIrqmode() const { return m_nullBlk; }
    // An interrupt vector per hw queue, whose handler drains the queue's completions (nvme_irq(),
    // virtblk_done()): the vectors are spread as managed interrupts, and each has an irq thread.
    virtual bool vectorPerHwQueue() const { return false; }
    // Polled I/O (REQ_HIPRI): the submitter finds completions by polling, with no interrupt.
    virtual bool pollable() const { return false; }
    // A script step may hold a request at the device: the device does not finish it by itself.
    virtual bool holds() const { return true; }
    // Why a device of this model cannot be as `d` says (the field's message), or empty.
    virtual std::string refuses(const DeviceSpec&) const { return {}; }

    // Probe: the threads and bindings a device of this model needs, once per device.
    virtual void probe(BlockLayer&, int /*dev*/) const { }
    // ->queue_rq returned BLK_STS_OK on `cpu`: the device has the request. Unless a model says
    // otherwise, the device finishes it after its service time and done() follows.
    virtual void queueRq(BlockLayer& b, int cpu, int rq) const;
    // A held request is let go (a script's "complete" step): the device finishes it now.
    virtual void release(BlockLayer& b, int rq) const;
    // The device finished the request: how the driver hears of it. Unless a model says otherwise, the
    // completion goes on its hw queue's completion queue and raises the queue's interrupt vector, once
    // while none is pending (nvme_irq()); a polled request's waits for ->poll.
    virtual void done(BlockLayer& b, int rq) const;
    // ->poll on `cpu`'s hctx of device `dev`: completes what it finds, returns how many.
    virtual int poll(BlockLayer& b, int cpu, int dev) const;

protected:
    DeviceModel(IrqMode mode, const char* name, int nullBlk, const char* summary)
        : m_mode(mode)
        , m_name(name)
        , m_nullBlk(nullBlk)
        , m_summary(summary)
    {
    }

    // What a driver may call, as a kernel driver calls blk-mq's exported functions and its own
    // device's registers.
    static Sim& sim(BlockLayer& b);
    static Machine& machine(BlockLayer& b);
    static Request& request(BlockLayer& b, int rq);
    static RequestQueue& queue(BlockLayer& b, int dev);
    static Hctx& hctx(BlockLayer& b, int index);
    static BlkCpu& blkCpu(BlockLayer& b, int cpu);
    static std::vector<Request>& pool(BlockLayer& b); // what request lists (RqList) link through
    static Op op(BlockLayer& b, BlockOp code, int a = 0, int b2 = 0);
    // When the device finishes a request of `dev` given to it now (its channel's queue, then its service time).
    static SimTime finishTime(BlockLayer& b, int dev);
    // The device finishes `rq` at `at` (BlockLayer::onDeviceDone, then done()).
    static void finishAt(BlockLayer& b, int rq, SimTime at);
    // blk_mq_complete_request(): the completion path of the 2020 series, IPI or local.
    static void completeRequest(BlockLayer& b, int cpu, int rq);
    // blk_mq_end_request() where the driver ends the request itself: ->complete, then the free.
    static void endRequest(BlockLayer& b, int cpu, int rq);
    // The NIC's receive interrupt on `cpu`, unless NAPI is already polling there.
    static void raiseRx(BlockLayer& b, int cpu);

private:
    IrqMode m_mode;
    const char* m_name;
    int m_nullBlk;
    const char* m_summary;
};

} // namespace blkmq
