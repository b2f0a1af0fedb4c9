// TBB headers first: oneapi/tbb/profiling.h declares emit(), which Qt's
// `emit` macro would break (TOOLCHAIN.md).
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

#include "EngineRunner.h"

#include "experiment/TbbHandoff.h"

#include "engine/Engine.h"
#include "lesson/Lesson.h"
#include "scenario/ScenarioLoader.h"

#include <QMetaObject>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <thread>

namespace blkmq {

// Trace records the window's engine keeps for the event log (TraceRing).
constexpr std::size_t kTraceCapacity = 1 << 16;

// One arena slot, none reserved for the GUI thread: the simulation always
// runs on a TBB worker, and the GUI thread only ever waits for it to stop.
// A runner keeps its worker for as long as it runs, so the process asks TBB
// for two workers more than it would have (an A/B comparison runs two); the
// same value from every runner, since TBB applies the smallest one.
struct EngineRunner::Impl {
    tbb::global_control workers { tbb::global_control::max_allowed_parallelism,
        std::max<std::size_t>(2, std::thread::hardware_concurrency()) + 2 };
    tbb::task_arena arena { 1, 0 };
    std::mutex mutex;
    std::condition_variable idle;
    bool active = false;
};

EngineRunner::EngineRunner(QObject* parent)
    : QObject(parent)
    , m_impl(std::make_unique<Impl>())
{
}

EngineRunner::~EngineRunner() { stopWorker(); }

void EngineRunner::load(const Scenario& scenario)
{
    auto engine = std::make_unique<Engine>(scenario);
    engine->enableTrace(kTraceCapacity);
    reset(scenario, std::move(engine));
}

void EngineRunner::reset(const Scenario& scenario, std::unique_ptr<Engine> engine)
{
    stopWorker();
    m_scenario = scenario;
    m_engine = std::move(engine);
    m_engine->publishSnapshot();
    m_checkpoints.clear();
    m_furthest = m_future = nullptr;
    m_furthestNs = 0;
    m_other.reset();
    m_otherAtNs = -1;
    ++m_generation;
    m_running = false;
    m_runToNs = -1;
    m_steps = 0;
    m_stallSeen = false;
    m_racesSeen = 0;
    m_simNs = 0;
    m_rowsTaken = m_markersTaken = 0;
    std::lock_guard lock(m_outMutex);
    m_out = RunnerOutput {};
}

void EngineRunner::startWorker()
{
    const std::uint64_t gen = m_generation;
    m_stop = false;
    {
        std::lock_guard lock(m_impl->mutex);
        m_impl->active = true;
    }
    // What the GUI thread did before starting the worker (load a new engine, post) and the task it
    // builds here happen-before the loop, in a way ThreadSanitizer sees: the task is built and queued
    // while the hand-off is held, and the worker passes it before it reads what the task captured.
    const auto handoff = TbbHandoff::hold();
    m_impl->arena.enqueue([this, gen] {
        TbbHandoff::pass();
        workerLoop(gen);
        std::lock_guard lock(m_impl->mutex);
        m_impl->active = false;
        m_impl->idle.notify_all();
    });
}

void EngineRunner::stopWorker()
{
    m_stop = true;
    std::unique_lock lock(m_impl->mutex);
    m_impl->idle.wait(lock, [this] { return !m_impl->active; });
    m_stop = false;
}

void EngineRunner::run()
{
    m_runToNs = -1; // Run: on at the speed set (a runTo() under way goes on as a plain run)
    if (m_running)
        return;
    stopWorker(); // a step or a command may still be in progress
    if (m_engine->finished())
        return;
    m_running = true;
    m_reanchor = true;
    emit stateChanged(true);
    startWorker();
}

void EngineRunner::runTo(SimTime t)
{
    pause();
    run();
    m_runToNs = t.ns(); // after run(), which drops a runTo() under way
}

void EngineRunner::pause()
{
    stopWorker();
    if (m_running.exchange(false))
        emit stateChanged(false);
}

void EngineRunner::step()
{
    pause();
    ++m_steps;
    startWorker();
}

void EngineRunner::stepUntil(StopPtr until)
{
    pause();
    m_until = std::move(until);
    startWorker();
}

void EngineRunner::playLesson(std::shared_ptr<const Lesson> lesson, int from, int to)
{
    pause();
    m_lessonJob = { std::move(lesson), from, to };
    startWorker();
}

Session EngineRunner::currentSession()
{
    pause();
    TbbHandoff::pass(); // the worker's last writes to the engine happen-before ours
    return Session::of(*m_engine, m_scenario.sourceJson);
}

void EngineRunner::replaySession(std::shared_ptr<const Session> session, Session::To to, std::uint64_t event, SimTime t)
{
    if (!m_engine) { // nothing loaded yet: the worker needs an engine to run beside the replay
        auto scenario = session->scenarioOf();
        if (!scenario) {
            emit sessionReplayed(QString::fromStdString(scenario.error()));
            return;
        }
        load(*scenario);
    }
    pause();
    const bool thisRun = m_furthest && session->scenario == m_furthest->scenario
        && session->commands == m_furthest->commands && session->events == m_furthest->events;
    m_sessionJob = { std::move(session), to, event, t, thisRun };
    startWorker();
}

Session EngineRunner::timeline()
{
    pause();
    TbbHandoff::pass(); // the worker's last writes to the engine happen-before ours
    if (!m_furthest || m_furthest->events <= m_engine->events())
        m_furthest = std::make_shared<const Session>(Session::of(*m_engine, m_scenario.sourceJson));
    m_furthestNs = m_furthest->at_ns;
    return *m_furthest;
}

std::int64_t EngineRunner::furthestNs() const { return std::max(m_furthestNs.load(), m_simNs.load()); }

void EngineRunner::switchBranch()
{
    if (!m_other)
        return;
    const auto here = std::make_shared<const Session>(timeline()); // pauses; this course to its end
    std::unique_ptr<OtherBranch> other = std::move(m_other);
    m_other = std::make_unique<OtherBranch>(
        OtherBranch { here, m_checkpoints.takeAfter(other->events), other->events, other->at });
    m_checkpoints.putBack(std::move(other->later));
    m_furthest = other->run; // a move along that course: it goes on with its own commands
    m_furthestNs = other->run->at_ns;
    replaySession(other->run, Session::To::Time, 0, other->at);
}

void EngineRunner::dropOtherBranch()
{
    pause();
    m_other.reset();
    m_otherAtNs = -1;
}

void EngineRunner::branch()
{
    if (!m_future)
        return;
    m_other = std::make_unique<OtherBranch>(
        OtherBranch { m_furthest, m_checkpoints.takeAfter(m_engine->events()), m_engine->events(), m_engine->now() });
    m_otherAtNs = m_engine->now().ns();
    m_future = m_furthest = nullptr;
    m_furthestNs = m_engine->now().ns();
    const std::int64_t at = m_engine->now().ns();
    const std::uint64_t gen = m_generation;
    const auto handoff = TbbHandoff::hold(); // the closure is written here and read on the GUI thread
    QMetaObject::invokeMethod(
        this,
        [this, gen, at] {
            TbbHandoff::pass();
            if (gen == m_generation)
                emit branched(at);
        },
        Qt::QueuedConnection);
}

void EngineRunner::adoptReplayed()
{
    stopWorker();
    TbbHandoff::pass();
    if (!m_replayed)
        return;
    Checkpoints kept = std::move(m_checkpoints);
    const auto furthest = m_furthest;
    auto other = std::move(m_other);
    reset(m_replayedScenario, std::move(m_replayed)); // what the window has taken, too
    if (m_replayedIsThisRun) { // a move along the timeline: the run ahead is still this run's
        m_checkpoints = std::move(kept);
        m_other = std::move(other);
        m_otherAtNs = m_other ? m_other->at.ns() : -1;
        m_furthest = furthest;
        m_furthestNs = furthest->at_ns;
        m_future = m_engine->events() < furthest->events ? furthest : nullptr;
    }
    collect();
    // What the replayed run found is told as a live run tells it: the stall banner, the race banner.
    if (m_engine->stallDetected()) {
        m_stallSeen = true;
        emit stallDetected(QString::fromStdString(m_engine->stallExplanation()), m_engine->stallSteps());
    }
    if ((m_racesSeen = raceKinds(m_engine->counters())) > 0)
        emit tagRace(raceText());
}

int EngineRunner::raceKinds(const Counters& c) { return (c.tag_lost > 0) + (c.tag_missed_wakeups > 0); }

QString EngineRunner::raceText()
{
    QStringList text;
    const std::vector<Marker> races = m_engine->tagRaces();
    for (const Marker& m : races)
        text << QStringLiteral("t=%1 ms: %2")
                    .arg(static_cast<double>(m.t_ns) / 1e6, 0, 'f', 4)
                    .arg(QString::fromStdString(m.text));
    std::lock_guard lock(m_outMutex);
    m_out.races.insert(m_out.races.end(), races.begin(), races.end());
    return text.join(QLatin1Char('\n'));
}

bool EngineRunner::busy() const
{
    std::lock_guard lock(m_impl->mutex);
    return m_impl->active;
}

void EngineRunner::setSpeed(double speed)
{
    m_speed = std::isfinite(speed) && speed > 0 && speed <= 1e3 ? speed : 0.0; // beyond: as fast as it goes
    m_reanchor = true;
}

void EngineRunner::post(const Command& c)
{
    if (m_running && m_future) { // a change at a point gone back to: a branch, made while stopped
        pause();
        post(c);
        run();
        return;
    }
    m_engine->inbox().post(c);
    if (!m_running) { // paused: apply it here, so the marker and the live scenario show at once
        stopWorker();
        TbbHandoff::pass(); // the worker's last writes to the engine happen-before ours
        branch();
        m_engine->applyPendingCommands();
        collect();
        if (m_steps > 0 || m_until || m_lessonJob.lesson) // a step the stop interrupted
            startWorker();
    }
}

std::string EngineRunner::liveScenarioJson() const
{
    const auto s = snapshot();
    return s && s->scenarioJson ? ScenarioLoader::withChanges(*s->scenarioJson, *s->liveChanges)
                                : m_scenario.sourceJson;
}

std::shared_ptr<const Snapshot> EngineRunner::snapshot() const { return m_engine ? m_engine->snapshot() : nullptr; }

RunnerOutput EngineRunner::drain()
{
    RunnerOutput out;
    {
        std::lock_guard lock(m_outMutex);
        out = std::move(m_out);
        m_out = RunnerOutput {};
    }
    // The trace ring is single-consumer: only the GUI thread reads it.
    if (m_engine && m_engine->trace())
        out.traceDropped = m_engine->trace()->read(out.trace, 20000);
    return out;
}

void EngineRunner::collect()
{
    m_checkpoints.offer(*m_engine);
    m_simNs = m_engine->now().ns();
    m_engine->publishSnapshot();
    const auto& rows = m_engine->series().rows();
    const auto& markers = m_engine->markers();
    std::lock_guard lock(m_outMutex);
    for (; m_rowsTaken < rows.size(); ++m_rowsTaken)
        m_out.rows.push_back(rows[m_rowsTaken]);
    for (; m_markersTaken < markers.size(); ++m_markersTaken)
        m_out.markers.push_back(markers[m_markersTaken]);
}

void EngineRunner::notify(int what, const QString& text, std::vector<StallStep> steps)
{
    const std::uint64_t gen = m_generation;
    const auto handoff = TbbHandoff::hold(); // the closure is written here and read on the GUI thread
    QMetaObject::invokeMethod(
        this,
        [this, gen, what, text, steps = std::move(steps)] {
            TbbHandoff::pass();
            if (gen != m_generation)
                return; // from an engine that was reset since
            if (what == 0 || what == 4) { // the end of the scenario, or the pause time reached
                // The worker marked the run stopped when it stopped; a run started since goes on.
                if (!m_running)
                    emit stateChanged(false);
                if (what == 0)
                    emit finished();
            } else if (what == 3) {
                emit lessonPlayed(m_lessonStep, text);
            } else if (what == 5) {
                emit sessionReplayed(text);
            } else if (what == 1 || what == 2) {
                if (what == 1)
                    emit stallDetected(text, steps);
                else
                    emit tagRace(text);
                if (m_pauseOnStall && !m_running)
                    emit stateChanged(false);
            }
        },
        Qt::QueuedConnection);
}

void EngineRunner::workerLoop(std::uint64_t generation)
{
    using clock = std::chrono::steady_clock;
    auto wallAnchor = clock::now();
    SimTime simAnchor = m_engine->now();
    auto lastPublish = clock::now() - std::chrono::seconds(1);
    const auto publishEvery = std::chrono::milliseconds(15);
    const auto checkStall = [&] {
        if (!m_stallSeen && m_engine->stallDetected()) {
            m_stallSeen = true;
            notify(1, QString::fromStdString(m_engine->stallExplanation()), m_engine->stallSteps());
            return true;
        }
        return false;
    };
    // What pauses a run when pause-on-stall is on: the stall detector firing, or a kind of tag race
    // not reported yet (checked on two counters, explained only when one appears).
    struct PauseOn : StopCondition {
        const EngineRunner& runner;
        explicit PauseOn(const EngineRunner& r)
            : runner(r)
        {
        }
        bool newRace(const Engine& e) const { return raceKinds(e.counters()) > runner.m_racesSeen; }
        bool reached(const Engine& e) const override
        {
            return (!runner.m_stallSeen && e.stallDetected()) || newRace(e);
        }
        std::string describe() const override { return "a stall or a new tag race"; }
    } pauseOn(*this);
    const auto checkRace = [&] {
        if (!pauseOn.newRace(*m_engine))
            return false;
        m_racesSeen = raceKinds(m_engine->counters());
        notify(2, raceText());
        return true;
    };
    while (!m_stop && generation == m_generation) {
        m_engine->applyPendingCommands();
        if (m_steps > 0) {
            --m_steps;
            if (m_future) // a point gone back to: the run's later commands are made again
                m_future->replayInto(*m_engine, Session::To::Event, {}, m_engine->events() + 1);
            else
                m_engine->step();
            checkStall();
            checkRace();
            collect();
            continue;
        }
        if (m_lessonJob.lesson) {
            branch(); // its switches change the run from here
            const LessonJob job = std::exchange(m_lessonJob, {});
            std::string error;
            int i = job.from;
            for (; i <= job.to && error.empty() && !m_stop; ++i)
                error = job.lesson->play(*m_engine, i).error;
            if (error.empty() && i <= job.to)
                error = "interrupted before step " + std::to_string(i + 1) + " was reached";
            checkStall();
            checkRace();
            collect();
            m_lessonStep = job.to;
            notify(3, QString::fromStdString(error));
            continue;
        }
        if (m_sessionJob.session) { // a replay into an engine of its own: the one on screen stays as it is
            const SessionJob job = std::exchange(m_sessionJob, {});
            auto scenario = job.session->scenarioOf();
            std::string error = scenario ? std::string() : scenario.error();
            if (error.empty()) {
                auto engine = std::make_unique<Engine>(*scenario);
                engine->enableTrace(kTraceCapacity);
                // From a checkpoint far enough back that the event log shows what a replay from t = 0 would.
                error = job.session->replayInto(*engine, job.to, job.t, job.event, &m_checkpoints, kTraceCapacity);
                if (error.empty()) {
                    m_replayed = std::move(engine);
                    m_replayedScenario = *scenario;
                    m_replayedIsThisRun = job.thisRun;
                }
            }
            notify(5, QString::fromStdString(error)); // its hand-off orders m_replayed for the GUI thread
            continue;
        }
        if (m_until) {
            const StopPtr until = std::move(m_until);
            std::string error;
            if (m_future) // a point gone back to: on with the run's later commands to the stop
                m_future->replayUntil(*m_engine, *until, 1000000, error);
            if (!m_future || !error.empty()) {
                branch();
                m_engine->runUntil(*until, 1000000);
            }
            checkStall();
            checkRace();
            collect();
            continue;
        }
        if (!m_running)
            break;
        if (m_engine->finished()) {
            m_engine->applyPendingCommands(); // a change posted as the run ended still gets its marker
            m_running = false; // now, not when the GUI thread hears of it: a Run or Pause meanwhile sees it
            collect();
            notify(0);
            break;
        }
        const std::int64_t runTo = m_runToNs; // runTo(): as fast as it goes, once
        const double speed = runTo >= 0 ? 0.0 : m_speed.load();
        const auto now = clock::now();
        if (m_reanchor.exchange(false)) {
            wallAnchor = now;
            simAnchor = m_engine->now();
        }
        SimTime target;
        if (speed <= 0) {
            target = m_engine->now() + msec(1);
        } else {
            const double wall = std::chrono::duration<double>(now - wallAnchor).count();
            target = simAnchor + SimTime(static_cast<std::int64_t>(wall * speed * 1e9));
            // Behind by more than a tenth of a second of wall time: drop time, do not queue.
            const auto maxLag = SimTime(static_cast<std::int64_t>(0.1 * speed * 1e9) + 1);
            if (target - m_engine->now() > maxLag) {
                simAnchor = m_engine->now();
                wallAnchor = now;
                target = m_engine->now() + maxLag;
            }
        }
        const std::int64_t pauseAt = runTo >= 0 ? runTo : m_pauseAtNs.load();
        if (pauseAt >= 0 && m_engine->now().ns() >= pauseAt) {
            if (runTo >= 0)
                m_runToNs = -1; // reached: the next run goes at the speed set, to the pause time set
            m_running = false;
            collect();
            notify(4);
            break;
        }
        if (pauseAt >= 0)
            target = std::min(target, SimTime(pauseAt));
        if (m_leader) // lockstep: never ahead of the runner we are compared with
            target = std::min(target, SimTime(m_leader->simulatedNs()));
        if (target <= m_engine->now()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            continue;
        }
        // Bounded chunks keep commands, pauses and snapshots responsive. A stall or a tag race
        // pauses the run at any speed at the event that made it, the same every time.
        const auto chunkEnd = clock::now() + std::chrono::milliseconds(8);
        while (m_engine->now() < target && clock::now() < chunkEnd && !m_stop) {
            const SimTime next = std::min(target, m_engine->now() + usec(50));
            bool found = false;
            if (m_future) // a point gone back to: on with the run's later commands (a stall still pauses below)
                m_future->replayInto(*m_engine, Session::To::Time, next);
            else
                found = m_pauseOnStall ? m_engine->runUntil(next, pauseOn) : (m_engine->runUntil(next), false);
            m_simNs = m_engine->now().ns();
            if (found)
                break;
        }
        if ((checkStall() | checkRace()) && m_pauseOnStall) {
            m_running = false;
            collect();
            break;
        }
        if (clock::now() - lastPublish >= publishEvery) {
            collect();
            lastPublish = clock::now();
        }
    }
    collect();
}

} // namespace blkmq
