#pragma once

#include "block/StallStep.h"
#include "metrics/TimeSeries.h"
#include "sim/TraceRing.h"
#include "spec/Scenario.h"
#include "engine/CommandInbox.h"
#include "sim/Fingerprint.h"
#include "cpu/Sim.h"
#include "engine/Snapshot.h"
#include "engine/StopCondition.h"

#include <nlohmann/json_fwd.hpp>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace blkmq {

class Machine;
class BlockLayer;
class Workload;

// One simulation: a scenario, its virtual machine, block layer and workload,
// driven by a deterministic event loop. Single-threaded; everything is a
// member, so any number of engines can run side by side. The only members
// another thread may touch are inbox() and snapshot().
class Engine {
public:
    explicit Engine(const Scenario& scenario);
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    // The scenario as it runs now: live changes (commands) are applied to it, and only here.
    const Scenario& scenario() const { return m_scenario; }
    SimTime now() const { return m_sim->now; }
    SimTime duration() const { return m_scenario.duration; }
    bool finished() const { return m_sim->now >= m_scenario.duration || m_sim->queue.empty(); }
    // No event left before the scenario's end (the clock itself may not have reached it yet).
    bool nothingDue() const { return m_sim->queue.empty() || m_sim->queue.topTime() > m_scenario.duration; }

    // Processes the next event (commands first); false when none is left
    // before the scenario's end.
    bool step();
    // Processes every event with time <= t, then sets the clock to t.
    void runUntil(SimTime t);
    void runFor(SimTime d) { runUntil(m_sim->now + d); }
    // Processes every event with time <= t until `stop` holds after one: true, the clock at that
    // event; else false, the clock set to t (runUntil(t)).
    bool runUntil(SimTime t, StopCondition& stop);
    // Processes events until `stop` holds after one, the scenario ends or `maxEvents` were
    // processed; true if it holds. The clock stays at the last event's time.
    [[gnu::hot]] bool runUntil(StopCondition& stop, std::uint64_t maxEvents = UINT64_MAX);
    void run() { runUntil(m_scenario.duration); }

    // --- checkpoints (docs/sessions.md) ---
    // A copy of this run where it stands: the scenario as live commands left it, every simulated
    // structure, the commands taken, series, markers and stall record. It has no observers, trace
    // ring, snapshot or posted commands. Run on, it processes the same events as this engine would,
    // to the same fingerprint.
    std::unique_ptr<Engine> clone() const;
    // Puts this engine where `from` (a run of the same scenario, a clone kept as a checkpoint)
    // stands; it keeps its observers, trace ring (its records are the caller's to clear), posted
    // commands and snapshot interval.
    void restore(const Engine& from);
    // The scenario as the engine was built on it, before any live command (clones share it): two
    // engines are moments of one run when this and their commands agree (Session::replayInto).
    const std::string& loadedScenarioJson() const { return *m_loadedJson; }
    // An estimate of what clone() allocates: the simulated structures' heap and the run's records.
    std::size_t stateBytes() const;
    // A hash of every simulated structure (sim/StateHash.h), between two events: two runs of one
    // scenario with equal hashes go on alike under the same choices. The run's records (series,
    // markers, stall record, fingerprint) are history and stay out.
    void hashState(StateHash& h) const;
    StateHash::Value stateHash() const
    {
        StateHash h;
        hashState(h);
        return h.value();
    }

    CommandInbox& inbox() { return m_inbox; }
    // Every command the engine has taken from its inbox (applied, or rejected with a marker), with
    // the number of events processed before it: replayed at the same indices, a run is the same run
    // (session/Session.h).
    // The clock when it was applied, too: a paused run's clock may stand past its last event, and a
    // command's marker is at the clock's time.
    struct AppliedCommand {
        std::uint64_t event = 0;
        Command command;
        std::int64_t t_ns = -1; // -1: at the event's time (a session file without time_ns)
        bool operator==(const AppliedCommand&) const = default;
    };
    const std::vector<AppliedCommand>& appliedCommands() const { return m_applied; }
    // Applies posted commands now, without processing any event.
    void applyPendingCommands()
    {
        if (m_inbox.pending())
            applyCommands();
    }
    // Observers of the run (sim/TraceSink.h), at most Sim::kMaxSinks; the engine does not own them.
    // False when that many are attached already.
    bool addTraceSink(TraceSink* sink);
    void removeTraceSink(TraceSink* sink);
    // Turns on the bounded trace ring, the GUI's sink (off by default: CLI runs skip it).
    TraceRing& enableTrace(std::size_t capacity = 1 << 16);
    TraceRing* trace() { return m_trace.get(); }

    // Snapshots are published every `interval` of simulated time (0 = only
    // on publishSnapshot()).
    void setSnapshotInterval(SimTime interval) { m_snapshotInterval = interval; }
    void publishSnapshot();
    std::shared_ptr<const Snapshot> snapshot() const;

    nlohmann::json summary() const; // the run summary (docs/scenario.md)
    const TimeSeries& series() const { return m_series; }
    // The metrics of the sample interval in progress, from the last sample to now, without taking a
    // sample (nothing changes, so the fingerprint does not): a live plot's provisional last point.
    // None until a twentieth of sample_interval has passed (a shorter interval is mostly noise).
    std::optional<SeriesRow> intervalSoFar() const;
    const std::vector<Marker>& markers() const { return m_markers; }
    std::string fingerprint() const { return m_fingerprint.hex(); }
    std::uint64_t events() const { return m_events; }
    std::size_t pendingEvents() const; // in the event queue now
    double wallSeconds() const { return m_wallSeconds; }

    const Counters& counters() const { return m_sim->counters; }
    // Every metric of the table over the whole run so far (the summary's "metrics").
    MetricValues totals() const;
    // The stall detector: whether and when it first fired (checked at every
    // sample and at the end), what it explained then, and what is stuck now.
    bool stallDetected() const { return m_stallDetected; }
    SimTime firstStall() const { return m_firstStall; }
    std::uint64_t eventsAtFirstStall() const { return m_stallEvents; } // events processed when it fired
    const std::vector<int>& stuckRequests() const { return m_stuck; }
    const std::string& stallExplanation() const { return m_stallExplanation; }
    const std::vector<StallStep>& stallSteps() const { return m_stallSteps; } // the same, as steps in time order
    // The first lost tag and the first missed wake-up of any hw queue's tags (ida-lock-split's race),
    // in time order, each with what happened in words.
    std::vector<Marker> tagRaces() const;
    // The run's choice points (scenario "choices", docs/check.md): what it took so far.
    const Choices& choices() const { return m_sim->choices; }
    // Choices past the first `depth` take option 0 without being recorded (a search's bound).
    void limitChoices(std::size_t depth) { m_sim->choices.depth = depth; }
    const Machine& machine() const { return *m_machine; }
    // Tests: whether CPUs keep their pick from op to op (Machine::setKeepPicks).
    void setKeepPicks(bool on);
    // Tests: whether bitmap tags take their own-line path (BlkMqTags::setOwnPath).
    void setTagOwnPath(bool on);
    const BlockLayer& block() const { return *m_block; }
    const Workload& workload() const { return *m_workload; }

private:
    struct CloneOf { };
    Engine(const Engine& o, CloneOf);
    void copyRun(const Engine& o); // clone() and restore(): everything but observers and inbox
    // Applies posted commands; true if the next event is at or before `limit`.
    bool eventDue(SimTime limit);
    // Inline into the run loops (Engine.cpp): one call less per event, the loop's state in registers.
    [[gnu::hot, gnu::always_inline]] inline void processNext();
    void checkStalls();
    Event chooseSameTime(const Event& e);
    [[gnu::hot]] void dispatchEvent(const Event& e);
    void applyCommands();
    void addMarker(const std::string& text);
    void sample();
    MetricSample metricSample() const;

    Scenario m_scenario;
    std::unique_ptr<Sim> m_sim;
    std::unique_ptr<Machine> m_machine;
    std::unique_ptr<BlockLayer> m_block;
    std::unique_ptr<Workload> m_workload;
    CommandInbox m_inbox;
    std::vector<AppliedCommand> m_applied;
    std::unique_ptr<TraceRing> m_trace;
    Fingerprint m_fingerprint;
    std::uint64_t m_events = 0;
    double m_wallSeconds = 0;
    TimeSeries m_series;
    MetricSample m_lastSample;
    SimTime m_lastSampleTime;
    std::vector<Marker> m_markers;
    bool m_stallDetected = false;
    SimTime m_firstStall;
    std::uint64_t m_stallEvents = 0;
    std::vector<int> m_stuck; // latest check
    std::vector<std::string> m_stuckSubmitters; // latest check: asleep for a tag longer than stall_age
    std::vector<std::string> m_firstStuckNames; // at the first detection
    std::vector<std::string> m_firstStuckSubmitters; // at the first detection
    std::string m_stallExplanation; // of the first detection
    std::vector<StallStep> m_stallSteps;
    SimTime m_snapshotInterval;
    SimTime m_nextSnapshot;
    mutable std::mutex m_snapshotMutex; // guards only the pointer swap
    std::shared_ptr<const Snapshot> m_snapshot;
    std::shared_ptr<const std::string> m_loadedJson; // m_scenario.sourceJson as loaded, shared with snapshots
    std::shared_ptr<const std::vector<Command>> m_liveChanges; // the commands applied, shared with snapshots
    std::shared_ptr<const std::vector<std::string>> m_scriptIds; // the block layer's, shared with snapshots
};

} // namespace blkmq
