#pragma once

#include "block/RqList.h"
#include "scenario/Scenario.h"
#include "topo/Spinlock.h"

#include <vector>

namespace blkmq {

// struct request_queue of one device, with its CPU → hctx map.
struct RequestQueue {
    DeviceSpec spec;
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
    std::vector<Spinlock> cmdIssueLocks; // mtip32xx: port->cmd_issue_lock[], one per 32 tags
    template<class Hash>
    void hashState(Hash& h) const // spec, hctxs and tag set are the scenario's
    {
        h(schedQueued, kthread, kthreadPending, kthreadCurrent, kthreadDone, cmdIssueLocks);
    }
};

} // namespace blkmq
