#pragma once

#include "Banners.h"
#include "CanvasView.h"
#include "ComparePanel.h"
#include "EventLogPanel.h"
#include "Exporter.h"
#include "Inspector.h"
#include "LessonDriver.h"
#include "PresentationMode.h"
#include "RunControl.h"
#include "RunSet.h"
#include "ScenarioFiles.h"
#include "TimeTravel.h"
#include "TimelineBar.h"
#include "TopologyScene.h"
#include "WindowHost.h"

#include <QMainWindow>

#include <memory>

class QDockWidget;
class QLabel;
class QSortFilterProxyModel;
class QTableView;
class QTextBrowser;
class QTimer;

namespace blkmq {

class EngineRunner;
class EventLogModel;
class LessonPanel;
class PatchPanel;
class PlotPanel;
class ScenarioPanel;

// The laboratory's window: it wires the jobs and the 60 Hz frame. Never simulates: an EngineRunner
// does, off this thread, and frame() pulls its snapshots and output. The jobs, each in its own file:
// RunControl (running, stepping, speed), ComparePanel (run B, seeds), Exporter (charts, CSV,
// canvas, traces), ScenarioFiles (presets, files, overrides), LessonDriver (lessons), TimeTravel (stepping back,
// seeking, branches, bookmarks, session files), Inspector (what is selected), StallBanner and RaceBanner (what went
// wrong), EventLogPanel (the log), CanvasView (zoom and fit); app/gui/main.cpp holds the command line.
class MainWindow : public QMainWindow, public WindowHost {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // The colours, the window geometry and the dock layout of the last session (QSettings); true if
    // a geometry was saved and restored.
    bool restoreSettings();
    // Loads a scenario (a preset or a validated file) and shows it paused at t = 0.
    void loadScenario(const Scenario& scenario) override;
    bool loadPreset(const QString& name, const std::vector<std::string>& sets = {});
    // Scenario sources (ScenarioFiles); each returns an error message naming what is wrong, or "".
    QString applyOverrides(const std::vector<std::string>& sets) { return m_files->applyOverrides(sets); }
    QString openFile(const QString& path) { return m_files->openFile(path); }
    QString openFioJob(const QString& path, const std::vector<std::string>& sets = {})
    {
        return m_files->openFioJob(path, sets);
    }
    QString exportScenario(const QString& path) const { return m_files->exportScenario(path); }

    // The parts, for the command line and the tests.
    EngineRunner* runner() const { return m_runner; }
    PatchPanel* patchPanel() const { return m_patches; }
    PlotPanel* plotPanel() const { return m_plots; }
    TopologyScene* scene() const { return m_scene; }
    QGraphicsView* canvasView() const { return m_canvas; }
    EventLogModel* eventLog() const { return m_log->model(); }
    QSortFilterProxyModel* eventLogFilter() const { return m_log->filter(); }
    QTableView* eventLogView() const { return m_log->view(); }
    QLabel* stallBanner() const { return m_stall; }
    QLabel* raceBanner() const { return m_race; }
    QLabel* kernelPathStrip() const { return m_inspector->kernelPathStrip(); }
    QTextBrowser* inspector() const { return m_inspector->view(); }
    ScenarioPanel* scenarioPanel() const { return m_scenarioPanel; }
    LessonPanel* lessonPanel() const { return m_lessons; }
    TimelineBar* timelineBar() const { return m_timeline; }
    const std::vector<SeriesRow>& seriesRows() const { return m_record.rows; }
    std::int64_t shownTimeNs() const { return m_shownNs; }
    bool drawing() const; // false once nothing runs, changes or moves (an idle window draws nothing)

    // The canvas (F fits; Ctrl+wheel, Ctrl++ and Ctrl+- zoom; a session keeps the zoom).
    void fitCanvas() { m_canvas->fit(); }
    void zoomCanvas(double factor) { m_canvas->zoom(factor); }
    // "cpu:N" or "hctx:N" in the inspector, as a click on it would; an error names what is wrong.
    QString inspect(const QString& what) { return m_inspector->inspect(what); }
    ObjectRef selection() const { return m_inspector->selection(); }

    // The stall banner: shown once a stall was detected in the current run; selecting a step
    // outlines and inspects its object and scrolls the log to its time.
    bool stalled() const { return m_stall->shown(); }
    const std::vector<StallStep>& stallSteps() const { return m_stall->steps(); }
    void selectStallStep(int step) { m_stall->select(step); }

    // Lessons: opens one (a built-in name or a file) and shows the panel; plays to `step` (0-based)
    // from its scenario's start, as a click on it would.
    QString openLesson(const QString& nameOrPath) { return m_lessonDriver->open(nameOrPath); }
    void playLessonTo(int step) { m_lessonDriver->play(step, true); }

    // A/B comparison (ComparePanel).
    void setCompare(bool on) { m_compare->setCompare(on); }
    // View > Colour-blind-safe colours (Palette): kept for the next start, drawn at once.
    void setColourBlindSafe(bool on);
    QString compareWith(const std::vector<std::string>& sets) { return m_compare->compareWith(sets); }
    EngineRunner* runnerB() const { return m_runs.comparing() ? m_runs.all[1].runner : nullptr; }
    PatchPanel* patchPanelB() const { return m_compare->patchesB(); }
    QString compareOverSeeds(int seeds) { return m_compare->compareOverSeeds(seeds); }
    QLabel* seedsTable() const { return m_compare->seedsTable(); }
    ComparePanel* comparePanel() const { return m_compare; }

    // Exports (Exporter): an error message naming the path, or "".
    static QString checkChartPath(const QString& path) { return Exporter::checkChartPath(path); }
    QString exportChart(const QString& path, int plot = 0, QSize size = {})
    {
        return m_exports->exportChart(path, plot, size);
    }
    int chartIndex(const QString& id) const { return m_exports->chartIndex(id); }
    QString exportCsv(const QString& path) const { return m_exports->exportCsv(path, m_travel->bookmarks()); }
    QString exportCanvas(const QString& path) { return m_exports->exportCanvas(path, m_shownNs); }
    QString exportTrace(const QString& path) { return m_exports->exportTrace(path, m_shownNs); }
    // The window as PNG, everything in it at one instant (the runs pause).
    QString saveScreenshot(const QString& path);

    // Time travel (TimeTravel) and session files (docs/sessions.md).
    QString saveSession(const QString& path) { return m_travel->saveSession(path); }
    QString openSession(const QString& path) { return m_travel->openSession(path); }
    void stepBack() { m_travel->stepBack(); }
    void seekTo(std::int64_t ns) { m_travel->seekTo(ns); }
    void switchBranch() { m_travel->switchBranch(); }
    void dropOtherBranch() { m_travel->dropOtherBranch(); }
    void addBookmark(const QString& note) { m_travel->addBookmark(note); }
    const std::vector<Session::Bookmark>& bookmarks() const { return m_travel->bookmarks(); }

    // Presentation mode (F11: full screen, panels hidden) and Hide panels (F9).
    PresentationMode* presentation() const { return m_presentation; }

    // Running (RunControl).
    bool atEnd() const { return m_control->atEnd(); }

signals:
    void traceExported(const QString& path, const QString& error);
    void sessionOpened(const QString& error);
    void seedsCompared();

public slots:
    void runOrPause() override { m_control->runOrPause(); }
    // The first window of a bare start: the scenario shown runs at once and the status bar says
    // what the keys do and where the lessons are.
    void greet() { m_control->greet(); }
    void step() { m_control->step(); }
    void stepToInteresting() { m_control->stepToInteresting(); }
    void reset() { m_control->reset(); }
    void setSpeedIndex(int index) { m_control->setSpeedIndex(index); }
    void setSpeed(double speed) { m_control->setSpeed(speed); }
    // Every run pauses when its clock reaches `t` (negative: never); --after and --quit-after.
    void setPauseAt(SimTime t) { m_control->setPauseAt(t); }
    void frame() override; // pulls the runners' output and redraws what changed (the 60 Hz timer)
    void wake() override; // starts the frame timer after it stopped on an idle window

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void clearRunView(bool keepPlots = false) override;
    void showMessage(const QString& text, int ms = 0) override;
    void buildMenus();
    void buildDocks();
    void restoreView(const Session& session); // a session file's plots, zoom and inspector
    void refreshFigures(); // the text read by people: A/B table, inspector, clock, legend

    RunSet m_runs;
    RunRecord m_record;
    EngineRunner* m_runner; // run A
    TopologyScene* m_scene;
    CanvasView* m_canvas;
    PatchPanel* m_patches;
    PlotPanel* m_plots;
    EventLogPanel* m_log;
    Inspector* m_inspector;
    ScenarioPanel* m_scenarioPanel;
    LessonPanel* m_lessons;
    StallBanner* m_stall;
    RaceBanner* m_race;
    TimelineBar* m_timeline;
    RunControl* m_control;
    ComparePanel* m_compare;
    TimeTravel* m_travel;
    LessonDriver* m_lessonDriver;
    Exporter* m_exports;
    ScenarioFiles* m_files;
    PresentationMode* m_presentation;
    QAction* m_colourBlindSafe = nullptr;
    QTimer* m_timer;
    std::int64_t m_shownNs = 0;
    std::shared_ptr<const Snapshot> m_drawn; // run A's snapshot drawn last
    static constexpr int kPlotsPerFrame = 2; // plots redrawn per frame while a run plays
    static constexpr int kFiguresPerSecond = 10; // text rewritten per second while a run plays (frame())
    qint64 m_figuresMs = 0; // when the figures were last written
    bool m_figuresStale = false;
    bool m_plotsStale = false; // some plot has data it has not drawn (a run played)
    qint64 m_lastFrameMs = 0;
};

} // namespace blkmq
