#include "RunControl.h"

#include "EventLogModel.h"
#include "UiText.h"
#include "WindowHost.h"
#include "engine/StopCondition.h"
#include "scenario/ScenarioLoader.h"
#include "sim/Duration.h"

#include <cmath>

#include <QAction>
#include <QComboBox>
#include <QLabel>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QToolBar>

namespace blkmq {

namespace {
// Simulated seconds per wall second; the last step runs as fast as possible.
const double kSpeeds[] = { 1e-6, 3e-6, 1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 1e-2, 1e-1, 1.0, 0.0 };
constexpr int kSpeedSteps = sizeof kSpeeds / sizeof kSpeeds[0];

QString speedText(double s)
{
    if (s <= 0)
        return QObject::tr("as fast as possible");
    const double perSecond = s * 1e9; // ns of simulated time per wall second
    return QString::fromStdString(formatDuration(SimTime(static_cast<std::int64_t>(perSecond))))
        + QObject::tr(" per second");
}

QString micros(std::int64_t ns) { return QString::number(static_cast<double>(ns) / 1e3, 'f', 3); }
} // namespace

RunControl::RunControl(WindowHost& host, RunSet& runs, QWidget* parent)
    : QObject(parent)
    , m_host(host)
    , m_runs(runs)
    , m_runAction(new QAction(tr("Run"), this))
    , m_stepAction(new QAction(tr("Step"), this))
    , m_nextAction(new QAction(tr("Next interesting"), this))
    , m_resetAction(new QAction(tr("Reset"), this))
    , m_pauseOnStall(new QAction(tr("Pause when a stall is detected"), this))
    , m_speed(new QSlider(Qt::Horizontal))
    , m_speedLabel(new QLabel)
    , m_time(new QLabel)
    , m_seed(new QSpinBox)
    , m_presets(new QComboBox)
{
    connect(m_runAction, &QAction::triggered, this, &RunControl::runOrPause);
    m_runAction->setCheckable(true);
    m_runAction->setShortcut(Qt::Key_Space);
    m_runAction->setToolTip(tr("Run or pause (Space)"));
    connect(m_stepAction, &QAction::triggered, this, &RunControl::step);
    m_stepAction->setShortcut(Qt::Key_Period);
    m_stepAction->setToolTip(tr("Process exactly one event (.)"));
    connect(m_nextAction, &QAction::triggered, this, &RunControl::stepToInteresting);
    m_nextAction->setShortcut(Qt::Key_N);
    m_nextAction->setToolTip(
        tr("Run to the next IPI, ksoftirqd wake-up, requeue, RESTART set, restart, skipped restart or stall (N)"));
    connect(m_resetAction, &QAction::triggered, this, &RunControl::reset);
    m_resetAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    m_pauseOnStall->setCheckable(true);
    m_pauseOnStall->setChecked(true);
    connect(m_pauseOnStall, &QAction::toggled, m_runs.a(), &EngineRunner::setPauseOnStall);

    m_speed->setRange(0, kSpeedSteps - 1);
    m_speed->setFixedWidth(160);
    m_speed->setValue(4);
    connect(m_speed, &QSlider::valueChanged, this, &RunControl::setSpeedIndex);
    m_speedLabel->setMinimumWidth(150);
    auto* faster = new QAction(this);
    faster->setShortcut(Qt::Key_Plus);
    connect(faster, &QAction::triggered, this, [this] { m_speed->setValue(m_speed->value() + 1); });
    auto* slower = new QAction(this);
    slower->setShortcut(Qt::Key_Minus);
    connect(slower, &QAction::triggered, this, [this] { m_speed->setValue(m_speed->value() - 1); });
    parent->addAction(faster);
    parent->addAction(slower);
    m_time->setMinimumWidth(150);
    m_seed->setRange(0, 2147483647);
    connect(m_seed, &QSpinBox::editingFinished, this, [this] {
        if (static_cast<std::uint64_t>(m_seed->value()) != m_runs.a()->scenario().seed)
            emit overridesRequested({ "seed=" + std::to_string(m_seed->value()) });
    });
    for (const auto& p : ScenarioLoader::presets())
        m_presets->addItem(q(p.name));
    m_presets->setPlaceholderText(tr("(not a preset)"));
    connect(m_presets, &QComboBox::activated, this, [this](int) { emit presetRequested(m_presets->currentText()); });

    EngineRunner* a = m_runs.a();
    connect(a, &EngineRunner::stateChanged, this, [this](bool running) {
        m_runAction->setText(running ? tr("Pause") : tr("Run"));
        m_runAction->setChecked(running);
        m_host.wake();
    });
    connect(a, &EngineRunner::finished, this, [this] {
        m_host.showMessage(tr("The run has ended at %1: Reset (Ctrl+R) to start it again")
                               .arg(q(formatDuration(m_runs.a()->scenario().duration))),
            15000);
    });
    setSpeedIndex(m_speed->value());
}

void RunControl::addControls(QToolBar* tb)
{
    tb->addAction(m_runAction);
    tb->addAction(m_stepAction);
    tb->addAction(m_nextAction);
    tb->addAction(m_resetAction);
    tb->addSeparator();
    tb->addWidget(new QLabel(tr(" Speed ")));
    tb->addWidget(m_speed);
    tb->addWidget(m_speedLabel);
}

void RunControl::addScenarioChoice(QToolBar* tb)
{
    tb->addSeparator();
    tb->addWidget(m_time);
    tb->addSeparator();
    tb->addWidget(new QLabel(tr(" RNG seed ")));
    tb->addWidget(m_seed);
    tb->addSeparator();
    tb->addWidget(new QLabel(tr(" Scenario ")));
    tb->addWidget(m_presets);
}

void RunControl::greet()
{
    if (!m_runs.a()->isRunning())
        runOrPause();
    m_host.showMessage(tr("%1 is running. Space pauses, . steps one event, N runs to the next interesting "
                          "one; the Lessons tab walks through the three threads, the Scenario box switches "
                          "presets.")
                           .arg(q(m_runs.a()->scenario().name)));
}

bool RunControl::refuseAtEnd()
{
    if (!atEnd())
        return false;
    m_host.showMessage(tr("The run has ended: Reset (Ctrl+R) to start it again"), 8000);
    return true;
}

void RunControl::runOrPause()
{
    const bool running = m_runs.a()->isRunning();
    if (!running && atEnd()) {
        m_runAction->setChecked(false);
        refuseAtEnd();
        return;
    }
    m_host.wake();
    for (const RunSession& s : m_runs.all)
        running ? s.runner->pause() : s.runner->run();
}

void RunControl::step()
{
    if (refuseAtEnd())
        return;
    m_stepPending = 1;
    m_runs.a()->step();
    m_host.wake();
}

void RunControl::stepToInteresting()
{
    if (refuseAtEnd())
        return;
    m_stepPending = 2;
    if (const auto snap = m_runs.a()->snapshot()) {
        m_interestingFrom = snap->counters;
        m_stalledBefore = snap->stalled;
    }
    m_runs.a()->stepToInteresting();
    m_host.wake();
}

void RunControl::reset()
{
    m_runs.pause();
    auto s = ScenarioLoader::fromText(m_runs.a()->liveScenarioJson(), "scenario");
    m_host.loadScenario(s ? *s : m_runs.a()->scenario());
}

void RunControl::setSpeedIndex(int index) { setSpeed(kSpeeds[std::clamp(index, 0, kSpeedSteps - 1)]); }

void RunControl::setPauseAt(SimTime t)
{
    for (const RunSession& session : m_runs.all)
        session.runner->setPauseAt(t);
}

void RunControl::setSpeed(double s)
{
    for (const RunSession& session : m_runs.all)
        session.runner->setSpeed(s);
    m_speedLabel->setText(speedText(s));
    // The slider shows the nearest step (max for <= 0) without setting the speed again.
    int nearest = kSpeedSteps - 1;
    if (s > 0) {
        nearest = 0;
        for (int i = 1; i < kSpeedSteps - 1; ++i)
            if (std::abs(std::log(kSpeeds[i] / s)) < std::abs(std::log(kSpeeds[nearest] / s)))
                nearest = i;
    }
    const QSignalBlocker quiet(m_speed);
    m_speed->setValue(nearest);
}

bool RunControl::atEnd() const
{
    const auto snap = m_runs.a()->snapshot();
    return snap && snap->now >= m_runs.a()->scenario().duration;
}

void RunControl::showScenario(const Scenario& scenario)
{
    m_runs.a()->setPauseOnStall(m_pauseOnStall->isChecked());
    // A scenario that is no preset (a file, a session, a counterexample) selects none of them.
    m_presets->setCurrentIndex(m_presets->findText(q(scenario.name)));
    m_seed->setValue(static_cast<int>(std::min<std::uint64_t>(scenario.seed, 2147483647)));
}

void RunControl::showTime(std::int64_t ns)
{
    m_time->setText(tr("t = %1 ms of %2")
                        .arg(static_cast<double>(ns) / 1e6, 0, 'f', 4)
                        .arg(q(formatDuration(m_runs.a()->scenario().duration))));
}

void RunControl::reportStep(const Snapshot& snap, const std::vector<TraceRecord>& trace, const EventLogModel& log)
{
    const QString at = micros(snap.now.ns());
    if (m_stepPending == 2) { // say where Next interesting stopped, and why
        QStringList why;
        for (const stop::InterestingCounter& i : stop::interestingCounters()) {
            const auto field = std::find_if(std::begin(kCounterFields), std::end(kCounterFields),
                [&](const CounterField& f) { return f.name == i.counter; });
            if (field != std::end(kCounterFields) && snap.counters.*(field->field) != m_interestingFrom.*(field->field))
                why << q(std::string(i.what));
        }
        if (snap.stalled && !m_stalledBefore)
            why << tr("the stall detector fired");
        m_host.showMessage(why.isEmpty()
                ? tr("Next interesting: nothing before t = %1 µs").arg(at)
                : tr("Next interesting: stopped at t = %1 µs: %2").arg(at, why.join(QStringLiteral("; "))),
            10000);
    } else if (m_stepPending == 1) { // say what a step did, even when nothing on the canvas moved
        m_host.showMessage(trace.empty()
                ? tr("Step: t = %1 µs; an event that leaves no trace (a timer, a CPU's next op)").arg(at)
                : tr("Step: t = %1 µs; %2").arg(micros(trace.back().time), log.describeRow(trace.back())),
            10000);
    }
    m_stepPending = 0;
}

} // namespace blkmq
