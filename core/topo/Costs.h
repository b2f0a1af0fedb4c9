#pragma once

#include "io/FieldTable.h"
#include "topo/Topology.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace blkmq {

// A cost that depends on where two CPUs are relative to each other, indexed
// by Distance. The Remote entry is for NUMA distance 20 and scales linearly
// with the actual SLIT distance.
using DistanceTable = std::array<std::int64_t, kDistanceClasses>;

// Every cost the model charges, in nanoseconds of CPU time or latency.
// Defaults and sources: docs/model.md (generated from describe()).
struct Costs {
    // task context, per I/O
    std::int64_t submit_ns = 0;
    std::int64_t fio_user_ns = 0; // of submit_ns: fio's own user-space work
    std::int64_t queue_rq_ns = 0;
    std::int64_t mmio_write_ns = 0;
    std::int64_t mmio_read_ns = 0;
    std::int64_t sched_insert_ns = 0;
    std::int64_t sched_dispatch_ns = 0;
    std::int64_t tag_get_ns = 0;
    std::int64_t tag_put_ns = 0;
    std::int64_t complete_ns = 0;
    std::int64_t reap_ns = 0;
    std::int64_t syscall_ns = 0;
    std::int64_t rq_cachelines = 0;
    // interrupts, softirqs, IPIs
    std::int64_t irq_entry_ns = 0;
    std::int64_t irq_exit_ns = 0;
    std::int64_t irq_delivery_ns = 0;
    std::int64_t cqe_ns = 0;
    std::int64_t softirq_raise_ns = 0;
    std::int64_t softirq_entry_ns = 0;
    std::int64_t csd_ns = 0;
    std::int64_t net_rx_pkt_ns = 0;
    std::int64_t poll_ns = 0;
    std::int64_t restart_visit_ns = 0;
    std::int64_t private_cache_lines = 0;
    std::int64_t ipi_send_ns = 0;
    DistanceTable ipi_latency_ns {};
    DistanceTable cacheline_ns {};
    // scheduler
    std::int64_t wakeup_ns = 0;
    std::int64_t context_switch_ns = 0;
    std::int64_t sched_granularity_ns = 0;
    std::int64_t softirq_time_limit_ns = 0;
    std::int64_t softirq_restart_limit = 0;

    static Costs defaults();
    // The most any cost may be, in ns (a second).
    static constexpr std::int64_t kMost = 1'000'000'000;
    // What cannot hold between two costs (fio_user_ns is a part of submit_ns).
    FieldProblem problem() const;

    std::int64_t ipiLatency(const Topology& t, int from, int to) const { return scaled(ipi_latency_ns, t, from, to); }
    std::int64_t cacheline(const Topology& t, int from, int to) const { return scaled(cacheline_ns, t, from, to); }

    struct Param {
        const char* name;
        std::int64_t Costs::*scalar; // null for a distance table
        DistanceTable Costs::*table;
        const char* unit;
        const char* source;
        const char* meaning;
    };
    static const std::vector<Param>& params();

private:
    static std::int64_t scaled(const DistanceTable& tab, const Topology& t, int from, int to)
    {
        const Distance d = t.distance(from, to);
        if (d != Distance::Remote)
            return tab[static_cast<int>(d)];
        return tab[static_cast<int>(Distance::Remote)] * t.numaDistance(from, to) / 20;
    }
};

} // namespace blkmq
