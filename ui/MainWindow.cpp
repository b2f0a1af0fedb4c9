#include "MainWindow.h"

#include "EngineRunner.h"
#include "EventLogModel.h"
#include "HelpMenu.h"
#include "LessonPanel.h"
#include "Palette.h"
#include "PatchPanel.h"
#include "PlotPanel.h"
#include "ScenarioPanel.h"
#include "UiText.h"
#include "WheelGuard.h"
#include "io/Text.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDateTime>
#include <QDockWidget>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTableView>
#include <QTextBrowser>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>

namespace blkmq {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent)
    , m_runner(new EngineRunner(this))
    , m_scene(new TopologyScene(this))
    , m_canvas(new CanvasView(m_scene))
    , m_patches(new PatchPanel)
    , m_plots(new PlotPanel)
    , m_log(new EventLogPanel)
    , m_inspector(new Inspector(m_runner, m_scene, this))
    , m_scenarioPanel(new ScenarioPanel)
    , m_lessons(new LessonPanel)
    , m_stall(new StallBanner)
    , m_race(new RaceBanner)
    , m_timeline(new TimelineBar)
    , m_timer(new QTimer(this))
{
    setWindowTitle(tr("BlkMQ Lab"));
    m_runs.all.push_back({ m_runner, m_patches, tr("A") });
    m_control = new RunControl(*this, m_runs, this);
    m_files = new ScenarioFiles(*this, m_runner, this);
    m_compare = new ComparePanel(m_runs, m_record, m_plots);
    m_travel = new TimeTravel(*this, m_runs, m_plots, m_timeline, this);
    m_lessonDriver = new LessonDriver(*this, m_runs, m_lessons, m_plots, m_scene, m_inspector, m_timeline, this);
    m_presentation = new PresentationMode(this);
    m_exports = new Exporter(m_runs, m_record, m_plots, m_compare, m_canvas, this);

    auto* canvas = new QWidget;
    auto* cl = new QVBoxLayout(canvas);
    cl->setContentsMargins(0, 0, 0, 0);
    for (QWidget* w : std::initializer_list<QWidget*> {
             m_stall, m_race, m_canvas, m_timeline, m_inspector->kernelPathStrip(), m_canvas->legend() })
        cl->addWidget(w, w == m_canvas ? 1 : 0);
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(canvas);
    split->addWidget(m_plots);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    setCentralWidget(split);

    buildMenus();
    buildDocks();
    guardWheel(this); // the wheel scrolls the panels; a setting changes on a click or a key

    connect(m_patches, &PatchPanel::commandRequested, this, [this](const Command& c) {
        m_runner->post(c);
        wake();
    });
    m_files->watch(m_patches, m_scenarioPanel);
    connect(m_control, &RunControl::overridesRequested, m_files, &ScenarioFiles::applyOverrides);
    connect(m_control, &RunControl::presetRequested, this, [this](const QString& name) { loadPreset(name); });
    connect(m_scene, &TopologyScene::clicked, this, [this](const ObjectRef& s) { m_inspector->select(s); });
    connect(m_inspector, &Inspector::selected, this, [this] { m_canvas->refreshLegend(m_lessons->lesson()); });
    connect(m_log, &EventLogPanel::recordChosen, this, [this](const TraceRecord& r) {
        m_inspector->select(r);
        showMessage(m_log->model()->describeRow(r), 10000);
    });
    connect(m_log, &EventLogPanel::seekRequested, m_travel, &TimeTravel::seekTo);
    connect(m_runner, &EngineRunner::branched, this, [this](std::int64_t ns) {
        m_plots->cutAfter(static_cast<double>(ns) / 1e6); // the course after it is not this run's
    });
    connect(m_runner, &EngineRunner::stallDetected, this, [this](const QString& why, const auto& steps) {
        m_stall->showStall(why, steps);
        wake();
    });
    connect(m_stall, &StallBanner::stepSelected, this, [this](const StallStep& step) {
        m_inspector->pointAt(step);
        m_log->scrollToTime(step.at.ns()); // the log at the step's time
        wake();
    });
    connect(m_stall, &StallBanner::backRequested, m_travel, &TimeTravel::seekTo);
    connect(m_runner, &EngineRunner::tagRace, this, [this](const QString& what) {
        m_race->showRace(what);
        wake();
    });
    m_travel->setViewOf([this](Session& session) { // each part writes its own keys
        m_lessonDriver->describe(session);
        m_plots->saveTo(session.view);
        m_inspector->saveTo(session.view);
        m_canvas->saveTo(session.view);
        m_compare->saveTo(session.view);
    });
    connect(m_travel, &TimeTravel::sessionLoaded, this, [this](const auto& session) { restoreView(*session); });
    connect(m_travel, &TimeTravel::sessionOpened, this, &MainWindow::sessionOpened);
    connect(m_compare, &ComparePanel::seedsCompared, this, &MainWindow::seedsCompared);
    connect(m_compare, &ComparePanel::canvasRunChanged, this, [this] {
        m_canvas->setRunShown(m_compare->canvasShowsB() ? tr("run B") : QString());
        m_drawn.reset(); // the next frame draws the other run's machine, paused or not
        m_canvas->refreshLegend(m_lessons->lesson());
        wake();
    });
    connect(m_exports, &Exporter::message, this, [this](const QString& text, int ms) { showMessage(text, ms); });
    connect(m_exports, &Exporter::traceExported, this, &MainWindow::traceExported);
    connect(m_timer, &QTimer::timeout, this, &MainWindow::frame);
    m_timer->start(16);

    // A new window takes the whole screen it opens on (a lab on a projector or a 1920x1080 monitor
    // wants all of it): this size without a window manager, maximized with one (the application
    // shows it so; the manager's title bar then fits on the screen too). The saved geometry
    // (restoreSettings) wins once there is one.
    QSize want(1500, 920);
    if (const QScreen* screen = QGuiApplication::primaryScreen())
        want = screen->availableGeometry().size();
    resize(want);
}

MainWindow::~MainWindow() = default;

bool MainWindow::restoreSettings()
{
    QSettings settings;
    setColourBlindSafe(settings.value(QStringLiteral("view/colourBlindSafe"), false).toBool());
    const bool placed = settings.contains(QStringLiteral("window/geometry"))
        && restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    return placed;
}

void MainWindow::buildMenus()
{
    auto* tb = addToolBar(tr("Controls"));
    tb->setObjectName(QStringLiteral("controls"));
    m_control->addControls(tb);
    m_canvas->addActions(this, tb);
    m_control->addScenarioChoice(tb);

    auto* file = menuBar()->addMenu(tr("&File"));
    m_files->addFileActions(file);
    m_travel->addFileActions(file);
    m_files->addRecentMenu(file);
    file->addSeparator();
    m_exports->addFileActions(file, m_travel->bookmarks(), m_shownNs);
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    auto* sim = menuBar()->addMenu(tr("&Simulation"));
    sim->addAction(m_control->runAction());
    sim->addAction(m_control->stepAction());
    m_travel->addSimulationActions(sim);
    sim->addAction(m_control->nextAction());
    sim->addAction(m_control->resetAction());
    sim->addAction(m_control->pauseOnStallAction());
}

void MainWindow::buildDocks()
{
    const auto dock = [this](const QString& title, QWidget* w, Qt::DockWidgetArea area) {
        auto* d = new QDockWidget(title, this);
        d->setObjectName(title);
        if (area == Qt::RightDockWidgetArea) { // panels scroll rather than force the window taller
            auto* scroll = new QScrollArea;
            scroll->setWidgetResizable(true);
            scroll->setFrameShape(QFrame::NoFrame);
            scroll->setWidget(w);
            d->setWidget(scroll);
        } else {
            d->setWidget(w);
        }
        addDockWidget(area, d);
        return d;
    };
    auto* patches = dock(tr("Kernel patches"), m_patches, Qt::RightDockWidgetArea);
    auto* about = dock(tr("Scenario"), m_scenarioPanel, Qt::RightDockWidgetArea);
    auto* inspect = dock(tr("Inspector"), m_inspector->view(), Qt::RightDockWidgetArea);
    auto* compare = dock(tr("Compare A/B"), m_compare, Qt::RightDockWidgetArea);
    auto* lessons = dock(tr("Lessons"), m_lessons, Qt::RightDockWidgetArea);
    m_lessonDriver->setDocks(lessons, about);
    tabifyDockWidget(about, inspect);
    tabifyDockWidget(patches, compare);
    tabifyDockWidget(patches, lessons);
    about->raise();
    patches->raise();
    // The right-hand column runs to the bottom of the window and the log sits under the canvas and
    // the plots: a lesson's narrative and the panels get the whole height, the log its full width
    // less theirs.
    setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
    auto* logDock = dock(tr("Event log"), m_log, Qt::BottomDockWidgetArea);
    logDock->setMinimumHeight(110);
    // On a small screen (a 1280x800 projector) the canvas and the plots get the room: the panels
    // are narrower and the log shorter than they would be on a large one.
    QTimer::singleShot(0, this, [this, patches, logDock] {
        resizeDocks({ patches }, { std::clamp(width() * 30 / 100, 340, 480) }, Qt::Horizontal);
        resizeDocks({ logDock }, { std::clamp(height() / 5, 130, 240) }, Qt::Vertical);
    });

    auto* view = menuBar()->addMenu(tr("&View"));
    for (auto* d : findChildren<QDockWidget*>())
        view->addAction(d->toggleViewAction());
    m_plots->addViewMenu(view->addMenu(tr("Plots")));
    view->addSeparator();
    m_colourBlindSafe = view->addAction(tr("Colour-blind-safe colours"), this, &MainWindow::setColourBlindSafe);
    m_colourBlindSafe->setCheckable(true);
    m_colourBlindSafe->setChecked(Palette::colourBlindSafe());
    m_colourBlindSafe->setToolTip(tr("Okabe and Ito's colours, which every common colour vision tells apart; "
                                     "shapes and hatches say the same in either scheme"));
    m_presentation->addActions(view);
    addHelpMenu(this, lessons);
}

bool MainWindow::loadPreset(const QString& name, const std::vector<std::string>& sets)
{
    const QString err = m_files->loadPreset(name, sets);
    if (!err.isEmpty())
        QMessageBox::warning(this, tr("Cannot load preset"), err);
    return err.isEmpty();
}

void MainWindow::loadScenario(const Scenario& scenario)
{
    m_plots->setLessonPlots(std::nullopt); // a lesson step sets its plots again after loading its scenario
    m_runner->setPauseOnStall(m_control->pauseOnStallAction()->isChecked());
    m_runner->load(scenario);
    QStringList scriptIds, hctxNames;
    for (const std::string& id : *m_runner->snapshot()->scriptIds)
        scriptIds << q(id);
    for (const DeviceSpec& d : scenario.devices)
        for (int i = 0; i < d.submit_queues; ++i)
            hctxNames << QStringLiteral("%1 hctx %2").arg(q(d.name)).arg(i);
    m_inspector->setScriptIds(scriptIds);
    m_log->model()->setNames(scriptIds, hctxNames);
    m_scene->build(scenario);
    m_scene->setRequestNames(scriptIds);
    fitCanvas();
    m_patches->setKernel(scenario.kernel);
    m_travel->newRun(scenario.duration.ns());
    clearRunView();
    m_inspector->clear();
    m_control->showScenario(scenario);
    m_scenarioPanel->setScenario(scenario);
    m_compare->reload();
    setWindowTitle(tr("BlkMQ Lab — %1").arg(q(scenario.name)));
    m_scene->setHighlights({});
    frame();
    wake();
}

void MainWindow::clearRunView(bool keepPlots)
{
    if (!keepPlots) {
        m_plots->clear();
        m_plots->setSpan(static_cast<double>(m_runner->scenario().duration.ns()) / 1e6);
    }
    m_log->clear();
    m_record.clear();
    m_stall->reset();
    m_race->hide();
    m_drawn.reset();
}

void MainWindow::frame()
{
    const qint64 nowMs = QDateTime::currentMSecsSinceEpoch();
    const double frameMs = m_lastFrameMs ? std::min<double>(100.0, static_cast<double>(nowMs - m_lastFrameMs)) : 16.0;
    m_lastFrameMs = nowMs;
    RunnerOutput out = m_runner->drain();
    m_log->model()->addDropped(out.traceDropped);
    m_record.take(out);
    m_plots->append(out.rows);
    for (const Marker& m : out.markers) {
        m_plots->addMarker(static_cast<double>(m.t_ns) / 1e6, q(m.text),
            m.text.rfind("stall", 0) == 0 || m.text.rfind("rejected", 0) == 0);
        m_timeline->addMark(m.t_ns, TimelineBar::Mark::Patch, q(m.text));
    }
    for (const Marker& m : out.races)
        m_timeline->addMark(m.t_ns, TimelineBar::Mark::Race, q(m.text));
    const auto snap = m_runner->snapshot();
    const bool fresh = snap && snap != m_drawn;
    bool changed = fresh || !out.rows.empty() || !out.markers.empty() || !out.trace.empty();
    // What moves (tokens, arcs, colours, tag maps, the log) is drawn every frame; the figures (text
    // in the canvas, the status line, the inspector, the A/B table) and the plots' interval in
    // progress at most kFiguresPerSecond times a second while a run plays: read by people, they
    // cost most of a frame's layout and painting when rewritten 60 times a second.
    const bool playing = m_runner->isRunning();
    const bool figures = !playing || nowMs - m_figuresMs >= 1000 / kFiguresPerSecond;
    if (figures && changed)
        m_figuresMs = nowMs;
    // Compared runs first: the canvas may show run B's machine instead of A's.
    changed |= m_compare->drain();
    const bool showB = m_compare->canvasShowsB();
    const auto canvasSnap = showB ? m_compare->snapshotB() : snap;
    if (canvasSnap && (changed || m_scene->animating()))
        m_scene->update(canvasSnap, showB ? m_compare->takeTraceB() : out.trace, frameMs, figures, playing);
    m_log->take(out.trace); // the log takes its rows with the figures (scrolling repaints every row)
    // The interval in progress, so the plots reach the clock between samples. New rows drop the
    // provisional point; the runner may have published this snapshot before a frame drained them.
    if (snap && (fresh || !out.rows.empty()))
        m_plots->setProvisional(snap->intervalSoFar);
    if (snap) {
        m_shownNs = snap->now.ns();
        m_travel->setShownNs(m_shownNs);
        m_timeline->setShown(m_shownNs);
        m_timeline->setReached(m_runner->furthestNs());
        // Gone back: the plots draw the run to where it reached, with a cursor at the time shown.
        m_plots->setCursor(m_shownNs < m_runner->furthestNs() ? static_cast<double>(m_shownNs) / 1e6 : -1);
        if (snap->firstStallNs >= 0)
            m_timeline->addMark(snap->firstStallNs, TimelineBar::Mark::Stall, tr("the stall detector fired"));
    }
    if (figures && snap)
        m_log->flush(m_shownNs); // the rows up to the clock
    if (fresh)
        m_control->reportStep(*snap, out.trace, *m_log->model());
    // While a run plays, a few plots per frame when there are new samples or figures are due (each
    // still redraws several times a second); once it stops, or on a step, all of them at once.
    if (changed) {
        m_drawn = snap;
        if (!playing) {
            m_plots->replot();
            m_plotsStale = false;
        } else if (figures || !out.rows.empty()) {
            m_plots->replotSome(kPlotsPerFrame);
            m_plotsStale = true;
        }
        m_figuresStale = !figures;
        if (figures)
            refreshFigures();
    } else if (!playing && (m_plotsStale || m_figuresStale)) { // the run stopped between figures
        if (m_plotsStale)
            m_plots->replot();
        if (m_figuresStale && canvasSnap) {
            m_scene->update(canvasSnap, {}, frameMs, true, false);
            refreshFigures();
        }
        m_plotsStale = m_figuresStale = false;
    }
    // Idle: nothing runs, nothing changed and nothing glides: stop drawing until wake().
    bool active = changed || m_scene->animating() || m_plotsStale || m_figuresStale || m_log->pending(m_shownNs);
    for (const RunSession& session : m_runs.all)
        active |= session.runner->isRunning() || session.runner->busy();
    if (!active)
        m_timer->stop();
}

void MainWindow::refreshFigures()
{
    m_compare->updateTable();
    m_inspector->refresh();
    m_control->showTime(m_shownNs);
    m_canvas->refreshLegend(m_lessons->lesson());
    m_lessons->setShownTime(m_shownNs);
    if (const std::uint64_t dropped = m_log->droppedNews())
        showMessage(tr("event log: %1 events skipped while the display fell behind").arg(dropped), 5000);
}

void MainWindow::wake()
{
    if (!m_timer->isActive()) {
        m_lastFrameMs = 0;
        m_timer->start(16);
    }
}

bool MainWindow::drawing() const { return m_timer->isActive(); }

void MainWindow::showMessage(const QString& text, int ms) { statusBar()->showMessage(text, ms); }

void MainWindow::restoreView(const Session& session)
{
    m_lessonDriver->restore(session);
    m_plots->restore(session.view);
    m_canvas->restore(session.view);
    frame();
    if (const QString err = m_inspector->restore(session.view); !err.isEmpty())
        showMessage(err, 10000);
    if (const QString err = m_compare->restore(session.view); !err.isEmpty())
        showMessage(err, 10000);
}

QString MainWindow::saveScreenshot(const QString& path)
{
    // Everything shown belongs to one instant: the runs stop, their last output is drawn, and the
    // tokens stand where that snapshot puts them.
    m_runs.pause();
    for (int i = 0; i < 6; ++i) // the trace ring holds more than one frame drains
        frame();
    m_plots->replot(true); // a frame's replots wait for the event loop: the picture would miss them
    m_log->view()->scrollToBottom();
    m_scene->settle();
    return m_exports->exportWidget(path, this);
}

void MainWindow::setColourBlindSafe(bool on)
{
    if (m_colourBlindSafe)
        m_colourBlindSafe->setChecked(on);
    if (on == Palette::colourBlindSafe())
        return;
    Palette::setColourBlindSafe(on);
    m_scene->applyPalette();
    m_plots->applyPalette();
    m_drawn.reset(); // the next frame redraws the canvas in the new colours, paused or not
    m_canvas->refreshLegend(m_lessons->lesson());
    wake();
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    m_runs.pause();
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    settings.setValue(QStringLiteral("view/colourBlindSafe"), Palette::colourBlindSafe());
    event->accept();
}

} // namespace blkmq
