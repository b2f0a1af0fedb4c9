#pragma once

#include "spec/Scenario.h"
#include "tags/TagAllocator.h"

#include <vector>

namespace blkmq {

// One fio job instance (numjobs expands a JobSpec into several): a
// closed-loop libaio-like submitter with `iodepth` io_units.
struct Job {
    int spec = 0; // index into Scenario::jobs
    int task = -1;
    int dev = 0;
    int cpu = 0; // where it starts (an unpinned job may move: Machine::task(task).cpu is where it is)
    int iodepth = 1;
    int batch = 1;
    int bytes = 4096;
    std::int64_t thinktime = 0;
    std::int64_t ioLeft = -1; // I/Os it may still submit (fio number_ios); -1: no limit
    bool hipri = false;
    std::vector<SimTime> iouSubmitted;
    std::vector<int> freeIous;
    // Completed, not yet reaped: the first nrCompleted (an io_unit completes once per submission, so
    // iodepth slots hold them all, and endIo() stores without a check for growing).
    std::vector<int> completedIous;
    int nrCompleted = 0;
    int batchPos = 0; // I/Os submitted in the current io_submit batch
    bool submitCharged = false; // the pending submission already paid its CPU cost
    bool tagWoken = false; // the pending submission slept for a tag (BlkMqTags::afterWait)
    TagAlloc tagAlloc; // a driver-tag allocation that spans actions (ida-lock-split)
    SimTime allocSince; // when the pending submission first asked for a tag (sleeps included after)
    bool waitingCompletion = false;
    bool thinking = false;
    int inflight() const { return iodepth - static_cast<int>(freeIous.size()); }
    void hashState(StateHash& h) const
    {
        h(task, ioLeft, iouSubmitted, freeIous, completedIous, nrCompleted, batchPos, submitCharged, tagWoken, tagAlloc,
            allocSince, waitingCompletion, thinking);
    }
};

} // namespace blkmq
