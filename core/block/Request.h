#pragma once

#include "sim/EnumNames.h"
#include "sim/SimTime.h"

#include <cstdint>
#include <iterator>

namespace blkmq {

enum class RqState : std::uint8_t { Free, Sched, Dispatch, AtDevice, Complete /* last */ };

// Where a request in that state is, in words (the inspector, a tag's tooltip).
inline constexpr const char* kRqStateWhere[]
    = { "free", "in the scheduler FIFO", "on hctx->dispatch", "at the device", "on its way to ->complete" };
static_assert(std::size(kRqStateWhere) == static_cast<std::size_t>(RqState::Complete) + 1);
inline const char* rqStateWhere(RqState s) { return enumName(kRqStateWhere, s); }

// struct request: allocated from a pool, linked into at most one list at a
// time through `next` (scheduler FIFO, hctx->dispatch, completion queue,
// call-single queue or blk_cpu_done).
struct Request {
    std::int32_t next = -1;
    std::int32_t tag = -1; // driver tag, -1 while it has none
    std::int32_t hctx = -1; // global hctx index
    std::int32_t job = -1; // fio job, -1 for scripted requests
    std::int32_t iou = -1; // the job's io_u slot
    std::int32_t script = -1; // script step that submitted it
    std::int32_t bytes = 0;
    std::int16_t cpu = -1; // rq->mq_ctx->cpu: the submitting CPU
    std::int16_t dev = -1;
    std::int16_t completeCpu = -1; // the CPU that called blk_mq_complete_request() (-1: not called)
    RqState state = RqState::Free;
    bool schedSlot = false; // holds one of the hctx's scheduler requests
    bool hold = false; // scripted: the device keeps it until told
    bool released = false; // scripted: a "complete" step came before it reached the device
    bool polled = false; // REQ_HIPRI: found by polling, completed where it is found
    bool redirected = false; // completion sent to the submitting CPU (IPI or its done list)
    bool permit = false; // holds one of its tag set's driver permits
    SimTime submitted; // blk_mq_submit_bio
    SimTime dispatched; // ->queue_rq accepted it
    SimTime completeCalled { -1 }; // blk_mq_complete_request() was called (-1: not yet, or bypassed)
    SimTime waitSince; // entered the scheduler FIFO or hctx->dispatch
    template<class Hash>
    void hashState(Hash& h) const
    {
        h(next, tag, hctx, job, iou, script, bytes, cpu, dev, completeCpu, state, schedSlot, hold, released, polled,
            redirected, permit, submitted, dispatched, completeCalled, waitSince);
    }
};

} // namespace blkmq
