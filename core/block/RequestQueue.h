#pragma once

#include "block/RqList.h"
#include "spec/Scenario.h"
#include "topo/Spinlock.h"

#include <vector>

namespace blkmq {

class DeviceModel;

// irqmode mtip32xx, v3.15's drivers/block/mtip32xx/mtip32xx.c (block/Mtip32xx.cpp): the HBA's
// per-slot-group completed registers, the work items that took them, and the interrupt's state.
struct Mtip32xxPort {
    static constexpr int kMaxSlotGroups = 8; // MTIP_MAX_SLOT_GROUPS: 256 command slots
    static constexpr int kSlotsPerGroup = 32;
    // The internal command keeps slot 0 (mtip32xx's reserved tag): blk-mq's tag t is command slot t + 1,
    // and slots come in groups of 32 (a completed register and a cmd_issue_lock each).
    static int slotGroup(int tag) { return (tag + 1) / kSlotsPerGroup; }
    static int slotGroups(int depth) { return (depth + 1 + kSlotsPerGroup - 1) / kSlotsPerGroup; }
    std::vector<RqList> completed; // port->completed[group]: done by the device, not yet read
    std::vector<RqList> work; // dd->work[group].completed: read by the handler, being completed
    std::vector<int> cpuBinding; // dd->work[group].cpu_binding
    int workersActive = 0; // dd->irq_workers_active
    bool irqOff = false; // HOST_IRQ_STAT not yet written back: the HBA raises no interrupt
    bool irqRaised = false; // an interrupt is on its way to the handler's CPU
    template<class Hash>
    void hashState(Hash& h) const
    {
        h(completed, work, workersActive, irqOff, irqRaised);
    }
};

// struct request_queue of one device, with its CPU → hctx map.
struct RequestQueue {
    DeviceSpec spec;
    const DeviceModel* model = nullptr; // its irqmode's (block/DeviceModel.h): stateless, shared by every engine
    int firstHctx = 0; // global index of hctx 0
    int nrHwQueues = 0;
    int tagSet = 0;
    std::vector<int> cpuToHctx; // global hctx index per CPU
    // mq-deadline is one scheduler per request queue: its requests wait in the FIFO of the hctx they
    // were inserted through (Hctx::schedFifo), and a run of any of the queue's hctxs takes the
    // oldest of them all (schedOldest). The count makes "has work" one test for every hctx.
    int schedQueued = 0;
    // irqmode kthread (usb-storage): one command at a time from a driver thread.
    int kthread = -1;
    RqList kthreadPending;
    int kthreadCurrent = -1;
    bool kthreadDone = false;
    std::vector<Spinlock> cmdIssueLocks; // mtip32xx: port->cmd_issue_lock[], one per 32 command slots
    Mtip32xxPort mtip; // irqmode mtip32xx
    std::vector<SimTime> channelFree; // spec.channels > 0: when each channel has served what it was given
    template<class Hash>
    void hashState(Hash& h) const // spec, hctxs and tag set are the scenario's
    {
        h(schedQueued, kthread, kthreadPending, kthreadCurrent, kthreadDone, cmdIssueLocks, mtip, channelFree);
    }
};

} // namespace blkmq
