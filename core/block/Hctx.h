#pragma once

#include "block/RqList.h"
#include "block/BlkMqTags.h"
#include "topo/Cacheline.h"

#include <cstdint>
#include <vector>

namespace blkmq {

// struct blk_mq_hw_ctx, with the parts of its NVMe-like queue pair.
struct Hctx {
    int dev = 0;
    int index = 0; // queue_num within its device
    int tags = 0; // global index of the BlkMqTags it allocates driver tags from
    std::vector<int> cpus; // CPUs mapped to it (hctx->cpumask)
    int nextRunCpu = 0; // round robin for async runs (blk_mq_hctx_next_cpu)
    int vectorCpu = 0; // the CPU its interrupt vector is affine to
    RqList dispatch; // hctx->dispatch
    RqList schedFifo; // mq-deadline FIFO
    int schedInUse = 0;
    int nrRequests = 0; // scheduler requests (q->nr_requests)
    TagUser tagUse; // fair sharing: shared, active, tags held
    bool runQueued = false; // an async run is queued on a kworker
    bool stopped = false; // BLK_MQ_S_STOPPED: runs return at once (blk_mq_stop_hw_queue)
    bool startOnRun = false; // BLK_MQ_S_START_ON_RUN: the queued run clears STOPPED (blk_mq_delay_queue)
    RqList cq; // completion queue entries not yet handled
    RqList pollCq; // completions of polled requests, waiting for blk_poll()
    bool irqRaised = false; // the vector fired and its handler has not drained cq
    int atDevice = 0; // requests the device is working on
    std::vector<int> schedWaiters; // tasks sleeping for a scheduler request
    std::uint64_t run = 0; // hctx->run: dispatch runs, for debugfs (a count, not state: not hashed)
    template<class Hash>
    void hashState(Hash& h) const
    {
        h(cpus, nextRunCpu, dispatch, schedFifo, schedInUse, nrRequests, tagUse, runQueued, stopped, startOnRun, cq,
            pollCq, irqRaised, atDevice, schedWaiters);
    }
    // Its two cachelines the restart walk reads are in BlockLayer's HctxLines arrays (topo/Cacheline.h).
};

} // namespace blkmq
