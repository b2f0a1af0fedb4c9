#pragma once

#include "RunSet.h"
#include "engine/Snapshot.h"
#include "sim/SimTime.h"

#include <QObject>

#include <string>
#include <vector>

class QAction;
class QComboBox;
class QLabel;
class QSlider;
class QSpinBox;
class QToolBar;
class QWidget;

namespace blkmq {

class EventLogModel;
class WindowHost;

// Running the runs: Run/Pause, Step, Next interesting and Reset, the speed, where they pause
// (--after, a stall), the clock, the RNG seed and the preset chooser; and, when a step or Next
// interesting arrives, what it stopped at, on the status bar.
class RunControl : public QObject {
    Q_OBJECT
public:
    RunControl(WindowHost& host, RunSet& runs, QWidget* parent);

    // The toolbar's run controls and speed; then its clock, seed and presets.
    void addControls(QToolBar* tb);
    void addScenarioChoice(QToolBar* tb);
    QAction* runAction() const { return m_runAction; }
    QAction* stepAction() const { return m_stepAction; }
    QAction* nextAction() const { return m_nextAction; }
    QAction* resetAction() const { return m_resetAction; }
    QAction* pauseOnStallAction() const { return m_pauseOnStall; }

    void runOrPause();
    void step();
    void stepToInteresting();
    void reset(); // the live scenario again from t = 0, paused
    void setSpeedIndex(int index);
    void setSpeed(double speed); // simulated seconds per wall second (<= 0: as fast as possible)
    void setPauseAt(SimTime t);
    bool atEnd() const;
    void greet();

    // A scenario loaded: the preset chooser and the seed show it.
    void showScenario(const Scenario& scenario);
    void showTime(std::int64_t ns);
    // A fresh snapshot of run A came: say what a pending Step or Next interesting stopped at.
    void reportStep(const Snapshot& snap, const std::vector<TraceRecord>& trace, const EventLogModel& log);

signals:
    void overridesRequested(const std::vector<std::string>& sets); // the seed was edited
    void presetRequested(const QString& name);

private:
    bool refuseAtEnd();

    WindowHost& m_host;
    RunSet& m_runs;
    QAction* m_runAction;
    QAction* m_stepAction;
    QAction* m_nextAction;
    QAction* m_resetAction;
    QAction* m_pauseOnStall;
    QSlider* m_speed;
    QLabel* m_speedLabel;
    QLabel* m_time;
    QSpinBox* m_seed;
    QComboBox* m_presets;
    // Step (1) or Next interesting (2) was pressed: say what the event was when its snapshot comes.
    int m_stepPending = 0;
    Counters m_interestingFrom; // the counters when Next interesting was pressed: what changed is what it stopped at
    bool m_stalledBefore = false;
};

} // namespace blkmq
