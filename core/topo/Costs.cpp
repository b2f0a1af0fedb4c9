#include "topo/Costs.h"

namespace blkmq {

Costs Costs::defaults()
{
    Costs c;
    c.submit_ns = 183;
    c.fio_user_ns = 60;
    c.queue_rq_ns = 40;
    c.mmio_write_ns = 100;
    c.mmio_read_ns = 700;
    c.sched_insert_ns = 60;
    c.sched_dispatch_ns = 50;
    c.tag_get_ns = 15;
    c.tag_put_ns = 10;
    c.complete_ns = 60;
    c.reap_ns = 30;
    c.syscall_ns = 120;
    c.rq_cachelines = 3;
    c.irq_entry_ns = 250;
    c.irq_exit_ns = 150;
    c.irq_delivery_ns = 500;
    c.cqe_ns = 40;
    c.softirq_raise_ns = 10;
    c.softirq_entry_ns = 60;
    c.csd_ns = 30;
    c.net_rx_pkt_ns = 1500;
    c.poll_ns = 100;
    c.restart_visit_ns = 2;
    c.private_cache_lines = 4096;
    c.ipi_send_ns = 150;
    c.ipi_latency_ns = { 0, 600, 800, 1000, 1700 };
    c.cacheline_ns = { 0, 5, 40, 60, 120 };
    c.wakeup_ns = 250;
    c.context_switch_ns = 900;
    c.sched_granularity_ns = 1000000;
    c.softirq_time_limit_ns = 2000000;
    c.softirq_restart_limit = 10;
    return c;
}

FieldProblem Costs::problem() const
{
    if (fio_user_ns > submit_ns)
        return { "costs.fio_user_ns",
            "must be at most costs.submit_ns (" + std::to_string(submit_ns) + "): it is the user-space part of it" };
    return {};
}

const std::vector<Costs::Param>& Costs::params()
{
    static const std::vector<Param> list = {
        { "submit_ns", &Costs::submit_ns, nullptr, "ns CPU",
            "calibrated: single-core-null reaches ~2.8M IOPS (the 2020 completion thread, Jens Axboe)",
            "fio's per-I/O work plus io_submit and bio/request setup on the submitting CPU" },
        { "fio_user_ns", &Costs::fio_user_ns, nullptr, "ns CPU", "assumed",
            "the part of submit_ns that is fio's own user-space work: counted as the job's user time, the rest of a "
            "job thread's time as system time (at most submit_ns)" },
        { "queue_rq_ns", &Costs::queue_rq_ns, nullptr, "ns CPU", "assumed",
            "driver ->queue_rq (null_blk/NVMe doorbell)" },
        { "mmio_write_ns", &Costs::mmio_write_ns, nullptr, "ns CPU", "assumed",
            "one posted MMIO register write; mtip32xx's ->queue_rq holds its cmd_issue_lock over two of them" },
        { "mmio_read_ns", &Costs::mmio_read_ns, nullptr, "ns CPU",
            "assumed: an uncached read waits for its round trip over PCIe, about 0.5-1 us on servers of 2012-2014",
            "one MMIO register read; mtip32xx's interrupt handler reads two status registers and each slot group's "
            "completed register" },
        { "sched_insert_ns", &Costs::sched_insert_ns, nullptr, "ns CPU", "assumed",
            "insert into the mq-deadline FIFO" },
        { "sched_dispatch_ns", &Costs::sched_dispatch_ns, nullptr, "ns CPU", "assumed",
            "pull one request from the scheduler" },
        { "tag_get_ns", &Costs::tag_get_ns, nullptr, "ns CPU", "assumed",
            "bitmap tag allocation (plus a cacheline transfer if the word was last written elsewhere)" },
        { "tag_put_ns", &Costs::tag_put_ns, nullptr, "ns CPU", "assumed",
            "bitmap tag release (plus a cacheline transfer)" },
        { "complete_ns", &Costs::complete_ns, nullptr, "ns CPU", "assumed",
            "->complete and blk_mq_end_request (plus rq_cachelines transfers if not on the submitting CPU)" },
        { "reap_ns", &Costs::reap_ns, nullptr, "ns CPU", "assumed", "fio reaping one completion event" },
        { "syscall_ns", &Costs::syscall_ns, nullptr, "ns CPU", "assumed",
            "one io_submit or io_getevents system call (entry, exit, fio bookkeeping)" },
        { "rq_cachelines", &Costs::rq_cachelines, nullptr, "lines", "assumed",
            "cachelines of request/bio state that move when a request completes away from its submitter" },
        { "irq_entry_ns", &Costs::irq_entry_ns, nullptr, "ns CPU", "assumed", "hardirq entry (vector, irq_enter)" },
        { "irq_exit_ns", &Costs::irq_exit_ns, nullptr, "ns CPU", "assumed", "irq_exit and EOI" },
        { "irq_delivery_ns", &Costs::irq_delivery_ns, nullptr, "ns latency", "assumed",
            "device completion to the MSI-X interrupt being pending on its CPU" },
        { "cqe_ns", &Costs::cqe_ns, nullptr, "ns CPU", "assumed",
            "reading one completion queue entry in the irq handler" },
        { "softirq_raise_ns", &Costs::softirq_raise_ns, nullptr, "ns CPU", "assumed", "raise_softirq*" },
        { "softirq_entry_ns", &Costs::softirq_entry_ns, nullptr, "ns CPU", "assumed",
            "one pass of the __do_softirq loop" },
        { "csd_ns", &Costs::csd_ns, nullptr, "ns CPU", "assumed",
            "running one queued call-function (csd) in the IPI handler" },
        { "net_rx_pkt_ns", &Costs::net_rx_pkt_ns, nullptr, "ns CPU", "assumed",
            "NET_RX work for one received completion PDU (nvme-tcp over a NIC, napi irqmode)" },
        { "poll_ns", &Costs::poll_ns, nullptr, "ns CPU", "assumed", "one blk_poll() pass over a hw queue (hipri)" },
        { "restart_visit_ns", &Costs::restart_visit_ns, nullptr, "ns CPU", "assumed",
            "the instructions of one step of the shared-tags restart walk (next hctx, compare its tags); the "
            "cachelines it reads are charged apart, by cacheline_ns" },
        { "private_cache_lines", &Costs::private_cache_lines, nullptr, "lines",
            "assumed: the 256 KiB per-core L2 of the Xeon E5 v3/v4 servers of 2017",
            "cachelines a CPU's private cache holds: a restart walk that reads more than this misses on every line "
            "(an LLC hit at best)" },
        { "ipi_send_ns", &Costs::ipi_send_ns, nullptr, "ns CPU", "assumed",
            "sending an IPI (ICR write) on the sender" },
        { "ipi_latency_ns", nullptr, &Costs::ipi_latency_ns, "ns latency", "assumed",
            "IPI send to pending on the target, by distance; also remote wake-up latency" },
        { "cacheline_ns", nullptr, &Costs::cacheline_ns, "ns CPU", "assumed",
            "moving one cacheline from its last writer, by distance" },
        { "wakeup_ns", &Costs::wakeup_ns, nullptr, "ns CPU", "assumed", "try_to_wake_up on the waker" },
        { "context_switch_ns", &Costs::context_switch_ns, nullptr, "ns CPU", "assumed", "switching tasks on a CPU" },
        { "sched_granularity_ns", &Costs::sched_granularity_ns, nullptr, "ns", "kernel default (wakeup granularity)",
            "a woken SCHED_OTHER task preempts the running one when it is this much behind in vruntime" },
        { "softirq_time_limit_ns", &Costs::softirq_time_limit_ns, nullptr, "ns", "kernel: MAX_SOFTIRQ_TIME 2 ms",
            "__do_softirq restarts while less than this has passed" },
        { "softirq_restart_limit", &Costs::softirq_restart_limit, nullptr, "count", "kernel: MAX_SOFTIRQ_RESTART 10",
            "__do_softirq restarts at most this often, then wakes ksoftirqd" },
    };
    return list;
}

} // namespace blkmq
