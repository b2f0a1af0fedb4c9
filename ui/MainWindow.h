#pragma once

#include "TimelineBar.h"
#include "TopologyScene.h"
#include "block/StallStep.h"
#include "metrics/TimeSeries.h"
#include "scenario/Scenario.h"
#include "engine/CommandInbox.h"
#include "session/Session.h"

#include <QMainWindow>

#include <optional>
#include <QStringList>

#include <memory>

class QAction;
class QCheckBox;
class QSpinBox;
class QComboBox;
class QDockWidget;
class QGraphicsView;
class QLabel;
class QLineEdit;
class QSlider;
class QSortFilterProxyModel;
class QThread;
class QTableView;
class QTextBrowser;
class QThread;
class QTimer;

namespace blkmq {

class EngineRunner;
class EventLogModel;
class LessonPanel;
class PatchPanel;
class PlotPanel;
class ScenarioPanel;

// The laboratory: topology canvas with requests in flight, controls, the
// patch panel, live plots, the stall banner, the event log, an inspector,
// scenarios and exports. Never simulates: an EngineRunner does, off this
// thread, and a 60 Hz timer pulls its snapshots and output.
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // Window geometry and dock layout from the last session (QSettings).
    void restoreSettings();
    // Loads a scenario (a preset or a validated file) and shows it paused at t = 0.
    void loadScenario(const Scenario& scenario);
    bool loadPreset(const QString& name, const std::vector<std::string>& sets = {});

    EngineRunner* runner() const { return m_runner; }
    PatchPanel* patchPanel() const { return m_patches; }
    PlotPanel* plotPanel() const { return m_plots; }
    TopologyScene* scene() const { return m_scene; }
    QGraphicsView* canvasView() const { return m_view; }
    void fitCanvas(); // the whole machine in view (F)
    void zoomCanvas(double factor); // Ctrl+wheel, Ctrl++ and Ctrl+-; saved with a session's view
    EventLogModel* eventLog() const { return m_log; }
    QSortFilterProxyModel* eventLogFilter() const { return m_logFilter; }
    QLabel* stallBanner() const { return m_banner; }
    QLabel* raceBanner() const { return m_raceBanner; }
    QLabel* kernelPathStrip() const { return m_kernelPath; }
    QTextBrowser* inspector() const { return m_inspector; }
    ScenarioPanel* scenarioPanel() const { return m_scenarioPanel; }
    LessonPanel* lessonPanel() const { return m_lessons; }
    QTableView* eventLogView() const { return m_logView; }
    // Opens a lesson in the Lessons panel (a built-in name or a file) and shows the panel.
    QString openLesson(const QString& nameOrPath);
    // Plays the open lesson to `step` (0-based) from its scenario's start, as a click on it would.
    void playLessonTo(int step) { playLessonStep(step, true); }
    // A/B comparison: run B on the same scenario and seed with its own patch set.
    void setCompare(bool on);
    // Compares with a run B whose kernel settings are A's with `sets` (kernel.* paths) applied;
    // an error message naming the setting, or empty.
    QString compareWith(const std::vector<std::string>& sets);
    EngineRunner* runnerB() const { return m_sessions.size() > 1 ? m_sessions[1].runner : nullptr; }
    PatchPanel* patchPanelB() const { return m_patchesB; }
    // Applies --set overrides to the current scenario and reloads it; an error message or empty.
    QString applyOverrides(const std::vector<std::string>& sets);
    const std::vector<SeriesRow>& seriesRows() const { return m_rows; }
    std::int64_t shownTimeNs() const { return m_shownNs; }
    // True once the stall banner shows (a stall was detected in the current run).
    bool stalled() const;
    // The stall banner's steps; selecting one (a click on it) highlights and inspects its object
    // and scrolls the log to its time.
    const std::vector<StallStep>& stallSteps() const { return m_stallSteps; }
    void selectStallStep(int step);
    CanvasSelection selection() const { return m_selection; }
    // Whether the frame timer runs: false once nothing runs, changes or moves (an idle window draws nothing).
    bool drawing() const;
    // The shown run has reached its scenario's end.
    bool atEnd() const;

    // Exports; each writes atomically and returns an error message or empty.
    // Exports return an error message naming the path, or an empty string.
    // checkChartPath says before a run whether exportChart could write `path`.
    static QString checkChartPath(const QString& path);
    // plot: an index into the plot panel, or -1 for every shown chart in a grid; size: 1920x1080 if
    // not given. Fonts and lines scale with the size.
    QString exportChart(const QString& path, int plot = 0, QSize size = {});
    // --chart: "all" (-1), a 1-based chart number, or a metric id (its chart); -2 if none.
    int chartIndex(const QString& id) const;
    QString saveScreenshot(const QString& path);
    QString exportCsv(const QString& path) const;
    QString exportScenario(const QString& path) const;
    QString exportCanvas(const QString& path);
    // A Perfetto trace (docs/trace.md) of the run up to the shown time: the scenario with the settings
    // in force now, run again from t = 0 on a thread of its own (the GUI thread never simulates).
    // Returns an error at once (nothing to trace, an unwritable path), else "" and emits
    // traceExported(path, error) when the file is written.
    QString exportTrace(const QString& path);
    // Shows "cpu:N" or "hctx:N" in the inspector, as a click on it would; an error names what is wrong.
    QString inspect(const QString& what);

    // Session files (docs/sessions.md): the run where it stands (pausing it) with its live commands,
    // bookmarks, the open lesson and step and the plots shown. Opening one replays it off this thread
    // and, once it matches, shows that moment; a file that does not read or replay changes nothing
    // on screen. Both return an error message or empty; openSession's replay reports through
    // sessionOpened(error).
    QString saveSession(const QString& path);
    QString openSession(const QString& path);
    // A scenario (.json), or a fio job file (.fio) run on the scenario the window shows; "" or why not.
    QString openFile(const QString& path);
    // The job file's workload (and runtime) on the scenario shown, then `sets` (--set); "" or why not.
    QString openFioJob(const QString& path, const std::vector<std::string>& sets = {});
    // Step back (Shift+.): the run one event earlier, replayed from a checkpoint with its live commands.
    void stepBack();
    // The timeline under the canvas: shows the run at simulated time `ns`, back or forward within
    // what it reached (EngineRunner::timeline); a move asked for while one is under way waits, and
    // only the last waiting one is made.
    void seekTo(std::int64_t ns);
    TimelineBar* timelineBar() const { return m_timeline; }
    // Simulation → Switch to the other branch / Drop the other branch (EngineRunner::switchBranch).
    void switchBranch();
    void dropOtherBranch();
    // A note at the shown time (B): a marker on every plot, kept in session files.
    void addBookmark(const QString& note);
    const std::vector<Session::Bookmark>& bookmarks() const { return m_bookmarks; }

    // A and B (its patch set) on `seeds` seeds from the scenario's, to the scenario's end, in the
    // background (core/experiment/SeedComparison): per metric B/A with its spread and a paired t-test,
    // shown under the A/B table; emits seedsCompared() then. An error at once, or "".
    QString compareOverSeeds(int seeds);
    QLabel* seedsTable() const { return m_seedsTable; }

signals:
    void traceExported(const QString& path, const QString& error);
    void sessionOpened(const QString& error);
    void seedsCompared();

public slots:
    void runOrPause();
    // The first window of a bare start (no scenario, no option): the scenario shown runs at once and
    // the status bar says what the keys do and where the lessons are.
    void greet();
    void step();
    void stepToInteresting();
    void reset();
    void setSpeedIndex(int index);
    // Simulated seconds per wall second for every run session (<= 0: as fast as possible).
    void setSpeed(double speed);
    // Every run session pauses when its clock reaches `t` (negative: never); --after and --quit-after.
    void setPauseAt(SimTime t);
    void frame(); // pulls the runner's output and redraws what changed (the 60 Hz timer, while active)
    void wake(); // starts the frame timer after it stopped on an idle window

protected:
    void closeEvent(QCloseEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void buildActions();
    void buildDocks();
    void applyCommand(const Command& c);
    void showSelection(const CanvasSelection& s);
    void showStall(const QString& why, const std::vector<StallStep>& steps);
    void renderStallBanner();
    void refreshInspector();
    void refreshKernelPath(); // the strip under the canvas: what the selected CPU executes now
    void updateStatus();
    void openScenario();
    void saveScenario();
    void exportChartDialog();
    void addRecent(const QString& path);
    void loadSession(std::size_t i);
    void updateCompareTable();
    void updateRunLabels();
    void selectLogRow(int proxyRow);
    void showLessonMachine();
    void playLessonStep(int step, bool fresh);
    void lessonStepPlayed(int step, const QString& error);

    EngineRunner* m_runner;
    TopologyScene* m_scene;
    QGraphicsView* m_view;
    PatchPanel* m_patches;
    PlotPanel* m_plots;
    EventLogModel* m_log;
    QSortFilterProxyModel* m_logFilter;
    QTableView* m_logView;
    QTextBrowser* m_inspector;
    ScenarioPanel* m_scenarioPanel;
    LessonPanel* m_lessons;
    std::vector<Session::Bookmark> m_bookmarks;
    std::vector<QAction*> m_plotActions; // View > Plots: one per plot, then "In two columns"
    // The plots a lesson step is about (Lesson::plotsOf), by index; unset: every plot the View menu
    // shows. A plot shows when both want it; with none to show, the panel gives its room away.
    std::optional<std::vector<int>> m_lessonPlots;
    void setLessonPlots(int step);
    void applyPlotVisibility();
    bool lessonShows(std::size_t plot) const; // no lesson step's list, or on it
    std::shared_ptr<const Session> m_opening; // a session being replayed (openSession, stepBack, seekTo)
    bool m_moving = false; // m_opening is a move along the run (stepBack, seekTo), not a file
    std::int64_t m_pendingSeek = -1; // seekTo() while a replay was under way
    TimelineBar* m_timeline;
    TimelineBar::Course m_otherCourse; // the other branch's part of the timeline, after the point they part
    QAction* m_switchBranch = nullptr;
    QAction* m_dropBranch = nullptr;
    void updateBranchActions();
    void clearRunView(); // what a run has shown so far: plots, log, markers, banners
    void finishMove(); // a move along the run replayed: show it
    void sessionReplayed(const QString& error);
    QDockWidget* m_lessonsDock = nullptr;
    QDockWidget* m_scenarioDock = nullptr; // with the inspector, below the lessons
    QDockWidget* m_compareDock = nullptr;
    QStringList m_scriptIds; // the scenario's workload.script ids by step (Snapshot::scriptIds)
    int m_selectionScript = -1; // the script step of the selected request (its name after it completed)
    // The runs over the one live scenario: [0] is drawn on the canvas and driven by m_patches;
    // the others are compared with it (plotted as sets 1.., in the A/B table), each with its own
    // kernel settings. A session's live scenario is its engine's (EngineRunner::liveScenarioJson).
    struct RunSession {
        EngineRunner* runner;
        PatchPanel* patches;
        QString label;
    };
    std::vector<RunSession> m_sessions;
    PatchPanel* m_patchesB; // the kernel settings of run B (m_sessions[1]), in the Compare dock
    QLabel* m_compareTable;
    QCheckBox* m_compareBox;
    QSpinBox* m_seed;
    QLabel* m_banner;
    QLabel* m_raceBanner; // a tag allocator's race (lost tags, missed wake-ups), flagged like a stall
    std::vector<StallStep> m_stallSteps; // the banner's, numbered from 1
    int m_stallStep = -1; // the one last clicked
    QLabel* m_time;
    QLabel* m_speedLabel;
    QLabel* m_legend;
    QLabel* m_kernelPath;
    QSlider* m_speed;
    QComboBox* m_presets;
    QTimer* m_timer;
    std::vector<QThread*> m_traceWorkers; // trace exports and seed comparisons still running (waited for on close)
    void startWorker(QThread* worker); // starts it, kept in m_traceWorkers until it is gone
    QSpinBox* m_seedsCount = nullptr;
    QLabel* m_seedsTable = nullptr;
    QAction* m_runAction;
    QAction* m_pauseOnStall;
    std::vector<SeriesRow> m_rows;
    std::vector<std::vector<SeriesRow>> m_rowsOthers; // the compared runs' series (m_sessions[1..])
    std::vector<Marker> m_markerLog; // run A's live changes and stalls, for the CSV
    CanvasSelection m_selection;
    std::int64_t m_shownNs = 0;
    std::shared_ptr<const Snapshot> m_drawn, m_drawnB; // the snapshots drawn last (A, and B when comparing)
    static constexpr int kPlotsPerFrame = 2; // plots redrawn per frame while a run plays
    static constexpr int kFiguresPerSecond = 10; // text rewritten per second while a run plays (frame())
    qint64 m_figuresMs = 0; // when the figures were last written
    bool m_figuresStale = false;
    std::vector<TraceRecord> m_logPending; // trace drained but not yet in the event log (frame())
    bool m_plotsStale = false; // some plot has data it has not drawn (a run played)
    bool m_zoomed = false; // the user zoomed: a resize keeps the zoom instead of fitting
    // Step (1) or Next interesting (2) was pressed: say what the event was when its snapshot comes.
    int m_stepPending = 0;
    Counters m_interestingFrom; // the counters when Next interesting was pressed: what changed is what it stopped at
    bool m_stalledBefore = false;
    std::uint64_t m_dropped = 0;
    std::uint64_t m_droppedShown = 0;
    qint64 m_lastFrameMs = 0;
};

} // namespace blkmq
