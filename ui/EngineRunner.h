#pragma once

#include "block/StallStep.h"
#include "metrics/TimeSeries.h"
#include "spec/Scenario.h"
#include "engine/CommandInbox.h"
#include "engine/StopCondition.h"
#include "engine/Snapshot.h"
#include "sim/TraceRecord.h"

#include "engine/Checkpoints.h"
#include "session/Session.h"

#include <QObject>

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

namespace blkmq {

class Engine;
class Lesson;

// What the worker produced since the GUI last asked (plain values).
struct RunnerOutput {
    std::vector<SeriesRow> rows;
    std::vector<Marker> markers;
    std::vector<Marker> races; // the tag races so far, each time a new kind struck (Engine::tagRaces)
    std::vector<TraceRecord> trace;
    std::uint64_t traceDropped = 0;
};

// Drives one Engine on a TBB arena worker so the GUI thread never simulates.
// The GUI reads immutable snapshots and drains produced rows/markers/trace
// records; commands go through the engine's inbox. Pacing keeps a (wall,
// simulated) anchor and a speed; when the engine cannot keep up it drops
// time (re-anchors) instead of queueing work.
class EngineRunner : public QObject {
    Q_OBJECT
public:
    explicit EngineRunner(QObject* parent = nullptr);
    ~EngineRunner() override;

    // Stops the worker and starts a fresh engine on `scenario` (paused at t = 0).
    void load(const Scenario& scenario);
    const Scenario& scenario() const { return m_scenario; }

    void run();
    void pause();
    void step(); // exactly one event
    // Runs until `until` holds (at most a million events), then pauses.
    void stepUntil(StopPtr until);
    void stepToInteresting() { stepUntil(stop::interesting()); }
    // Plays steps from..to of `lesson` on the worker (Lesson::play: switches, then its stop), then
    // pauses and emits lessonPlayed(to, error).
    void playLesson(std::shared_ptr<const Lesson> lesson, int from, int to);
    // The run where it stands now as a session (session/Session.h); pauses it.
    Session currentSession();
    // Replays `session` (to its moment, to::Event `event` or to::Time `t`) on the worker into an
    // engine of its own, then emits sessionReplayed(error); the run on screen is untouched until
    // adoptReplayed() puts the replayed engine in its place (after the window has loaded its scenario).
    // A replay of timeline() (the same scenario and commands) is a move along this run: the
    // checkpoints stay, and going forward from there makes the run's later commands again.
    void replaySession(std::shared_ptr<const Session> session, Session::To to = Session::To::Moment,
        std::uint64_t event = 0, SimTime t = {});
    // The run to the furthest point it reached, as a session; pauses it. After a move back it stays
    // the run the timeline shows until something changes the run there (a branch: post(), Next
    // interesting or a lesson step from a point gone back to), which drops the part after it.
    Session timeline();
    // The timeline's end: the furthest simulated time the run reached (GUI thread).
    std::int64_t furthestNs() const;
    // A branch keeps the course it left as the other branch, until dropped or replaced by the next
    // branch. Switching goes to the other branch where the two part (a replay; sessionReplayed),
    // and keeps the course it leaves as the other one.
    bool hasOtherBranch() const { return m_otherAtNs.load() >= 0; }
    std::int64_t otherBranchAtNs() const { return m_otherAtNs.load(); } // where the two part, -1: none
    void switchBranch();
    void dropOtherBranch();
    void adoptReplayed();
    // True while the worker runs, steps or plays (the GUI keeps drawing until it is idle).
    bool busy() const;
    bool isRunning() const { return m_running.load(); }
    // Simulated seconds per wall second; <= 0 runs as fast as possible.
    void setSpeed(double speed);
    double speed() const { return m_speed.load(); }
    void setPauseOnStall(bool on) { m_pauseOnStall = on; }
    // A/B comparison: this runner never runs ahead of `leader`'s simulated time.
    void followLeader(const EngineRunner* leader) { m_leader = leader; }
    // A run pauses when its clock reaches `t` (at any speed, exactly there); a negative t: never.
    void setPauseAt(SimTime t) { m_pauseAtNs = t.ns(); }
    // Runs as fast as it can to `t` and pauses there, once; the speed and the pause time set stay
    // for the runs after (a run B catching up with A).
    void runTo(SimTime t);
    std::int64_t simulatedNs() const { return m_simNs.load(); }

    // A live change: applied at the next event boundary while running, at once while paused
    // (so liveScenarioJson() shows it on return).
    void post(const Command& c);
    // The scenario the engine runs now, live changes applied (the engine is the only place that
    // applies them).
    std::string liveScenarioJson() const;
    std::shared_ptr<const Snapshot> snapshot() const;
    RunnerOutput drain();
    std::uint64_t generation() const { return m_generation; }

signals:
    void stateChanged(bool running);
    void stallDetected(const QString& explanation, const std::vector<blkmq::StallStep>& steps);
    // The tag allocator's race struck for the first time (a lost tag, or a missed wake-up).
    void tagRace(const QString& explanation);
    void finished();
    void lessonPlayed(int step, const QString& error);
    void sessionReplayed(const QString& error);
    // The run took a new branch at `ns` (a change at a point gone back to): what came after is gone.
    void branched(std::int64_t ns);

private:
    // A new run on `engine` (of `scenario`, with its trace ring): the worker stopped, its output,
    // checkpoints and branches dropped (load(), and adoptReplayed() with a replayed engine).
    void reset(const Scenario& scenario, std::unique_ptr<Engine> engine);
    void startWorker();
    void stopWorker();
    void workerLoop(std::uint64_t generation);
    void collect(); // worker: move new rows/markers into the outbox, publish a snapshot
    QString raceText(); // the tag races so far, one line each; they go into the output's races too
    static int raceKinds(const Counters& c); // kinds of tag race seen: lost tags, missed wake-ups
    void notify(int what, const QString& text = {}, std::vector<StallStep> steps = {});

    struct Impl;
    std::unique_ptr<Impl> m_impl;
    Scenario m_scenario;
    std::unique_ptr<Engine> m_engine;
    std::atomic<bool> m_running { false };
    std::atomic<bool> m_stop { false };
    std::atomic<int> m_steps { 0 };
    StopPtr m_until; // set while the worker is stopped, taken by the worker
    struct LessonJob {
        std::shared_ptr<const Lesson> lesson;
        int from = 0, to = -1;
    };
    LessonJob m_lessonJob; // likewise
    struct SessionJob {
        std::shared_ptr<const Session> session;
        Session::To to = Session::To::Moment;
        std::uint64_t event = 0;
        SimTime t;
        bool thisRun = false; // a move along timeline()
    };
    SessionJob m_sessionJob; // likewise
    std::unique_ptr<Engine> m_replayed; // the worker's replay, until adoptReplayed() takes it
    bool m_replayedIsThisRun = false; // a move along the timeline: the checkpoints stay
    // The run to its furthest point, once it went back (else null), and, while the engine stands
    // before that point, the commands it makes again as it goes forward (the same session). Set
    // while the worker is stopped; the worker reads them and drops m_future when it gets there.
    std::shared_ptr<const Session> m_furthest;
    std::shared_ptr<const Session> m_future;
    std::atomic<std::int64_t> m_furthestNs { 0 };
    void branch(); // the worker stopped: a change at a point gone back to keeps what came after aside
    struct OtherBranch {
        std::shared_ptr<const Session> run; // to its furthest point
        Checkpoints later; // its copies after the point where the two part
        std::uint64_t events = 0; // the point: events processed, and time
        SimTime at;
    };
    std::unique_ptr<OtherBranch> m_other; // the worker's, or the GUI thread's while it is stopped
    std::atomic<std::int64_t> m_otherAtNs { -1 };
    // Copies of the run to replay from (engine/Checkpoints.h): offered by collect(), read by
    // replays; the worker's, or the GUI thread's while the worker is stopped.
    Checkpoints m_checkpoints;
    Scenario m_replayedScenario;
    int m_lessonStep = -1; // the step the last job played to
    std::atomic<double> m_speed { 1e-4 };
    std::atomic<std::int64_t> m_pauseAtNs { -1 };
    std::atomic<std::int64_t> m_runToNs { -1 }; // runTo()'s goal until it is reached
    std::atomic<bool> m_pauseOnStall { true };
    std::atomic<bool> m_reanchor { true };
    std::atomic<std::int64_t> m_simNs { 0 }; // published by the worker for followers
    const EngineRunner* m_leader = nullptr;
    std::uint64_t m_generation = 0;
    std::mutex m_outMutex;
    RunnerOutput m_out;
    std::size_t m_rowsTaken = 0;
    std::size_t m_markersTaken = 0;
    bool m_stallSeen = false;
    int m_racesSeen = 0; // kinds of tag race already reported (lost tags, missed wake-ups)
};

} // namespace blkmq
