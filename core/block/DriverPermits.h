#pragma once

#include <vector>

namespace blkmq {

// A driver's own pool of in-flight permits, shared by every device on a tag
// set, and the way that driver reruns the hctxs it turned away. Modelled on the
// IBNBD client as it was when the 2017 restart thread was measured (ibnbd-clt.c of the
// 2017-2018 IBNBD posts, ionos-enterprise/ibnbd 0111511d5bb1): ibtrs gives each
// session queue_depth permits (512 by default) while blk-mq gives each of the
// set's hw queue indices queue_depth tags, so with nr_hw_queues = CPUs the
// permits run out long before the tags.
//
// ibnbd_queue_rq() without a permit: blk_mq_stop_hw_queue(), put the hctx on
// the submitting CPU's requeue list (once: q->in_list) and return
// BLK_STS_RESOURCE. ibnbd_put_tag() on each completion frees the permit and
// requeues one hctx: the first non-empty CPU list after this CPU's last pick
// (cpu_rr), its first hctx, by blk_mq_delay_queue(hctx, 0); the put that
// leaves nothing in flight requeues them all (ibnbd_requeue_all_if_idle).
// No allocation after construction: the lists are linked through the hctxs.
class DriverPermits {
public:
    DriverPermits() = default;
    DriverPermits(int permits, int nrCpus, int nrHctxs);

    bool enabled() const { return m_total > 0; }
    int busy() const { return m_busy; }
    int waiting() const { return m_waiting; } // hctxs on a requeue list

    // ibnbd_get_tag(): false when every permit is in flight.
    template<class Hash>
    void hashState(Hash& h) const
    {
        h(m_busy, m_waiting, m_head, m_tail, m_next, m_inList, m_cpuRr);
    }

    bool get();
    // ibnbd_clt_dev_add_to_requeue() on `cpu`. False when nothing is in flight (then nobody would
    // requeue it, and the driver must restart the hctx itself); true also when it is listed already.
    bool addToRequeue(int cpu, int hctx);
    // ibnbd_put_tag() on `cpu`: requeue(hctx) for each hctx taken off a list.
    template<typename Requeue>
    void put(int cpu, Requeue&& requeue)
    {
        --m_busy;
        for (int h = popNext(cpu); h >= 0; h = m_busy == 0 ? popNext(cpu) : -1)
            requeue(h);
    }

private:
    int popNext(int cpu); // ibnbd_requeue_if_needed(): the hctx to requeue, or -1

    int m_total = 0;
    int m_busy = 0; // sess->busy
    int m_waiting = 0;
    std::vector<int> m_head, m_tail; // per CPU: its requeue list (-1 = empty)
    std::vector<int> m_next; // per hctx: the next hctx on its list
    std::vector<bool> m_inList; // per hctx: q->in_list
    std::vector<int> m_cpuRr; // per CPU: sess->cpu_rr, the CPU whose list it requeued from last (-1: none yet)
};

} // namespace blkmq
