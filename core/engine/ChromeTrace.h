#pragma once

#include "sim/SimTime.h"
#include "sim/TraceSink.h"

#include <cstdint>
#include <string>
#include <vector>

namespace blkmq {

class Engine;

// A run as Chrome trace-event JSON (docs/trace.md), which Perfetto UI and chrome://tracing open: one
// process per NUMA node and one thread per CPU ("CPU n"); a complete event (ph X) for every action
// a CPU performs (named by the kernel path its op runs), inside "hardirq" and "softirq" spans for
// the interrupt levels; a flow from the completing CPU to the submitter for each IPI and from the
// victim to the stealer for each tag steal; counter tracks for requests in flight, driver tags in
// use and IOPS; instant events for live switches and stalls. Attach it with Engine::addTraceSink,
// run, call sample() at intervals for the counters, then finish().
class ChromeTrace final : public TraceSink {
public:
    struct Options {
        SimTime from; // only what overlaps [from, to]
        SimTime to = SimTime(INT64_MAX);
        std::size_t maxEvents = 1'000'000; // then it stops adding and says it was truncated
    };
    ChromeTrace(const Engine& engine, Options options);

    void record(const TraceRecord& r) override;
    void slice(const TraceSlice& s) override;
    // Counters at the engine's time: requests in flight, driver tags in use, IOPS since the last sample.
    void sample(const Engine& engine);
    // The JSON document; spans still open end at the engine's time.
    std::string finish(const Engine& engine);

    std::size_t events() const { return m_events; }
    bool truncated() const { return m_truncated; }

private:
    struct Span { // an interrupt level's span on one CPU
        bool open = false;
        std::int64_t begin = 0, end = 0;
    };
    struct PendingFlow { // an IPI sent, waiting for the target's call-function interrupt
        std::uint64_t id;
        int from;
        std::int64_t at;
    };
    bool inWindow(std::int64_t begin, std::int64_t end) const;
    void add(const std::string& event);
    void closeSpan(int cpu, int level);
    void flow(const char* name, std::uint64_t id, int from, std::int64_t fromAt, int to, std::int64_t toAt);
    std::string where(int cpu) const; // "\"pid\":N,\"tid\":C"

    const Engine& m_engine;
    Options m_options;
    std::vector<int> m_node; // per CPU
    int m_counterPid = 0; // the process that holds the counters and instants
    std::string m_body; // the events, comma-separated
    std::size_t m_events = 0;
    bool m_truncated = false;
    std::vector<Span> m_spans; // per CPU x 2 (softirq, hardirq)
    std::vector<std::int64_t> m_lastEnd; // per CPU: the end of its last action
    std::vector<std::vector<PendingFlow>> m_pending; // per target CPU
    std::uint64_t m_nextFlow = 1;
    std::vector<std::pair<std::int64_t, int>> m_markers; // time, marker index
    std::int64_t m_lastSampleNs = 0;
    std::uint64_t m_lastCompleted = 0;
};

} // namespace blkmq
