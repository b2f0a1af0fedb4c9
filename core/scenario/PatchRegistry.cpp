#include "scenario/PatchRegistry.h"

namespace blkmq {

const std::vector<PatchInfo>& PatchRegistry::all()
{
    static const std::string completion = "2020: blk-mq: Don't complete in IRQ, use llist_head (seed 000)";
    static const std::vector<PatchInfo> list = {
        { "complete-no-remote-threaded", completion, "blk-mq: Don't complete on a remote CPU in force threaded mode",
            "Sebastian Andrzej Siewior", "v5.11",
            "With threadirqs, blk_mq_complete_need_ipi() returns false: completions stay on the CPU that took the "
            "interrupt, so no IPI and no ksoftirqd wake-up per request." },
        { "complete-remote-softirq", completion, "blk-mq: Always complete remote completions requests in softirq",
            "Sebastian Andrzej Siewior", "v5.12",
            "The IPI handler no longer calls ->complete in hardirq; it queues the request on blk_cpu_done and raises "
            "BLOCK_SOFTIRQ." },
        { "complete-llist", completion, "blk-mq: Use llist_head for blk_cpu_done", "Sebastian Andrzej Siewior", "v5.12",
            "blk_cpu_done becomes a lock-free list any CPU can push to; the IPI is sent only if the target's list was "
            "empty and just raises BLOCK_SOFTIRQ; the single-queue raise is done with preemption disabled." },
        { "complete-local-bh", completion,
            "(alternative) local_bh_disable()/local_bh_enable() around the softirq raise", "Sebastian Andrzej Siewior",
            "proposed",
            "A completion raised from process context runs the BLOCK softirq at local_bh_enable() in the same task "
            "instead of waking ksoftirqd." },
        { "complete-process-direct", completion, "(suggestion) complete directly when called from process context",
            "Christoph Hellwig", "proposed",
            "blk_mq_complete_request_remote() returns false in process context, so ->complete runs right there: no "
            "IPI, no softirq." },
    };
    return list;
}

const PatchInfo* PatchRegistry::find(const std::string& id)
{
    for (const auto& p : all())
        if (p.id == id)
            return &p;
    return nullptr;
}

} // namespace blkmq
