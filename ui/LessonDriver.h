#pragma once

#include "RunSet.h"

#include <QObject>

class QDockWidget;
class QMainWindow;

namespace blkmq {

class Inspector;
class LessonPanel;
class PlotPanel;
class TimelineBar;
class TopologyScene;
class WindowHost;
struct Session;

// Plays the open lesson (LessonPanel) on run A: a chosen lesson shows its machine, a step loads its
// scenario and plays to its stop (EngineRunner::playLesson), then the canvas outlines what the step
// points at, the inspector shows it, the timeline marks it and the plots show those the step names.
class LessonDriver : public QObject {
    Q_OBJECT
public:
    LessonDriver(WindowHost& host, RunSet& runs, LessonPanel* lessons, PlotPanel* plots, TopologyScene* scene,
        Inspector* inspector, TimelineBar* timeline, QMainWindow* window);

    // The Lessons dock and the one under it (the scenario and the inspector): an open lesson gives
    // the narrative three quarters of the column.
    void setDocks(QDockWidget* lessons, QDockWidget* below);
    // A built-in name or a file; shows the panel. An error, or "".
    QString open(const QString& nameOrPath);
    // Plays `step` (0-based); `fresh`: from its scenario's start, as a click on it does.
    void play(int step, bool fresh);
    // A session's lesson and step, shown without replaying them (the run is the session's).
    void restore(const Session& session);
    // The lesson and step a session saves ("" when none is open).
    void describe(Session& session) const;

private:
    void showMachine();
    void played(int step, const QString& error);
    void setPlots(int step);

    WindowHost& m_host;
    RunSet& m_runs;
    LessonPanel* m_lessons;
    PlotPanel* m_plots;
    TopologyScene* m_scene;
    Inspector* m_inspector;
    TimelineBar* m_timeline;
    QMainWindow* m_window;
    QDockWidget* m_dock = nullptr;
    QDockWidget* m_below = nullptr;
};

} // namespace blkmq
