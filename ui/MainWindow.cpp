#include "MainWindow.h"

#include "EngineRunner.h"
#include "EventLogModel.h"
#include "LessonPanel.h"
#include "PatchPanel.h"
#include "PlotPanel.h"
#include "ScenarioPanel.h"
#include "TimePlot.h"
#include "TagMapItem.h"
#include "TokenLayer.h"
#include "WheelGuard.h"
#include "io/Limits.h"
#include "io/SafeFile.h"
#include "io/Text.h"
#include "metrics/Metrics.h"
#include "engine/ChromeTrace.h"
#include "engine/Engine.h"
#include "experiment/Experiment.h"
#include "experiment/SeedComparison.h"
#include "experiment/TbbHandoff.h"
#include "scenario/FioJobFile.h"
#include "scenario/ScenarioLoader.h"
#include "sim/Duration.h"
#include "tags/TagRegistry.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <map>

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QCheckBox>
#include <QComboBox>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QDateTime>
#include <QDockWidget>
#include <QFileDialog>
#include <QGraphicsView>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QBuffer>
#include <QPainter>
#include <QRegularExpression>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSlider>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStatusBar>
#include <QTableView>
#include <QTextBrowser>
#include <QHBoxLayout>
#include <QPushButton>
#include <QThread>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>
#include <QWheelEvent>

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

QString q(const std::string& s) { return QString::fromStdString(s); }
} // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent)
    , m_runner(new EngineRunner(this))
    , m_scene(new TopologyScene(this))
    , m_view(new QGraphicsView(m_scene))
    , m_patches(new PatchPanel)
    , m_plots(new PlotPanel)
    , m_log(new EventLogModel(this))
    , m_logFilter(new QSortFilterProxyModel(this))
    , m_logView(new QTableView)
    , m_inspector(new QTextBrowser)
    , m_scenarioPanel(new ScenarioPanel)
    , m_lessons(new LessonPanel)
    , m_patchesB(new PatchPanel)
    , m_compareTable(new QLabel)
    , m_compareBox(new QCheckBox(tr("Run B beside A (same seed, in lockstep)")))
    , m_seed(new QSpinBox)
    , m_banner(new QLabel)
    , m_raceBanner(new QLabel)
    , m_time(new QLabel)
    , m_speedLabel(new QLabel)
    , m_legend(new QLabel)
    , m_kernelPath(new QLabel)
    , m_speed(new QSlider(Qt::Horizontal))
    , m_presets(new QComboBox)
    , m_timer(new QTimer(this))
{
    setWindowTitle(tr("BlkMQ Lab"));
    m_sessions.push_back({ m_runner, m_patches, tr("A") });
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->setDragMode(QGraphicsView::ScrollHandDrag);
    m_view->setMinimumSize(360, 240);
    m_view->installEventFilter(this);
    m_view->viewport()->installEventFilter(this);
    m_view->setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
    m_banner->setWordWrap(true);
    m_banner->setTextFormat(Qt::RichText);
    m_banner->setStyleSheet(QStringLiteral("QLabel { background: #fdecea; color: #7b241c; border: 2px solid #c0392b; "
                                           "border-radius: 4px; padding: 6px; }"));
    m_banner->hide();
    m_raceBanner->setWordWrap(true);
    m_raceBanner->setTextFormat(Qt::RichText);
    m_raceBanner->setStyleSheet(QStringLiteral("QLabel { background: #fef5e7; color: #7e5109; border: 2px solid "
                                               "#e67e22; border-radius: 4px; padding: 6px; }"));
    m_raceBanner->hide();
    m_legend->setTextFormat(Qt::RichText);
    m_legend->setWordWrap(true);
    m_kernelPath->setTextFormat(Qt::RichText);
    m_kernelPath->setWordWrap(true);
    m_kernelPath->setStyleSheet(QStringLiteral("QLabel { border-top: 1px solid #bdc3c7; padding: 3px; }"));
    m_kernelPath->setToolTip(tr("What the selected CPU executes now, outermost level first: the task it runs or "
                                "interrupted, the softirq that irq_exit runs, the hardirq. Bold: executing now."));

    auto* canvas = new QWidget;
    auto* cl = new QVBoxLayout(canvas);
    cl->setContentsMargins(0, 0, 0, 0);
    cl->addWidget(m_banner);
    cl->addWidget(m_raceBanner);
    cl->addWidget(m_view, 1);
    m_timeline = new TimelineBar;
    cl->addWidget(m_timeline);
    cl->addWidget(m_kernelPath);
    cl->addWidget(m_legend);
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(canvas);
    split->addWidget(m_plots);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    setCentralWidget(split);

    buildActions();
    buildDocks();
    guardWheel(this); // the wheel scrolls the panels; a setting changes on a click or a key

    connect(m_patches, &PatchPanel::commandRequested, this, &MainWindow::applyCommand);
    connect(m_patches, &PatchPanel::restartRequested, this, [this](const std::vector<std::string>& sets) {
        const bool wasRunning = m_runner->isRunning();
        if (const QString err = applyOverrides(sets); !err.isEmpty()) {
            m_patches->setKernel(m_runner->scenario().kernel);
            QMessageBox::warning(this, tr("Cannot change the kernel"), err);
            return;
        }
        statusBar()->showMessage(tr("%1: the run restarted from t = 0 with the same seed").arg(q(sets.front())), 8000);
        if (wasRunning)
            runOrPause();
    });
    connect(m_scene, &TopologyScene::clicked, this, &MainWindow::showSelection);
    connect(m_runner, &EngineRunner::stateChanged, this, [this](bool running) {
        m_runAction->setText(running ? tr("Pause") : tr("Run"));
        m_runAction->setChecked(running);
        wake();
    });
    connect(m_runner, &EngineRunner::finished, this, [this] {
        statusBar()->showMessage(tr("The run has ended at %1: Reset (Ctrl+R) to start it again")
                                     .arg(q(formatDuration(m_runner->scenario().duration))),
            15000);
    });
    connect(m_runner, &EngineRunner::stallDetected, this, &MainWindow::showStall);
    connect(m_timeline, &TimelineBar::seekRequested, this, &MainWindow::seekTo);
    connect(m_runner, &EngineRunner::branched, this, [this](std::int64_t ns) {
        m_otherCourse = m_timeline->cut(ns);
        updateBranchActions();
        statusBar()->showMessage(tr("A change at t = %1 µs, a point gone back to: the run takes a new branch there; "
                                    "the course it left is kept (Simulation → Switch to the other branch)")
                                     .arg(static_cast<double>(ns) / 1e3, 0, 'f', 3),
            15000);
    });
    connect(m_banner, &QLabel::linkActivated, this, [this](const QString& link) {
        if (link.startsWith(QLatin1String("step:")))
            selectStallStep(link.mid(5).toInt());
        else if (link.startsWith(QLatin1String("back:"))) { // the run just before that step happened
            const int i = link.mid(5).toInt();
            if (i >= 0 && i < static_cast<int>(m_stallSteps.size()))
                seekTo(std::max<std::int64_t>(0, m_stallSteps[static_cast<std::size_t>(i)].at.ns() - 1));
        }
    });
    connect(m_runner, &EngineRunner::tagRace, this, [this](const QString& what) {
        m_raceBanner->setText(
            tr("<b>Tag race.</b> ") + what.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>")));
        m_raceBanner->show();
        wake();
    });
    connect(m_timer, &QTimer::timeout, this, &MainWindow::frame);
    m_timer->start(16);

    // A new window takes the whole screen it opens on (a lab on a projector or a 1920x1080 monitor
    // wants all of it); the saved geometry (restoreSettings) wins once there is one.
    QSize want(1500, 920);
    if (const QScreen* screen = QGuiApplication::primaryScreen())
        want = screen->availableGeometry().size();
    resize(want);
}

void MainWindow::restoreSettings()
{
    QSettings settings;
    if (settings.contains(QStringLiteral("window/geometry")))
        restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
}

MainWindow::~MainWindow()
{
    for (QThread* t : m_traceWorkers) // a trace export still writing: let it finish its file
        t->wait();
}

void MainWindow::buildActions()
{
    auto* tb = addToolBar(tr("Controls"));
    tb->setObjectName(QStringLiteral("controls"));
    m_runAction = tb->addAction(tr("Run"), this, &MainWindow::runOrPause);
    m_runAction->setCheckable(true);
    m_runAction->setShortcut(Qt::Key_Space);
    m_runAction->setToolTip(tr("Run or pause (Space)"));
    auto* stepAction = tb->addAction(tr("Step"), this, &MainWindow::step);
    stepAction->setShortcut(Qt::Key_Period);
    stepAction->setToolTip(tr("Process exactly one event (.)"));
    auto* nextAction = tb->addAction(tr("Next interesting"), this, &MainWindow::stepToInteresting);
    nextAction->setShortcut(Qt::Key_N);
    nextAction->setToolTip(
        tr("Run to the next IPI, ksoftirqd wake-up, requeue, RESTART set, restart, skipped restart or stall (N)"));
    auto* resetAction = tb->addAction(tr("Reset"), this, &MainWindow::reset);
    resetAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    tb->addSeparator();
    tb->addWidget(new QLabel(tr(" Speed ")));
    m_speed->setRange(0, kSpeedSteps - 1);
    m_speed->setFixedWidth(160);
    m_speed->setValue(4);
    connect(m_speed, &QSlider::valueChanged, this, &MainWindow::setSpeedIndex);
    tb->addWidget(m_speed);
    m_speedLabel->setMinimumWidth(150);
    tb->addWidget(m_speedLabel);
    auto* faster = new QAction(this);
    faster->setShortcut(Qt::Key_Plus);
    connect(faster, &QAction::triggered, this, [this] { m_speed->setValue(m_speed->value() + 1); });
    auto* slower = new QAction(this);
    slower->setShortcut(Qt::Key_Minus);
    connect(slower, &QAction::triggered, this, [this] { m_speed->setValue(m_speed->value() - 1); });
    addAction(faster);
    addAction(slower);
    auto* zoomIn = new QAction(tr("Zoom in"), this);
    zoomIn->setShortcuts({ QKeySequence::ZoomIn, QKeySequence(Qt::CTRL | Qt::Key_Equal) });
    connect(zoomIn, &QAction::triggered, this, [this] { zoomCanvas(1.25); });
    auto* zoomOut = new QAction(tr("Zoom out"), this);
    zoomOut->setShortcut(QKeySequence::ZoomOut);
    connect(zoomOut, &QAction::triggered, this, [this] { zoomCanvas(0.8); });
    auto* fit = new QAction(tr("Fit"), this);
    fit->setShortcut(Qt::Key_F);
    fit->setToolTip(tr("Fit the whole machine in the canvas (F); Ctrl+wheel or Ctrl+/Ctrl- zoom"));
    connect(fit, &QAction::triggered, this, &MainWindow::fitCanvas);
    tb->addAction(fit);
    addAction(zoomIn);
    addAction(zoomOut);
    tb->addSeparator();
    m_time->setMinimumWidth(150);
    tb->addWidget(m_time);
    tb->addSeparator();
    tb->addWidget(new QLabel(tr(" RNG seed ")));
    m_seed->setRange(0, 2147483647);
    connect(m_seed, &QSpinBox::editingFinished, this, [this] {
        if (static_cast<std::uint64_t>(m_seed->value()) != m_runner->scenario().seed)
            applyOverrides({ "seed=" + std::to_string(m_seed->value()) });
    });
    tb->addWidget(m_seed);
    tb->addSeparator();
    tb->addWidget(new QLabel(tr(" Scenario ")));
    for (const auto& p : ScenarioLoader::presets())
        m_presets->addItem(q(p.name));
    m_presets->setPlaceholderText(tr("(not a preset)"));
    connect(m_presets, &QComboBox::activated, this, [this](int) { loadPreset(m_presets->currentText()); });
    tb->addWidget(m_presets);

    auto* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open scenario or fio job…"), QKeySequence::Open, this, &MainWindow::openScenario);
    file->addAction(tr("&Save scenario…"), QKeySequence::Save, this, &MainWindow::saveScenario);
    file->addAction(tr("Open session…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O), this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Open session"), QString(), tr("BlkMQ Lab sessions (*.blkmqlab);;All files (*)"));
        if (path.isEmpty())
            return;
        if (const QString err = openSession(path); !err.isEmpty()) {
            QMessageBox::warning(this, tr("Cannot open session"), err);
            return;
        }
        connect( // its replay's verdict, once
            this, &MainWindow::sessionOpened, this,
            [this](const QString& error) {
                if (!error.isEmpty())
                    QMessageBox::warning(this, tr("Cannot open session"), error);
            },
            Qt::SingleShotConnection);
    });
    file->addAction(tr("Save session…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S), this, [this] {
        QString path
            = QFileDialog::getSaveFileName(this, tr("Save session"), QString(), tr("BlkMQ Lab sessions (*.blkmqlab)"));
        if (path.isEmpty())
            return;
        if (!path.endsWith(QStringLiteral(".blkmqlab")))
            path += QStringLiteral(".blkmqlab");
        if (const QString err = saveSession(path); !err.isEmpty())
            QMessageBox::critical(this, tr("Save failed"), err);
        else
            statusBar()->showMessage(tr("Session saved to %1: it opens at t = %2 µs")
                                         .arg(path)
                                         .arg(static_cast<double>(m_shownNs) / 1e3, 0, 'f', 3),
                10000);
    });
    auto* recent = file->addMenu(tr("Recent scenarios"));
    connect(recent, &QMenu::aboutToShow, this, [this, recent] {
        recent->clear();
        for (const auto& path : QSettings().value(QStringLiteral("recent")).toStringList())
            recent->addAction(path, this, [this, path] {
                if (const QString err = openFile(path); !err.isEmpty())
                    QMessageBox::warning(this, tr("Cannot open %1").arg(QFileInfo(path).fileName()), err);
            });
    });
    file->addSeparator();
    file->addAction(tr("Export &chart…"), this, &MainWindow::exportChartDialog);
    file->addAction(tr("Export time series (CSV)…"), this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Export CSV"), QString(), tr("CSV (*.csv)"));
        if (!path.isEmpty())
            if (const QString err = exportCsv(path); !err.isEmpty())
                QMessageBox::critical(this, tr("Export failed"), err);
    });
    file->addAction(tr("Export trace for Perfetto (JSON)…"), this, [this] {
        const QString path
            = QFileDialog::getSaveFileName(this, tr("Export trace"), QString(), tr("Chrome trace-event JSON (*.json)"));
        if (path.isEmpty())
            return;
        if (const QString err = exportTrace(path); !err.isEmpty())
            QMessageBox::critical(this, tr("Export failed"), err);
        else
            statusBar()->showMessage(tr("Writing the trace to %1…").arg(path));
    });
    connect(this, &MainWindow::traceExported, this, [this](const QString& path, const QString& error) {
        if (!error.isEmpty())
            QMessageBox::critical(this, tr("Export failed"), error);
        else
            statusBar()->showMessage(tr("Trace written to %1: open it in ui.perfetto.dev").arg(path), 10000);
    });
    file->addAction(tr("Save canvas as PNG…"), this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Save canvas"), QString(), tr("PNG (*.png)"));
        if (!path.isEmpty())
            if (const QString err = exportCanvas(path); !err.isEmpty())
                QMessageBox::critical(this, tr("Export failed"), err);
    });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    auto* sim = menuBar()->addMenu(tr("&Simulation"));
    sim->addAction(m_runAction);
    sim->addAction(stepAction);
    auto* backAction = sim->addAction(tr("Step back"), this, &MainWindow::stepBack);
    backAction->setShortcuts({ QKeySequence(Qt::SHIFT | Qt::Key_Period), QKeySequence(Qt::Key_Comma) });
    backAction->setToolTip(
        tr("The run one event earlier (Shift+. or ,): replayed from a checkpoint with its live changes"));
    m_switchBranch = sim->addAction(tr("Switch to the other branch"), this, &MainWindow::switchBranch);
    m_switchBranch->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_B));
    m_switchBranch->setToolTip(tr("A change at a point gone back to starts a new branch; this goes to the course it "
                                  "left, where the two part (and keeps this one as the other)"));
    m_dropBranch = sim->addAction(tr("Drop the other branch"), this, &MainWindow::dropOtherBranch);
    updateBranchActions();
    auto* markAction = sim->addAction(tr("Add bookmark…"), this, [this] {
        bool ok = false;
        const QString note = QInputDialog::getText(this, tr("Bookmark"),
            tr("A note for t = %1 µs").arg(static_cast<double>(m_shownNs) / 1e3, 0, 'f', 3), QLineEdit::Normal,
            QString(), &ok);
        if (ok)
            addBookmark(note);
    });
    markAction->setShortcut(Qt::Key_B);
    // The bookmarks, by time: each goes to its time.
    auto* marks = sim->addMenu(tr("Bookmarks"));
    connect(marks, &QMenu::aboutToShow, this, [this, marks] {
        marks->clear();
        std::vector<Session::Bookmark> byTime = m_bookmarks;
        std::stable_sort(byTime.begin(), byTime.end(), [](const auto& a, const auto& b) { return a.t_ns < b.t_ns; });
        for (const Session::Bookmark& b : byTime)
            marks->addAction(
                QStringLiteral("★ t = %1 ms: %2").arg(static_cast<double>(b.t_ns) / 1e6, 0, 'f', 4).arg(q(b.note)),
                this, [this, t = b.t_ns] { seekTo(t); });
        if (byTime.empty())
            marks->addAction(tr("none yet: B adds one at the time shown"))->setEnabled(false);
    });
    sim->addAction(nextAction);
    sim->addAction(resetAction);
    m_pauseOnStall = sim->addAction(tr("Pause when a stall is detected"));
    m_pauseOnStall->setCheckable(true);
    m_pauseOnStall->setChecked(true);
    connect(m_pauseOnStall, &QAction::toggled, m_runner, &EngineRunner::setPauseOnStall);
    setSpeedIndex(m_speed->value());
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
    m_scenarioDock = about;
    auto* inspect = dock(tr("Inspector"), m_inspector, Qt::RightDockWidgetArea);
    auto* compareBox = new QWidget;
    auto* cbl = new QVBoxLayout(compareBox);
    cbl->addWidget(m_compareBox);
    m_compareTable->setTextFormat(Qt::RichText);
    m_compareTable->setWordWrap(true); // the metric names wrap, so Δ and Δ% fit a narrow dock
    m_compareTable->setObjectName(QStringLiteral("compareTable"));
    cbl->addWidget(m_compareTable); // the table first: it is what a comparison is for
    // The same comparison over seeds (blkmqlab-cli ab): A as loaded and B on N seeds, a paired t-test.
    auto* seedsRow = new QHBoxLayout;
    m_seedsCount = new QSpinBox;
    m_seedsCount->setRange(2, 1000);
    m_seedsCount->setValue(10);
    m_seedsCount->setSuffix(tr(" seeds"));
    auto* seedsButton = new QPushButton(tr("Compare over"));
    seedsButton->setToolTip(tr("Run A and B to the scenario's end on the same seeds (from the scenario's), in the "
                               "background, and say per metric whether B differs from A by more than the spread "
                               "over the seeds (paired t-test, 95%)"));
    connect(seedsButton, &QPushButton::clicked, this, [this] {
        if (const QString err = compareOverSeeds(m_seedsCount->value()); !err.isEmpty())
            m_seedsTable->setText(err.toHtmlEscaped());
    });
    seedsRow->addWidget(seedsButton);
    seedsRow->addWidget(m_seedsCount);
    seedsRow->addStretch(1);
    cbl->addLayout(seedsRow);
    m_seedsTable = new QLabel;
    m_seedsTable->setTextFormat(Qt::RichText);
    m_seedsTable->setWordWrap(true);
    m_seedsTable->setObjectName(QStringLiteral("seedsTable"));
    cbl->addWidget(m_seedsTable);
    cbl->addWidget(new QLabel(tr("Kernel patches of run B (dashed curves):")));
    cbl->addWidget(m_patchesB);
    m_patchesB->setEnabled(false);
    auto* compare = dock(tr("Compare A/B"), compareBox, Qt::RightDockWidgetArea);
    m_compareDock = compare;
    m_lessonsDock = dock(tr("Lessons"), m_lessons, Qt::RightDockWidgetArea);
    tabifyDockWidget(about, inspect);
    tabifyDockWidget(patches, compare);
    tabifyDockWidget(patches, m_lessonsDock);
    about->raise();
    patches->raise();
    connect(m_lessons, &LessonPanel::playRequested, this, &MainWindow::playLessonStep);
    connect(m_lessons, &LessonPanel::opened, this, &MainWindow::showLessonMachine);
    connect(m_runner, &EngineRunner::lessonPlayed, this, &MainWindow::lessonStepPlayed);
    connect(m_runner, &EngineRunner::sessionReplayed, this, &MainWindow::sessionReplayed);
    connect(m_compareBox, &QCheckBox::toggled, this, &MainWindow::setCompare);
    connect(m_patchesB, &PatchPanel::restartRequested, this, [this](const std::vector<std::string>&) {
        if (const QString err = compareWith(m_patchesB->currentSets(true)); !err.isEmpty()) {
            m_patchesB->setKernel(
                m_sessions.size() > 1 ? m_sessions[1].runner->scenario().kernel : m_runner->scenario().kernel);
            QMessageBox::warning(this, tr("Cannot change run B's kernel"), err);
        }
    });
    connect(m_patchesB, &PatchPanel::commandRequested, this, [this](const Command& c) {
        for (const RunSession& s : m_sessions)
            if (s.patches == m_patchesB)
                s.runner->post(c);
        updateRunLabels();
    });
    connect(m_scenarioPanel, &ScenarioPanel::applyRequested, this, [this](const std::vector<std::string>& sets) {
        if (const QString err = applyOverrides(sets); !err.isEmpty())
            m_scenarioPanel->showError(err);
    });

    auto* logBox = new QWidget;
    auto* ll = new QVBoxLayout(logBox);
    ll->setContentsMargins(0, 0, 0, 0);
    auto* filter = new QLineEdit;
    filter->setPlaceholderText(tr("filter by CPU, request or event, e.g. IPI"));
    ll->addWidget(filter);
    m_logFilter->setSourceModel(m_log);
    m_logFilter->setFilterKeyColumn(-1);
    m_logFilter->setFilterCaseSensitivity(Qt::CaseInsensitive);
    connect(filter, &QLineEdit::textChanged, m_logFilter, &QSortFilterProxyModel::setFilterFixedString);
    m_logView->setModel(m_logFilter);
    m_logView->verticalHeader()->setDefaultSectionSize(18);
    m_logView->verticalHeader()->hide();
    m_logView->horizontalHeader()->setStretchLastSection(true);
    m_logView->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_logView->setColumnWidth(EventLogModel::Time, 96);
    m_logView->setColumnWidth(EventLogModel::Cpu, 44);
    m_logView->setColumnWidth(EventLogModel::Kind, 190);
    m_logView->setColumnWidth(EventLogModel::Request, 110);
    m_logView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_logView->setSelectionMode(QAbstractItemView::SingleSelection);
    connect(m_logView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
        [this](const QModelIndex& current) { selectLogRow(current.row()); });
    // A double-click goes back (or forward) to the row's time: the run as it stood then.
    connect(m_logView, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
        const QModelIndex source = m_logFilter->mapToSource(index);
        if (source.isValid())
            seekTo(m_log->record(source.row()).time);
    });
    ll->addWidget(m_logView);
    // The right-hand column runs to the bottom of the window and the log sits under the canvas and
    // the plots: a lesson's narrative and the panels get the whole height, the log its full width
    // less theirs.
    setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
    auto* logDock = dock(tr("Event log"), logBox, Qt::BottomDockWidgetArea);
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
    auto* plots = view->addMenu(tr("Plots"));
    for (std::size_t i = 0; i < m_plots->plots().size(); ++i) {
        auto* a = plots->addAction(m_plots->plots()[i]->title());
        a->setCheckable(true);
        a->setChecked(true);
        connect(a, &QAction::toggled, this, &MainWindow::applyPlotVisibility);
        m_plotActions.push_back(a);
    }
    plots->addSeparator();
    auto* grid = plots->addAction(tr("In two columns"));
    m_plotActions.push_back(grid);
    grid->setCheckable(true);
    connect(grid, &QAction::toggled, this, [this](bool on) { m_plots->setColumns(on ? 2 : 1); });
}

bool MainWindow::loadPreset(const QString& name, const std::vector<std::string>& sets)
{
    auto s = ScenarioLoader::fromPreset(name.toStdString(), sets);
    if (!s) {
        QMessageBox::warning(this, tr("Cannot load preset"), q(s.error()));
        return false;
    }
    loadScenario(*s);
    return true;
}

void MainWindow::loadScenario(const Scenario& scenario)
{
    if (m_lessonPlots) { // a lesson step sets its plots again after loading its scenario
        m_lessonPlots.reset();
        applyPlotVisibility();
    }
    m_runner->setPauseOnStall(m_pauseOnStall->isChecked());
    m_runner->load(scenario);
    m_bookmarks.clear();
    std::vector<DeviceLayout> devices;
    const auto snap = m_runner->snapshot();
    for (std::size_t d = 0; d < scenario.devices.size(); ++d) {
        DeviceLayout l;
        l.name = q(scenario.devices[d].name);
        l.nrHctx = scenario.devices[d].submit_queues;
        l.tagDepth = scenario.devices[d].hw_queue_depth;
        l.firstHctx = d == 0 ? 0 : devices.back().firstHctx + devices.back().nrHctx;
        devices.push_back(l);
    }
    const TagAllocatorInfo* tags = TagRegistry::find(scenario.kernel.tags);
    QStringList hctxNames;
    for (std::size_t d = 0; d < scenario.devices.size(); ++d) {
        devices[d].tagSet = q(scenario.devices[d].tag_set);
        for (int i = 0; i < devices[d].nrHctx; ++i)
            hctxNames << QStringLiteral("%1 hctx %2").arg(devices[d].name).arg(i);
    }
    m_scriptIds.clear();
    for (const std::string& id : *m_runner->snapshot()->scriptIds)
        m_scriptIds << q(id);
    m_log->setNames(m_scriptIds, hctxNames);
    m_scene->build(scenario.topology, devices, tags && tags->perCpuCaches);
    m_scene->setRequestNames(m_scriptIds);
    fitCanvas();
    m_patches->setKernel(scenario.kernel);
    clearRunView();
    m_timeline->reset(scenario.duration.ns());
    m_otherCourse = {};
    if (m_switchBranch)
        updateBranchActions();
    m_selection = {};
    m_inspector->clear();
    m_dropped = m_droppedShown = 0;
    // A scenario that is no preset (a file, a session, a counterexample) selects none of them.
    m_presets->setCurrentIndex(m_presets->findText(q(scenario.name)));
    m_scenarioPanel->setScenario(scenario);
    m_seed->setValue(static_cast<int>(std::min<std::uint64_t>(scenario.seed, 2147483647)));
    for (std::size_t i = 1; i < m_sessions.size(); ++i)
        loadSession(i);
    setWindowTitle(tr("BlkMQ Lab — %1").arg(q(scenario.name)));
    m_drawn.reset();
    m_scene->setHighlights({});
    frame();
    wake();
}

void MainWindow::clearRunView()
{
    m_plots->clear();
    m_plots->setSpan(static_cast<double>(m_runner->scenario().duration.ns()) / 1e6);
    m_log->clear();
    m_logPending.clear();
    m_rows.clear();
    m_rowsOthers.clear();
    m_markerLog.clear();
    m_banner->hide();
    m_stallSteps.clear();
    m_stallStep = -1;
    m_raceBanner->hide();
}

void MainWindow::applyCommand(const Command& c)
{
    m_runner->post(c);
    wake();
}

void MainWindow::greet()
{
    if (!m_runner->isRunning())
        runOrPause();
    statusBar()->showMessage(tr("%1 is running. Space pauses, . steps one event, N runs to the next interesting "
                                "one; the Lessons tab walks through the three threads, the Scenario box switches "
                                "presets.")
                                 .arg(q(m_runner->scenario().name)));
}

void MainWindow::runOrPause()
{
    const bool running = m_runner->isRunning();
    if (!running && atEnd()) {
        m_runAction->setChecked(false);
        statusBar()->showMessage(tr("The run has ended: Reset (Ctrl+R) to start it again"), 8000);
        return;
    }
    wake();
    for (const RunSession& s : m_sessions)
        running ? s.runner->pause() : s.runner->run();
}

QString MainWindow::applyOverrides(const std::vector<std::string>& sets)
{
    nlohmann::json doc = nlohmann::json::parse(m_runner->liveScenarioJson());
    for (const auto& set : sets) {
        auto r = ScenarioLoader::applySet(doc, set);
        if (!r)
            return q(r.error());
    }
    auto s = ScenarioLoader::fromJson(doc);
    if (!s)
        return q(s.error());
    m_runner->pause();
    loadScenario(*s);
    return {};
}

void MainWindow::setCompare(bool on)
{
    m_compareBox->setChecked(on);
    m_patchesB->setEnabled(on);
    if (on == (m_sessions.size() > 1))
        return;
    if (on) {
        auto* runner = new EngineRunner(this);
        runner->followLeader(m_runner);
        runner->setPauseOnStall(false);
        m_patchesB->setKernel(m_runner->scenario().kernel);
        m_sessions.push_back({ runner, m_patchesB, tr("B") });
        loadSession(m_sessions.size() - 1);
        if (m_runner->isRunning())
            runner->run();
    } else {
        for (std::size_t i = 1; i < m_sessions.size(); ++i)
            delete m_sessions[i].runner;
        m_sessions.resize(1);
        m_compareTable->clear();
    }
    updateRunLabels();
}

void MainWindow::updateRunLabels()
{
    // Each compared run is named by how it differs from A: "B: complete-llist on".
    const std::vector<std::string> a = m_patches->currentSets(true);
    QStringList others;
    for (std::size_t i = 1; i < m_sessions.size(); ++i) {
        QStringList diff;
        for (const std::string& set : m_sessions[i].patches->currentSets(true))
            if (std::find(a.begin(), a.end(), set) == a.end())
                diff << PlotPanel::markerLabel(QString(), q(set)).mid(2);
        others << QString(m_sessions[i].label + QStringLiteral(": ")
            + (diff.isEmpty() ? tr("the same kernel") : diff.join(QStringLiteral(", "))));
    }
    m_plots->setRuns(others);
}

QString MainWindow::compareWith(const std::vector<std::string>& sets)
{
    for (const auto& set : sets)
        if (set.rfind("kernel.", 0) != 0)
            return tr("%1: run B differs from A in kernel settings only (kernel.*)").arg(q(printable(set)));
    auto b = ScenarioLoader::fromText(m_runner->scenario().sourceJson, "scenario", sets);
    if (!b)
        return q(b.error());
    setCompare(true);
    m_patchesB->setKernel(b->kernel);
    loadSession(1);
    updateRunLabels();
    m_compareDock->raise(); // the table of A, B and their differences
    return {};
}

void MainWindow::loadSession(std::size_t i)
{
    // Session i: a point of an experiment over scenario A as loaded, with its own kernel settings.
    const std::string base = m_runner->scenario().sourceJson;
    std::vector<AxisPoint> points;
    for (const RunSession& s : m_sessions)
        points.push_back({ s.label.toStdString(), s.patches->currentSets(true) });
    points.front().sets.clear(); // A is the scenario as loaded
    const Experiment runs(
        [&](const std::vector<std::string>& sets) { return ScenarioLoader::fromText(base, "scenario", sets); },
        { Axis::configurations("kernel", std::move(points)) });
    auto s = runs.scenario(i);
    if (!s) {
        m_compareTable->setText(q(s.error()).toHtmlEscaped());
        return;
    }
    m_sessions[i].runner->setSpeed(m_runner->speed());
    m_sessions[i].runner->load(*s);
}

void MainWindow::updateCompareTable()
{
    if (m_sessions.size() < 2)
        return;
    std::vector<std::shared_ptr<const Snapshot>> snaps;
    for (const RunSession& s : m_sessions)
        if (!snaps.emplace_back(s.runner->snapshot()))
            return;
    const auto cell = [](const QString& text) { return QStringLiteral("<td align=right nowrap>%1</td>").arg(text); };
    QString html = QStringLiteral("<table cellspacing=2 width='100%' style='font-size:small'><tr><th></th>");
    for (const RunSession& s : m_sessions)
        html += QStringLiteral("<th>%1</th>").arg(s.label);
    for (std::size_t k = 1; k < m_sessions.size(); ++k)
        html += QStringLiteral("<th title='%1 − %2'>Δ</th><th>Δ%</th>").arg(m_sessions[k].label, m_sessions[0].label);
    html += QStringLiteral("</tr><tr><td>%1</td>").arg(tr("simulated time"));
    for (const auto& snap : snaps)
        html += cell(QString::number(snap->now.seconds() * 1e3, 'f', 3) + tr(" ms"));
    html += QStringLiteral("</tr>");
    for (std::size_t i = 0; i < kMetrics.size(); ++i) {
        const Metric& m = kMetrics[i];
        if (std::all_of(snaps.begin(), snaps.end(), [i](const auto& snap) { return snap->totals[i] == 0; }))
            continue; // a metric no run exercises
        html += QStringLiteral("<tr><td width='26%'>%1</td>")
                    .arg(QString::fromUtf8(m.label.data(), static_cast<qsizetype>(m.label.size())).toHtmlEscaped());
        for (const auto& snap : snaps)
            html += cell(QString::fromStdString(formatMetric(m, snap->totals[i])));
        const double a = snaps.front()->totals[i];
        // A difference that rounds to zero is written without a sign ("-0.0%" reads as a change).
        const auto signedText = [](double d, QString text) {
            if (!text.contains(QRegularExpression(QStringLiteral("[1-9]"))))
                return text.startsWith(QLatin1Char('-')) ? text.mid(1) : text;
            return d > 0 ? QLatin1Char('+') + text : text;
        };
        for (std::size_t k = 1; k < snaps.size(); ++k) {
            const double d = snaps[k]->totals[i] - a;
            html += cell(signedText(d, QString::fromStdString(formatMetric(m, d))));
            html += cell(a != 0 ? signedText(d, QString::number(100.0 * d / a, 'f', 1)) + QLatin1Char('%')
                                : QStringLiteral("–"));
        }
        html += QStringLiteral("</tr>");
    }
    html += QStringLiteral("</table>");
    m_compareTable->setText(html);
}

void MainWindow::step()
{
    if (atEnd()) {
        statusBar()->showMessage(tr("The run has ended: Reset (Ctrl+R) to start it again"), 8000);
        return;
    }
    m_stepPending = 1;
    m_runner->step();
    wake();
}

void MainWindow::stepToInteresting()
{
    if (atEnd()) {
        statusBar()->showMessage(tr("The run has ended: Reset (Ctrl+R) to start it again"), 8000);
        return;
    }
    m_stepPending = 2;
    if (const auto snap = m_runner->snapshot()) {
        m_interestingFrom = snap->counters;
        m_stalledBefore = snap->stalled;
    }
    m_runner->stepToInteresting();
    wake();
}

void MainWindow::reset()
{
    for (const RunSession& s : m_sessions)
        s.runner->pause();
    auto s = ScenarioLoader::fromText(m_runner->liveScenarioJson(), "scenario");
    loadScenario(s ? *s : m_runner->scenario());
}

void MainWindow::setSpeedIndex(int index) { setSpeed(kSpeeds[std::clamp(index, 0, kSpeedSteps - 1)]); }

void MainWindow::setPauseAt(SimTime t)
{
    for (const RunSession& session : m_sessions)
        session.runner->setPauseAt(t);
}

void MainWindow::setSpeed(double s)
{
    for (const RunSession& session : m_sessions)
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

void MainWindow::frame()
{
    const qint64 nowMs = QDateTime::currentMSecsSinceEpoch();
    const double frameMs = m_lastFrameMs ? std::min<double>(100.0, static_cast<double>(nowMs - m_lastFrameMs)) : 16.0;
    m_lastFrameMs = nowMs;
    RunnerOutput out = m_runner->drain();
    m_dropped += out.traceDropped;
    m_log->addDropped(out.traceDropped);
    if (!out.rows.empty()) {
        m_plots->append(out.rows);
        m_rows.insert(m_rows.end(), out.rows.begin(), out.rows.end());
    }
    m_markerLog.insert(m_markerLog.end(), out.markers.begin(), out.markers.end());
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
    if (snap && (changed || m_scene->animating()))
        m_scene->update(snap, out.trace, frameMs, figures);
    // The event log takes its rows with the figures (scrolling it repaints every visible row).
    m_logPending.insert(m_logPending.end(), out.trace.begin(), out.trace.end());
    if (figures && !m_logPending.empty()) {
        const bool atBottom = m_logView->verticalScrollBar()->value() >= m_logView->verticalScrollBar()->maximum() - 2;
        m_log->append(m_logPending);
        m_logPending.clear();
        if (atBottom)
            m_logView->scrollToBottom();
    }
    // The interval in progress, so the plots reach the clock between samples. New rows drop the
    // provisional point; the runner may have published this snapshot before a frame drained them.
    if (snap && (fresh || !out.rows.empty()))
        m_plots->setProvisional(snap->intervalSoFar);
    if (snap) {
        m_shownNs = snap->now.ns();
        m_timeline->setShown(m_shownNs);
        m_timeline->setReached(m_runner->furthestNs());
        if (snap->firstStallNs >= 0)
            m_timeline->addMark(snap->firstStallNs, TimelineBar::Mark::Stall, tr("the stall detector fired"));
    }
    for (std::size_t i = 1; i < m_sessions.size(); ++i) {
        const auto rows = m_sessions[i].runner->drain().rows;
        if (m_rowsOthers.size() < i)
            m_rowsOthers.resize(i);
        m_rowsOthers[i - 1].insert(m_rowsOthers[i - 1].end(), rows.begin(), rows.end());
        const auto snapB = m_sessions[i].runner->snapshot();
        const bool freshB = snapB && snapB != m_drawnB;
        changed |= !rows.empty() || freshB;
        m_drawnB = snapB;
        m_plots->append(rows, static_cast<int>(i));
        if (snapB && (freshB || !rows.empty()))
            m_plots->setProvisional(snapB->intervalSoFar, static_cast<int>(i));
    }
    if (m_stepPending == 2 && fresh) { // say where Next interesting stopped, and why
        m_stepPending = 0;
        QStringList why;
        for (const stop::InterestingCounter& i : stop::interestingCounters()) {
            const auto field = std::find_if(std::begin(kCounterFields), std::end(kCounterFields),
                [&](const CounterField& f) { return f.name == i.counter; });
            if (field != std::end(kCounterFields)
                && snap->counters.*(field->field) != m_interestingFrom.*(field->field))
                why << q(std::string(i.what));
        }
        if (snap->stalled && !m_stalledBefore)
            why << tr("the stall detector fired");
        statusBar()->showMessage(why.isEmpty()
                ? tr("Next interesting: nothing before t = %1 µs").arg(static_cast<double>(m_shownNs) / 1e3, 0, 'f', 3)
                : tr("Next interesting: stopped at t = %1 µs: %2")
                      .arg(static_cast<double>(m_shownNs) / 1e3, 0, 'f', 3)
                      .arg(why.join(QStringLiteral("; "))),
            10000);
    }
    if (m_stepPending && fresh) { // say what a step did, even when nothing on the canvas moved
        const QString what = tr("Step:");
        m_stepPending = 0;
        statusBar()->showMessage(out.trace.empty()
                ? tr("%1 t = %2 µs; an event that leaves no trace (a timer, a CPU's next op)")
                      .arg(what)
                      .arg(static_cast<double>(m_shownNs) / 1e3, 0, 'f', 3)
                : tr("%1 t = %2 µs; %3")
                      .arg(what)
                      .arg(static_cast<double>(out.trace.back().time) / 1e3, 0, 'f', 3)
                      .arg(m_log->describeRow(out.trace.back())),
            10000);
    }
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
        if (figures) {
            updateCompareTable();
            refreshInspector();
            updateStatus();
        }
    } else if (!playing && (m_plotsStale || m_figuresStale)) { // the run stopped between figures
        if (m_plotsStale)
            m_plots->replot();
        if (m_figuresStale && snap) {
            m_scene->update(snap, {}, frameMs, true);
            updateCompareTable();
            refreshInspector();
            updateStatus();
        }
        m_plotsStale = m_figuresStale = false;
    }
    // Idle: nothing runs, nothing changed and nothing glides: stop drawing until wake().
    bool active = changed || m_scene->animating() || m_plotsStale || m_figuresStale || !m_logPending.empty();
    for (const RunSession& session : m_sessions)
        active |= session.runner->isRunning() || session.runner->busy();
    if (!active)
        m_timer->stop();
}

void MainWindow::wake()
{
    if (!m_timer->isActive()) {
        m_lastFrameMs = 0;
        m_timer->start(16);
    }
}

bool MainWindow::drawing() const { return m_timer->isActive(); }

bool MainWindow::atEnd() const
{
    const auto snap = m_runner->snapshot();
    return snap && snap->now >= m_runner->scenario().duration;
}

void MainWindow::updateStatus()
{
    m_time->setText(tr("t = %1 ms of %2")
                        .arg(static_cast<double>(m_shownNs) / 1e6, 0, 'f', 4)
                        .arg(q(formatDuration(m_runner->scenario().duration))));
    QString legend;
    for (int c = 0; c < kExecContexts; ++c)
        legend += QStringLiteral("<span style='background:%1'>&nbsp;%2&nbsp;</span> ")
                      .arg(TopologyScene::contextColor(c, false).name(),
                          QString::fromLatin1(execContextName(static_cast<ExecContext>(c))));
    legend += QStringLiteral("<span style='background:%1'>&nbsp;idle&nbsp;</span> &nbsp; requests: ")
                  .arg(TopologyScene::contextColor(0, true).name());
    for (RqState s : { RqState::Sched, RqState::Dispatch, RqState::AtDevice, RqState::Complete })
        legend += QStringLiteral("<span style='color:%1'>&#9679;</span> %2 ")
                      .arg(TokenLayer::stateColor(s).name(),
                          s == RqState::Sched          ? tr("scheduler")
                              : s == RqState::Dispatch ? tr("hctx->dispatch")
                              : s == RqState::AtDevice ? tr("device")
                                                       : tr("completing"));
    legend += tr("&nbsp; <span style='color:#c0392b'>&#9711;</span> stuck &nbsp; red arc: IPI &nbsp; "
                 "<span style='color:#117864'>dashed green arc</span>: tag steal &nbsp; red frame: RESTART set");
    if (m_lessons->lesson())
        legend += tr(" &nbsp; <span style='color:#f39c12'>orange frame</span>: what the lesson step points at");
    if (!m_scene->selectedRect().isEmpty())
        legend += tr(" &nbsp; <span style='color:#21618c'>dashed blue frame</span>: selected");
    legend += tr(" &nbsp; %1 in flight").arg(m_scene->requestsInFlight());
    if (m_scene->sampled())
        legend += tr(" (a sample of %1 drawn)").arg(m_scene->drawnTokens());
    m_legend->setText(legend);
    if (m_dropped != m_droppedShown) {
        m_droppedShown = m_dropped;
        statusBar()->showMessage(tr("event log: %1 events skipped while the display fell behind").arg(m_dropped), 5000);
    }
}

QString MainWindow::inspect(const QString& what)
{
    const QStringList parts = what.split(QLatin1Char(':'));
    bool ok = false;
    const int index = parts.size() == 2 ? parts[1].toInt(&ok) : -1;
    const bool cpu = parts.value(0) == QLatin1String("cpu");
    const bool hctx = parts.value(0) == QLatin1String("hctx");
    if (!ok || (!cpu && !hctx))
        return tr("takes cpu:N or hctx:N (got '%1')").arg(q(printable(what.toStdString())));
    const auto snap = m_runner->snapshot();
    const int count = !snap ? 0 : static_cast<int>(cpu ? snap->cpus.size() : snap->hctxs.size());
    if (index < 0 || index >= count)
        return tr("%1 %2 does not exist (0..%3)").arg(parts[0]).arg(index).arg(count - 1);
    showSelection({ cpu ? CanvasSelection::Kind::Cpu : CanvasSelection::Kind::Hctx, index });
    return {};
}

void MainWindow::showSelection(const CanvasSelection& s)
{
    if (s.kind != CanvasSelection::Kind::Request || s.index != m_selection.index)
        m_selectionScript = -1;
    m_selection = s;
    if (s.kind == CanvasSelection::Kind::Request)
        m_scene->setFollowed(s.index);
    // The canvas marks what the inspector shows (a request is marked by the token it follows).
    switch (s.kind) {
    case CanvasSelection::Kind::Cpu:
        m_scene->setSelected(CanvasHighlight::Kind::Cpu, s.index);
        break;
    case CanvasSelection::Kind::Hctx:
        m_scene->setSelected(CanvasHighlight::Kind::Hctx, s.index);
        break;
    case CanvasSelection::Kind::Tags:
        m_scene->setSelected(CanvasHighlight::Kind::Tags, s.index);
        break;
    default:
        m_scene->setSelected(CanvasHighlight::Kind::Cpu, -1);
        break;
    }
    updateStatus(); // the legend names the frame
    for (auto* d : findChildren<QDockWidget*>())
        if (d->widget() && d->widget()->isAncestorOf(m_inspector))
            d->raise();
    refreshInspector();
}

void MainWindow::refreshKernelPath()
{
    const auto snap = m_runner->snapshot();
    int cpu = -1;
    if (snap) {
        if (m_selection.kind == CanvasSelection::Kind::Cpu)
            cpu = m_selection.index;
        else if (m_selection.kind == CanvasSelection::Kind::Hctx
            && m_selection.index < static_cast<int>(snap->hctxs.size()))
            cpu = snap->hctxs[static_cast<std::size_t>(m_selection.index)].vectorCpu;
        else if (m_selection.kind == CanvasSelection::Kind::Request)
            for (const RequestSnapshot& r : snap->requests)
                if (r.id == m_selection.index)
                    cpu = r.atCpu >= 0 ? r.atCpu : r.cpu;
    }
    QString html;
    if (cpu < 0 || cpu >= static_cast<int>(snap->cpus.size())) {
        html = tr("<span style=\"color:#7f8c8d\">Kernel path: click a CPU to see what it executes, level by "
                  "level</span>");
    } else {
        const CpuSnapshot& c = snap->cpus[static_cast<std::size_t>(cpu)];
        html = tr("<b>CPU %1</b>&nbsp; ").arg(cpu);
        if (c.kernelDepth == 0)
            html += tr("idle");
        const QString arrow = QStringLiteral(" → ");
        for (int i = 0; i < c.kernelDepth; ++i) {
            const KernelFrame& f = c.kernelPath[static_cast<std::size_t>(i)];
            if (i > 0)
                html += QStringLiteral(" <span style=\"color:#7f8c8d\">⇢</span> ");
            const bool idleTask = f.level == KernelFrame::Level::Task && c.currentTask < 0; // swapper
            const QColor bg = TopologyScene::contextColor(static_cast<int>(f.context), idleTask);
            const QString label = f.task ? QString::fromUtf8(f.task) : QString::fromLatin1(execContextName(f.context));
            html += QStringLiteral("<span style=\"background:%1\">&nbsp;%2&nbsp;</span> ")
                        .arg(bg.name(), label.toHtmlEscaped());
            QString path;
            for (const char* part : { f.via, f.caller, f.path })
                if (part)
                    path += (path.isEmpty() ? QString() : arrow) + QString::fromUtf8(part).toHtmlEscaped();
            html += f.running ? QStringLiteral("<b>%1</b>").arg(path)
                              : QStringLiteral("<span style=\"color:#566573\">%1</span>").arg(path);
        }
    }
    if (html != m_kernelPath->text())
        m_kernelPath->setText(html);
}

void MainWindow::refreshInspector()
{
    refreshKernelPath();
    const auto snap = m_runner->snapshot();
    if (!snap || m_selection.kind == CanvasSelection::Kind::None)
        return;
    QString html;
    switch (m_selection.kind) {
    case CanvasSelection::Kind::Cpu: {
        const CpuSnapshot& c = snap->cpus[static_cast<std::size_t>(m_selection.index)];
        html = QStringLiteral("<h3>CPU %1</h3><p>%2</p><p>pending softirqs: %3<br>blk_cpu_done: %4 request(s)<br>"
                              "call-function queue: %5</p><table>")
                   .arg(m_selection.index)
                   .arg(c.idle ? tr("idle") : tr("running in %1").arg(QString::fromLatin1(execContextName(c.running))))
                   .arg(EventLogModel::softirqNames(c.softirqPending))
                   .arg(c.doneListLen)
                   .arg(c.callSingleLen);
        for (int k = 0; k < kExecContexts; ++k)
            html += QStringLiteral("<tr><td>%1</td><td align=right>%2 µs</td></tr>")
                        .arg(QString::fromLatin1(execContextName(static_cast<ExecContext>(k))))
                        .arg(static_cast<double>(c.busy_ns[static_cast<std::size_t>(k)]) / 1e3, 0, 'f', 1);
        html += QStringLiteral("</table>");
        const auto& p = c.restartProfile; // ftrace's function profile, as in Roman Pen's table
        html += QStringLiteral("<p><b>blk_mq_sched_restart</b> (entry to return, nested interrupts included)<br>"
                               "hits %1, time %2 µs, avg %3 µs, s² %4 µs²</p>")
                    .arg(p.hits)
                    .arg(static_cast<double>(p.total_ns) / 1e3, 0, 'f', 3)
                    .arg(p.avg_ns() / 1e3, 0, 'f', 3)
                    .arg(p.s2_us2(), 0, 'f', 3);
        break;
    }
    case CanvasSelection::Kind::Hctx: {
        const HctxSnapshot& h = snap->hctxs[static_cast<std::size_t>(m_selection.index)];
        html = QStringLiteral(
            "<h3>%1 hctx %2</h3><p>interrupt vector on CPU %3<br>hctx->dispatch: %4<br>scheduler FIFO: %5<br>"
            "at the device: %6<br>completion queue: %7<br>RESTART: %8<br>driver tags: %9 of %10 in use, %11 held "
            "here</p>")
                   .arg(q(m_runner->scenario().devices[static_cast<std::size_t>(h.dev)].name))
                   .arg(h.index)
                   .arg(h.vectorCpu)
                   .arg(h.dispatchLen)
                   .arg(h.schedLen)
                   .arg(h.atDevice)
                   .arg(h.cqLen)
                   .arg(h.restart ? tr("<b>set</b>") : tr("clear"))
                   .arg(h.tagsInUse)
                   .arg(h.tagDepth)
                   .arg(h.tagsHeld);
        break;
    }
    case CanvasSelection::Kind::Request: {
        auto it = std::find_if(
            snap->requests.begin(), snap->requests.end(), [&](auto& r) { return r.id == m_selection.index; });
        if (it == snap->requests.end()) {
            html = tr("<h3>%1</h3><p>completed.</p>")
                       .arg(EventLogModel::requestName(m_selection.index, m_selectionScript, m_scriptIds));
            break;
        }
        m_selectionScript = it->script;
        html = tr("<h3>%1</h3><p>%2%3<br>submitted on CPU %4 at %5 µs<br>%6<br>dispatched at %7 µs</p>")
                   .arg(EventLogModel::requestName(it->id, it->script, m_scriptIds))
                   .arg(QString::fromLatin1(rqStateWhere(it->state)))
                   .arg(it->stuck ? tr(" — <b style='color:#c0392b'>stuck</b>") : QString())
                   .arg(it->cpu)
                   .arg(static_cast<double>(it->submitted_ns) / 1e3, 0, 'f', 3)
                   .arg(q(m_runner->scenario()
                                .devices[static_cast<std::size_t>(snap->hctxs[static_cast<std::size_t>(it->hctx)].dev)]
                                .name)
                       + tr(" hctx %1").arg(snap->hctxs[static_cast<std::size_t>(it->hctx)].index))
                   .arg(it->state >= RqState::AtDevice
                           ? QString::number(static_cast<double>(it->dispatched_ns) / 1e3, 'f', 3)
                           : QStringLiteral("-"));
        break;
    }
    case CanvasSelection::Kind::Tags: {
        const HctxSnapshot& h = snap->hctxs[static_cast<std::size_t>(m_selection.index)];
        const auto& map = snap->tagMaps[static_cast<std::size_t>(h.tags)];
        QStringList used, lost;
        std::map<int, QStringList> cached; // by CPU
        for (std::size_t t = 0; t < map.size(); ++t) {
            if (map[t] == kTagInUse)
                used << QString::number(t);
            else if (map[t] == kTagLost)
                lost << QString::number(t);
            else if (map[t] >= 0)
                cached[map[t]] << QString::number(t);
        }
        QString caches;
        for (const auto& [cpu, tags] : cached)
            caches += tr("<br><span style='color:%1'>&#9632;</span> CPU %2 caches %3")
                          .arg(TagMapItem::cacheColor(cpu).name())
                          .arg(cpu)
                          .arg(tags.join(QStringLiteral(", ")));
        if (!lost.isEmpty())
            caches += tr("<br><b>lost</b> (neither free nor in use, ida-lock-split): %1")
                          .arg(lost.join(QStringLiteral(", ")));
        html = tr("<h3>driver tags of %1 hctx %2</h3><p>%3 of %4 in use%5</p><p>in use: %6%7</p>")
                   .arg(q(m_runner->scenario().devices[static_cast<std::size_t>(h.dev)].name))
                   .arg(h.index)
                   .arg(h.tagsInUse)
                   .arg(h.tagDepth)
                   .arg(h.tagsHeld != h.tagsInUse ? tr(" (%1 by this hctx; the set is shared)").arg(h.tagsHeld)
                                                  : QString())
                   .arg(used.isEmpty() ? tr("none") : used.join(QStringLiteral(", ")))
                   .arg(caches);
        break;
    }
    case CanvasSelection::Kind::None:
        break;
    }
    m_inspector->setHtml(html);
}

namespace {
// Every export goes through SafeFile: atomic for files, written through to a
// device or FIFO, never replacing one.
QString writeOut(const QString& path, const QByteArray& bytes)
{
    const std::string err = SafeFile::write(path.toStdString(), std::string_view(bytes.constData(), bytes.size()));
    return QString::fromStdString(err);
}
} // namespace

bool MainWindow::stalled() const { return !m_banner->isHidden(); }

void MainWindow::showStall(const QString& why, const std::vector<StallStep>& steps)
{
    m_stallSteps = steps;
    m_stallStep = -1;
    m_banner->setToolTip(why); // the whole explanation in prose, as the CLI prints it
    renderStallBanner();
    m_banner->show();
    wake();
}

void MainWindow::renderStallBanner()
{
    if (m_stallSteps.empty()) {
        m_banner->setText(tr("<b>Stall detected.</b> ") + m_banner->toolTip().toHtmlEscaped());
        return;
    }
    QString html = tr("<b>Stall detected.</b> How it came about (click a step to show what it is about):");
    html.append(QStringLiteral("<table cellspacing=\"0\" cellpadding=\"1\">"));
    for (std::size_t i = 0; i < m_stallSteps.size(); ++i) {
        const StallStep& st = m_stallSteps[i];
        const bool current = static_cast<int>(i) == m_stallStep;
        html.append(QStringLiteral(
            "<tr><td>%1.&nbsp;</td><td><a href=\"step:%2\" style=\"color:#7b241c\">t&nbsp;=&nbsp;%3&nbsp;µs"
            "</a>&nbsp;</td><td>%4%5%6</td><td>&nbsp;<a href=\"back:%2\" style=\"color:#7b241c\">%7</a></td></tr>")
                        .arg(i + 1)
                        .arg(i)
                        .arg(static_cast<double>(st.at.ns()) / 1e3, 0, 'f', 3)
                        .arg(current ? QStringLiteral("<b>") : QString(), q(st.text).toHtmlEscaped(),
                            current ? QStringLiteral("</b>") : QString(), tr("back&nbsp;to&nbsp;it")));
    }
    html.append(QStringLiteral("</table>"));
    m_banner->setText(html);
}

namespace {
// A CPU, an hctx or a tag map that a stall step or a lesson step points at: outlined on the canvas,
// and the object the inspector shows.
CanvasSelection markAndSelect(CanvasHighlight::Kind kind, int index, std::vector<CanvasHighlight>& marks)
{
    marks.push_back({ kind, index });
    switch (kind) {
    case CanvasHighlight::Kind::Cpu:
        return { CanvasSelection::Kind::Cpu, index };
    case CanvasHighlight::Kind::Hctx:
        return { CanvasSelection::Kind::Hctx, index };
    case CanvasHighlight::Kind::Tags:
        return { CanvasSelection::Kind::Tags, index };
    case CanvasHighlight::Kind::Device:
        break;
    }
    return {};
}
} // namespace

void MainWindow::selectStallStep(int step)
{
    if (step < 0 || step >= static_cast<int>(m_stallSteps.size()))
        return;
    m_stallStep = step;
    renderStallBanner();
    const StallStep& st = m_stallSteps[static_cast<std::size_t>(step)];
    CanvasSelection sel;
    std::vector<CanvasHighlight> marks;
    switch (st.object) {
    case StallStep::Object::Request:
        sel = { CanvasSelection::Kind::Request, st.index };
        break;
    case StallStep::Object::Hctx:
        sel = markAndSelect(CanvasHighlight::Kind::Hctx, st.index, marks);
        break;
    case StallStep::Object::Tags:
        sel = markAndSelect(CanvasHighlight::Kind::Tags, st.index, marks);
        break;
    case StallStep::Object::Cpu:
        sel = markAndSelect(CanvasHighlight::Kind::Cpu, st.index, marks);
        break;
    case StallStep::Object::None:
        break;
    }
    m_scene->setHighlights(marks);
    if (sel.kind != CanvasSelection::Kind::None)
        showSelection(sel);
    // The log at the step's time: the first row at or after it (rows are in time order).
    int lo = 0, hi = m_log->rowCount();
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (m_log->record(mid).time < st.at.ns())
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == m_log->rowCount())
        m_logView->scrollToBottom();
    else if (const QModelIndex at = m_logFilter->mapFromSource(m_log->index(lo, 0)); at.isValid())
        m_logView->scrollTo(at, QAbstractItemView::PositionAtTop);
    wake();
}

QString MainWindow::checkChartPath(const QString& path)
{
    const QString format = QFileInfo(path).suffix().toLower();
    if (format != QLatin1String("png") && format != QLatin1String("svg") && format != QLatin1String("pdf"))
        return tr("%1: unknown chart format '%2' (use .png, .svg or .pdf)").arg(path, format);
    return QString::fromStdString(SafeFile::checkWritable(path.toStdString()));
}

QString MainWindow::exportChart(const QString& path, int plot, QSize size)
{
    const auto& all = m_plots->plots();
    if (plot < -1 || plot >= static_cast<int>(all.size()))
        return tr("there is no chart %1 (1 to %2, or all)").arg(plot + 1).arg(all.size());
    if (!size.isValid())
        size = QSize(1920, 1080); // a 16:9 slide
    if (const QString err = checkChartPath(path); !err.isEmpty())
        return err;
    std::vector<TimePlot*> plots;
    for (TimePlot* p : all)
        if (plot == -1 ? !p->isHidden() : p == all[static_cast<std::size_t>(plot)])
            plots.push_back(p);
    QBuffer out;
    out.open(QIODevice::WriteOnly);
    // Compared runs: their table beside their curves.
    const QString table = m_sessions.size() > 1 ? m_compareTable->text() : QString();
    if (!TimePlot::renderGrid(out, QFileInfo(path).suffix().toLower(), size, plots, m_plots->runsText(), table))
        return tr("could not render the chart to %1").arg(path);
    return writeOut(path, out.data());
}

int MainWindow::chartIndex(const QString& id) const
{
    if (id == QLatin1String("all"))
        return -1;
    bool number = false;
    const int n = id.toInt(&number);
    const auto& plots = m_plots->plots();
    if (number)
        return n >= 1 && n <= static_cast<int>(plots.size()) ? n - 1 : -2;
    for (std::size_t i = 0; i < kMetrics.size(); ++i) // a metric id: the chart that draws it
        if (QString::fromUtf8(kMetrics[i].id.data(), static_cast<qsizetype>(kMetrics[i].id.size())) == id)
            if (TimePlot* p = m_plots->plotOf(static_cast<int>(i)))
                return static_cast<int>(std::find(plots.begin(), plots.end(), p) - plots.begin());
    return -2;
}

QString MainWindow::compareOverSeeds(int seeds)
{
    if (m_sessions.size() < 2)
        return tr("Turn on \"Run B beside A\" first: the comparison is between A and B's patch set.");
    const std::string base = m_runner->scenario().sourceJson;
    const std::vector<std::string> bSets = m_sessions[1].patches->currentSets(true);
    const std::uint64_t first = m_runner->scenario().seed;
    const QString bLabel = m_sessions[1].label;
    m_seedsTable->setText(tr("Running A and B on %1 seeds…").arg(seeds));
    auto* worker = QThread::create([this, base, bSets, first, seeds, bLabel] {
        auto result = blkmq::compareOverSeeds(
            [&base](const std::vector<std::string>& sets) { return ScenarioLoader::fromText(base, "scenario", sets); },
            {}, bSets, first, static_cast<std::uint64_t>(seeds));
        QString html;
        if (!result) {
            html = QString::fromStdString(result.error()).toHtmlEscaped();
        } else {
            const SeedComparison& c = result.value();
            html = tr("<b>%1 seeds</b> (%2 to %3), to the scenario's end; B/A: mean of the per-seed ratios ± their "
                      "standard deviation; ✔: B differs from A by more than the spread, a paired t-test over the "
                      "seeds, two-sided 95% (|t| > %4). "
                      "Stalled: A %5, B %6.")
                       .arg(seeds)
                       .arg(first)
                       .arg(first + static_cast<std::uint64_t>(seeds) - 1)
                       .arg(c.tCritical, 0, 'f', 3)
                       .arg(c.stalledA)
                       .arg(c.stalledB);
            html += QStringLiteral("<table cellspacing=2 width='100%' style='font-size:small'><tr><th></th><th>A</th>"
                                   "<th>%1</th><th>%1/A</th><th title='differs (paired t-test, 95%)'>≠</th></tr>")
                        .arg(bLabel);
            for (const MetricComparison& m : c.metrics) {
                const Metric& metric = kMetrics[static_cast<std::size_t>(m.metric)];
                const QString ratio = m.hasRatio
                    ? QStringLiteral("%1±%2").arg(m.ratioMean, 0, 'f', 3).arg(m.ratioSd, 0, 'f', 3)
                    : QStringLiteral("–");
                const QString t = std::isfinite(m.t) ? QString::number(m.t, 'f', 2) : QStringLiteral("∞");
                html += QStringLiteral("<tr title='t = %6'><td width='30%'>%1</td><td align=right nowrap>%2</td>"
                                       "<td align=right nowrap>%3</td><td align=right nowrap>%4</td><td>%5</td></tr>")
                            .arg(QString::fromUtf8(metric.label.data(), static_cast<qsizetype>(metric.label.size()))
                                     .toHtmlEscaped(),
                                QString::fromStdString(formatMetric(metric, m.aMean)),
                                QString::fromStdString(formatMetric(metric, m.bMean)), ratio,
                                m.differs ? QStringLiteral("<b title='differs'>✔</b>") : QString(), t);
            }
            html += QStringLiteral("</table>");
        }
        const auto handoff = TbbHandoff::hold(); // as in exportTrace
        QMetaObject::invokeMethod(
            this,
            [this, html] {
                TbbHandoff::pass();
                m_seedsTable->setText(html);
                emit seedsCompared();
            },
            Qt::QueuedConnection);
    });
    startWorker(worker);
    return {};
}

void MainWindow::startWorker(QThread* worker)
{
    connect(worker, &QThread::finished, worker, &QObject::deleteLater);
    m_traceWorkers.push_back(worker);
    connect(worker, &QObject::destroyed, this, [this, worker] {
        m_traceWorkers.erase(std::remove(m_traceWorkers.begin(), m_traceWorkers.end(), worker), m_traceWorkers.end());
    });
    worker->start();
}

QString MainWindow::exportTrace(const QString& path)
{
    if (m_shownNs <= 0)
        return tr("nothing to trace yet: run the scenario first");
    if (const std::string err = SafeFile::checkWritable(path.toStdString()); !err.empty())
        return QString::fromStdString(err);
    auto scenario = ScenarioLoader::fromText(m_runner->liveScenarioJson(), "scenario");
    if (!scenario)
        return QString::fromStdString(scenario.error());
    const SimTime until(m_shownNs);
    auto* worker = QThread::create([this, sc = std::move(*scenario), until, path] {
        Engine engine(sc);
        ChromeTrace trace(engine, {});
        engine.addTraceSink(&trace);
        for (SimTime t = sc.sample_interval; engine.now() < until && !engine.finished(); t = t + sc.sample_interval) {
            engine.runUntil(std::min(t, until));
            trace.sample(engine);
        }
        const std::string err = SafeFile::write(path.toStdString(), trace.finish(engine));
        // The closure is built and posted while the hand-off is held, and passes it before it reads
        // what it captured (Qt's event queue is invisible to ThreadSanitizer).
        const auto handoff = TbbHandoff::hold();
        QMetaObject::invokeMethod(
            this,
            [this, path, err] {
                TbbHandoff::pass();
                emit traceExported(path, QString::fromStdString(err));
            },
            Qt::QueuedConnection);
    });
    startWorker(worker);
    return {};
}

QString MainWindow::exportCsv(const QString& path) const
{
    // Run A's series; with runs compared, each metric again per run (b_iops, ...) at the same times;
    // and the live changes, stalls and bookmarks (★ note) of the interval that ends at t_ns.
    std::vector<Marker> marks = m_markerLog;
    for (const Session::Bookmark& b : m_bookmarks)
        marks.push_back({ b.t_ns, "★ " + b.note });
    std::stable_sort(marks.begin(), marks.end(), [](const Marker& a, const Marker& b) { return a.t_ns < b.t_ns; });
    std::string header = TimeSeries::csvHeader();
    for (std::size_t k = 1; k < m_sessions.size(); ++k)
        for (const Metric& m : kMetrics)
            header.append(",").append(m_sessions[k].label.toLower().toStdString()).append("_").append(m.id);
    header += ",markers\n";
    QByteArray bytes = QByteArray::fromStdString(header);
    std::size_t marker = 0;
    std::int64_t previous = -1;
    static const std::vector<SeriesRow> kNone;
    std::vector<std::size_t> next(
        m_sessions.size(), 0); // each compared run's rows, walked with A's (both in time order)
    for (const auto& r : m_rows) {
        std::string line = TimeSeries::csvRow(r);
        for (std::size_t k = 1; k < m_sessions.size(); ++k) {
            const std::vector<SeriesRow>& rows = k - 1 < m_rowsOthers.size() ? m_rowsOthers[k - 1] : kNone;
            std::size_t& i = next[k];
            while (i < rows.size() && rows[i].t_ns < r.t_ns)
                ++i;
            const std::string other
                = i < rows.size() && rows[i].t_ns == r.t_ns ? TimeSeries::csvRow(rows[i]) : std::string();
            // Its values without its t_ns column; empty cells where B has no row at that time.
            line += other.empty() ? std::string(kMetrics.size(), ',') : other.substr(other.find(','));
        }
        std::string text;
        for (; marker < marks.size() && marks[marker].t_ns <= r.t_ns; ++marker)
            if (marks[marker].t_ns > previous)
                text.append(text.empty() ? "" : "; ").append(marks[marker].text);
        for (char& c : text)
            if (c == '"')
                c = '\'';
        line.append(",\"").append(text).append("\"\n");
        bytes += QByteArray::fromStdString(line);
        previous = r.t_ns;
    }
    return writeOut(path, bytes);
}

QString MainWindow::exportScenario(const QString& path) const
{
    return writeOut(
        path, QByteArray::fromStdString(nlohmann::json::parse(m_runner->liveScenarioJson()).dump(2) + "\n"));
}

QString MainWindow::exportCanvas(const QString& path)
{
    // At twice the on-screen size, with the simulated time and the legend under it: a picture a
    // slide can take as it is.
    const QSize view = m_view->viewport()->size();
    const QSize legend(view.width(), m_legend->heightForWidth(view.width()) + 8);
    QImage image(QSize(view.width(), view.height() + legend.height()) * 2, QImage::Format_ARGB32);
    image.fill(Qt::white);
    QPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.scale(2, 2);
    m_view->render(&painter, QRectF(0, 0, view.width(), view.height()), m_view->viewport()->rect());
    QFont f = font();
    f.setBold(true);
    painter.setFont(f);
    painter.setPen(QColor(0x2c, 0x3e, 0x50));
    painter.drawText(QRectF(8, 4, view.width() - 16, 20), Qt::AlignLeft,
        tr("%1 — t = %2 ms").arg(q(m_runner->scenario().name)).arg(static_cast<double>(m_shownNs) / 1e6, 0, 'f', 4));
    painter.translate(0, view.height());
    m_legend->render(&painter, QPoint(), QRegion(), QWidget::DrawChildren);
    painter.end();
    QBuffer out;
    out.open(QIODevice::WriteOnly);
    if (!image.save(&out, "PNG"))
        return tr("could not render the canvas");
    return writeOut(path, out.data());
}

QString MainWindow::saveScreenshot(const QString& path)
{
    // Everything shown belongs to one instant: the runs stop, their last output is drawn, and the
    // tokens stand where that snapshot puts them.
    for (const RunSession& session : m_sessions)
        session.runner->pause();
    for (int i = 0; i < 6; ++i) // the trace ring holds more than one frame drains
        frame();
    m_plots->replot(true); // a frame's replots wait for the event loop: the picture would miss them
    m_logView->scrollToBottom();
    m_scene->settle();
    QBuffer out;
    out.open(QIODevice::WriteOnly);
    if (!grab().save(&out, "PNG"))
        return tr("could not render the window");
    return writeOut(path, out.data());
}

void MainWindow::exportChartDialog()
{
    QStringList names;
    for (auto* p : m_plots->plots())
        names << p->title();
    names << tr("All charts, in a grid");
    bool ok = false;
    const QString which = QInputDialog::getItem(this, tr("Export chart"), tr("Chart"), names, 0, false, &ok);
    if (!ok)
        return;
    const int index = which == names.back() ? -1 : static_cast<int>(names.indexOf(which));
    // Slide sizes first: fonts and lines scale with the size, so a 1920x1080 chart reads on a projector.
    const QStringList sizes = { tr("1920x1080 (16:9 slide)"), tr("1280x720 (16:9)"), tr("2560x1440 (16:9, large)"),
        tr("1600x1200 (4:3)"), tr("900x300 (strip)"), tr("Other…") };
    const QString choice = QInputDialog::getItem(this, tr("Export chart"), tr("Size in pixels"), sizes, 0, false, &ok);
    if (!ok)
        return;
    QString sizeText = choice.section(QLatin1Char(' '), 0, 0);
    if (choice == sizes.back())
        sizeText = QInputDialog::getText(this, tr("Export chart"), tr("Size in pixels (width x height)"),
            QLineEdit::Normal, QStringLiteral("1920x1080"), &ok);
    const QStringList wh = sizeText.split(QLatin1Char('x'));
    const QSize size = wh.size() == 2 ? QSize(wh[0].trimmed().toInt(), wh[1].trimmed().toInt()) : QSize();
    if (!ok || size.width() < 50 || size.height() < 50 || size.width() > 10000 || size.height() > 10000) {
        if (ok)
            QMessageBox::warning(
                this, tr("Export chart"), tr("The size must look like 1920x1080 (50 to 10000 pixels each)."));
        return;
    }
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export chart"), QString(), tr("PNG (*.png);;SVG (*.svg);;PDF (*.pdf)"));
    if (path.isEmpty())
        return;
    if (const QString err = exportChart(path, index, size); !err.isEmpty())
        QMessageBox::critical(this, tr("Export failed"), err);
}

void MainWindow::openScenario()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Open scenario"), QString(),
        tr("Scenarios and fio job files (*.json *.fio);;Scenario (*.json);;fio job file (*.fio)"));
    if (path.isEmpty())
        return;
    if (const QString err = openFile(path); !err.isEmpty()) {
        QMessageBox::warning(this, tr("Cannot open %1").arg(QFileInfo(path).fileName()), err);
        return;
    }
    addRecent(path);
}

QString MainWindow::openFile(const QString& path)
{
    if (path.endsWith(QStringLiteral(".fio")))
        return openFioJob(path);
    auto s = ScenarioLoader::fromFile(path.toStdString());
    if (!s)
        return q(s.error());
    loadScenario(*s);
    return {};
}

// The job file replaces the workload of the scenario the window shows (its runtime the duration),
// as `blkmqlab-cli run --preset NAME job.fio` does; filename=/dev/NAME names one of its devices.
QString MainWindow::openFioJob(const QString& path, const std::vector<std::string>& sets)
{
    const Scenario& base = m_runner->scenario();
    auto s = FioJobFile::run(path.toStdString(), base, [&](const std::vector<std::string>& settings) {
        std::vector<std::string> all = settings;
        all.insert(all.end(), sets.begin(), sets.end()); // after the job's, so they can change a job
        return ScenarioLoader::fromText(base.sourceJson, "scenario", all);
    });
    if (!s)
        return q(s.error());
    loadScenario(*s);
    return {};
}

void MainWindow::saveScenario()
{
    const QString path = QFileDialog::getSaveFileName(this, tr("Save scenario"), QString(), tr("Scenario (*.json)"));
    if (path.isEmpty())
        return;
    if (const QString err = exportScenario(path); !err.isEmpty())
        QMessageBox::critical(this, tr("Save failed"), err);
    else
        addRecent(path);
}

void MainWindow::addRecent(const QString& path)
{
    QSettings settings;
    QStringList list = settings.value(QStringLiteral("recent")).toStringList();
    list.removeAll(path);
    list.prepend(path);
    settings.setValue(QStringLiteral("recent"), list.mid(0, 8));
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event)
{
    // Keep the whole machine in view when the canvas changes size, until the user zooms.
    if ((watched == m_view || watched == m_view->viewport()) && event->type() == QEvent::Resize && !m_zoomed)
        fitCanvas();
    // Ctrl + wheel zooms the canvas around the pointer (F fits it again).
    if (watched == m_view->viewport() && event->type() == QEvent::Wheel) {
        const auto* wheel = static_cast<QWheelEvent*>(event);
        if (wheel->modifiers() & Qt::ControlModifier) {
            zoomCanvas(wheel->angleDelta().y() > 0 ? 1.25 : 0.8);
            return true;
        }
    }
    return QMainWindow::eventFilter(watched, event);
}

void MainWindow::fitCanvas()
{
    m_zoomed = false;
    m_view->fitInView(m_scene->sceneRect(), Qt::KeepAspectRatio);
    m_scene->setViewScale(m_view->transform().m11());
}

void MainWindow::zoomCanvas(double factor)
{
    const double scale = m_view->transform().m11() * factor;
    if (scale < 0.05 || scale > 20)
        return;
    m_zoomed = true;
    m_view->scale(factor, factor);
    m_scene->setViewScale(m_view->transform().m11());
}

void MainWindow::selectLogRow(int proxyRow)
{
    if (proxyRow < 0)
        return;
    const QModelIndex source = m_logFilter->mapToSource(m_logFilter->index(proxyRow, 0));
    if (!source.isValid())
        return;
    const TraceRecord& r = m_log->record(source.row());
    if (r.rq >= 0) {
        m_selectionScript = r.script;
        showSelection({ CanvasSelection::Kind::Request, r.rq });
    } else if (r.cpu >= 0) {
        showSelection({ CanvasSelection::Kind::Cpu, r.cpu });
    }
    statusBar()->showMessage(m_log->describeRow(r), 10000);
}

QString MainWindow::openLesson(const QString& nameOrPath)
{
    const QString err = m_lessons->open(nameOrPath);
    if (err.isEmpty()) {
        m_lessonsDock->show();
        m_lessonsDock->raise();
        // The narrative needs the height: the lesson takes three quarters of the right-hand column,
        // the scenario and inspector below it the rest.
        QTimer::singleShot(0, this, [this] {
            resizeDocks({ m_lessonsDock, m_scenarioDock }, { height() * 3 / 4, height() / 4 }, Qt::Vertical);
        });
    }
    return err;
}

// The machine a lesson's text describes, before its first step: step 1's scenario at t = 0, paused.
void MainWindow::showLessonMachine()
{
    const auto lesson = m_lessons->shared();
    if (!lesson || lesson->size() == 0)
        return;
    auto s = lesson->scenarioOf(0);
    if (!s) {
        statusBar()->showMessage(tr("Lesson: %1").arg(q(s.error())), 10000);
        return;
    }
    for (const RunSession& session : m_sessions)
        session.runner->pause();
    loadScenario(*s);
    setLessonPlots(0);
    statusBar()->showMessage(tr("Lesson: %1 — press Next step to start").arg(q(lesson->title())), 10000);
}

void MainWindow::playLessonStep(int step, bool fresh)
{
    const auto lesson = m_lessons->shared();
    if (!lesson)
        return;
    int from = step;
    if (fresh) {
        auto s = lesson->scenarioOf(step);
        if (!s) {
            m_lessons->stepReached(step, q(s.error()), *m_runner->snapshot());
            return;
        }
        for (const RunSession& session : m_sessions)
            session.runner->pause();
        loadScenario(*s);
        from = lesson->segmentStart(step);
    }
    setLessonPlots(step);
    m_scene->setHighlights({});
    statusBar()->showMessage(tr("Lesson: playing step %1…").arg(step + 1));
    m_runner->playLesson(lesson, from, step);
    wake();
}

void MainWindow::lessonStepPlayed(int step, const QString& error)
{
    const auto lesson = m_lessons->shared();
    frame();
    const auto snap = m_runner->snapshot();
    if (!lesson || !snap || step < 0 || step >= lesson->size())
        return;
    m_lessons->stepReached(step, error, *snap);
    m_timeline->addMark(snap->now.ns(), TimelineBar::Mark::Lesson,
        tr("lesson step %1: %2").arg(step + 1).arg(q(lesson->steps()[static_cast<std::size_t>(step)].title)));
    std::vector<CanvasHighlight> marks;
    bool inspected = false;
    for (const LessonHighlight& h : lesson->steps()[static_cast<std::size_t>(step)].highlights) {
        CanvasSelection sel;
        switch (h.kind) {
        case LessonHighlight::Kind::Cpu:
            sel = markAndSelect(CanvasHighlight::Kind::Cpu, h.index, marks);
            break;
        case LessonHighlight::Kind::Hctx:
            sel = markAndSelect(CanvasHighlight::Kind::Hctx, h.index, marks);
            break;
        case LessonHighlight::Kind::Tags:
            sel = markAndSelect(CanvasHighlight::Kind::Tags, h.index, marks);
            break;
        case LessonHighlight::Kind::Queue:
            marks.push_back({ CanvasHighlight::Kind::Device, h.index });
            break;
        case LessonHighlight::Kind::Request: {
            for (const RequestSnapshot& r : snap->requests)
                if (r.script >= 0 && m_scriptIds.value(r.script) == q(h.request)) {
                    m_scene->setFollowed(r.id);
                    m_selectionScript = r.script;
                    sel = { CanvasSelection::Kind::Request, r.id };
                }
            break;
        }
        }
        if (!inspected && sel.kind != CanvasSelection::Kind::None) {
            m_selection = sel; // shown in the inspector without raising it over the lesson
            inspected = true;
        }
    }
    m_scene->setHighlights(marks);
    refreshInspector();
    statusBar()->showMessage(error.isEmpty() ? tr("Lesson step %1 reached at t = %2 µs")
                                                   .arg(step + 1)
                                                   .arg(static_cast<double>(snap->now.ns()) / 1e3, 0, 'f', 3)
                                             : tr("Lesson step %1: %2").arg(step + 1).arg(error),
        10000);
    wake();
}

void MainWindow::setLessonPlots(int step)
{
    m_lessonPlots.reset();
    const auto lesson = m_lessons->shared();
    if (lesson && step >= 0 && step < lesson->size())
        if (const auto& ids = lesson->plotsOf(step)) {
            std::vector<int> shown;
            const auto& plots = m_plots->plots();
            for (const std::string& id : *ids)
                if (const TimePlot* p = m_plots->plotOf(findMetric(id)))
                    shown.push_back(static_cast<int>(std::find(plots.begin(), plots.end(), p) - plots.begin()));
            m_lessonPlots = shown;
        }
    applyPlotVisibility();
}

bool MainWindow::lessonShows(std::size_t plot) const
{
    return !m_lessonPlots
        || std::find(m_lessonPlots->begin(), m_lessonPlots->end(), static_cast<int>(plot)) != m_lessonPlots->end();
}

void MainWindow::applyPlotVisibility()
{
    bool any = false;
    for (std::size_t i = 0; i < m_plots->plots().size() && i < m_plotActions.size(); ++i) {
        const bool on = m_plotActions[i]->isChecked() && lessonShows(i);
        m_plots->setPlotVisible(static_cast<int>(i), on);
        any = any || on;
    }
    m_plots->setVisible(any);
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    for (const RunSession& s : m_sessions)
        s.runner->pause();
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    event->accept();
}

QString MainWindow::saveSession(const QString& path)
{
    for (const RunSession& session : m_sessions)
        session.runner->pause();
    Session session = m_runner->currentSession();
    session.bookmarks = m_bookmarks;
    if (const Lesson* l = m_lessons->lesson()) {
        session.lesson = l->name();
        session.lessonStep = m_lessons->current();
    }
    nlohmann::json hidden = nlohmann::json::array();
    for (std::size_t i = 0; i < m_plots->plots().size(); ++i) { // what was hidden, not what a lesson step leaves out
        if (!lessonShows(i) ? i < m_plotActions.size() && !m_plotActions[i]->isChecked()
                            : m_plots->plots()[i]->isHidden())
            hidden.push_back(i);
    }
    session.view = { { "plots_hidden", hidden }, { "plot_columns", m_plots->columns() } };
    if (m_selection.kind == CanvasSelection::Kind::Cpu || m_selection.kind == CanvasSelection::Kind::Hctx)
        session.view["inspect"]
            = (m_selection.kind == CanvasSelection::Kind::Cpu ? "cpu:" : "hctx:") + std::to_string(m_selection.index);
    if (m_zoomed) {
        const QPointF centre = m_view->mapToScene(m_view->viewport()->rect().center());
        session.view["zoom"] = m_view->transform().m11();
        session.view["center"] = { centre.x(), centre.y() };
    }
    return writeOut(path, QByteArray::fromStdString(session.toText()));
}

QString MainWindow::openSession(const QString& path)
{
    auto s = Session::fromFile(path.toStdString());
    if (!s)
        return q(s.error());
    if (!s->lesson.empty())
        if (auto l = Lesson::load(s->lesson); !l)
            return q(path.toStdString() + ": lesson.name: " + l.error());
    if (!m_runner->snapshot()) // a window that shows nothing yet: the session's machine at t = 0 meanwhile
        loadScenario(*s->scenarioOf());
    for (const RunSession& session : m_sessions)
        session.runner->pause();
    m_opening = std::make_shared<const Session>(std::move(*s));
    statusBar()->showMessage(tr("Opening %1: replaying its run…").arg(path));
    m_runner->replaySession(m_opening);
    return {};
}

void MainWindow::stepBack()
{
    if (m_opening)
        return; // a replay is under way
    const std::uint64_t at = m_runner->snapshot()->events;
    if (at == 0) {
        statusBar()->showMessage(tr("Step back: the run is at its first event already"), 5000);
        return;
    }
    auto line = std::make_shared<Session>(m_runner->timeline());
    line->bookmarks = m_bookmarks;
    m_opening = line;
    m_moving = true;
    m_runner->replaySession(m_opening, Session::To::Event, at - 1);
}

void MainWindow::seekTo(std::int64_t ns)
{
    if (m_opening) { // one under way: this one waits, and replaces any that waited before it
        m_pendingSeek = ns;
        return;
    }
    m_pendingSeek = -1;
    auto line = std::make_shared<Session>(m_runner->timeline());
    ns = std::clamp<std::int64_t>(ns, 0, line->at_ns);
    line->bookmarks = m_bookmarks;
    m_opening = line;
    m_moving = true;
    m_runner->replaySession(m_opening, Session::To::Time, 0, SimTime(ns));
}

void MainWindow::switchBranch()
{
    if (m_opening || !m_runner->hasOtherBranch())
        return;
    const std::int64_t at = m_runner->otherBranchAtNs();
    const TimelineBar::Course leaving = m_timeline->cut(at, true);
    m_timeline->paste(m_otherCourse);
    m_otherCourse = leaving;
    m_opening = std::make_shared<const Session>(); // the runner replays its own; this marks a move
    m_moving = true;
    m_runner->switchBranch();
    statusBar()->showMessage(
        tr("Switching to the other branch at t = %1 µs…").arg(static_cast<double>(at) / 1e3, 0, 'f', 3));
}

void MainWindow::dropOtherBranch()
{
    if (m_opening)
        return;
    m_runner->dropOtherBranch();
    m_otherCourse = {};
    updateBranchActions();
    statusBar()->showMessage(tr("The other branch is dropped"), 5000);
}

void MainWindow::updateBranchActions()
{
    const bool other = m_runner->hasOtherBranch();
    m_switchBranch->setEnabled(other);
    m_dropBranch->setEnabled(other);
}

void MainWindow::finishMove()
{
    clearRunView(); // the scene, zoom, selection, lesson, bookmarks and timeline stay: the same run
    m_runner->adoptReplayed();
    updateBranchActions();
    for (const Session::Bookmark& b : m_bookmarks)
        m_plots->addMarker(static_cast<double>(b.t_ns) / 1e6, QStringLiteral("★ ") + q(b.note), false);
    m_drawn.reset();
    frame();
    refreshInspector();
    wake();
    statusBar()->showMessage(tr("At t = %1 µs, event %2")
                                 .arg(static_cast<double>(m_shownNs) / 1e3, 0, 'f', 3)
                                 .arg(m_runner->snapshot()->events),
        10000);
}

void MainWindow::addBookmark(const QString& note)
{
    QString text = note.simplified(); // one line, as a plot's label
    while (text.toUtf8().size() > limits::kBookmarkNoteBytes)
        text.chop(1);
    m_bookmarks.push_back({ m_shownNs, text.toStdString() });
    m_plots->addMarker(static_cast<double>(m_shownNs) / 1e6, QStringLiteral("★ ") + text, false);
    m_timeline->addMark(m_shownNs, TimelineBar::Mark::Bookmark, text);
    m_plots->replot();
}

void MainWindow::sessionReplayed(const QString& error)
{
    const auto session = std::exchange(m_opening, nullptr);
    if (!session)
        return;
    if (std::exchange(m_moving, false)) {
        if (!error.isEmpty())
            statusBar()->showMessage(tr("Could not move the run: %1").arg(error), 15000);
        else
            finishMove();
        emit sessionOpened(error);
        if (m_pendingSeek >= 0)
            seekTo(m_pendingSeek);
        return;
    }
    if (!error.isEmpty()) { // the run on screen is as it was
        statusBar()->showMessage(tr("Session not opened: %1").arg(error), 15000);
        emit sessionOpened(error);
        return;
    }
    const auto scenario = session->scenarioOf(); // it loaded on the worker
    loadScenario(*scenario);
    m_runner->adoptReplayed();
    m_bookmarks = session->bookmarks;
    for (const Session::Bookmark& b : m_bookmarks) {
        m_plots->addMarker(static_cast<double>(b.t_ns) / 1e6, QStringLiteral("★ ") + q(b.note), false);
        m_timeline->addMark(b.t_ns, TimelineBar::Mark::Bookmark, q(b.note));
    }
    if (!session->lesson.empty()) {
        const QSignalBlocker quiet(m_lessons); // its machine is the session's, not its first step's
        if (m_lessons->open(q(session->lesson)).isEmpty()) {
            m_lessonsDock->show();
            if (session->lessonStep >= 0 && session->lessonStep < m_lessons->lesson()->size()) {
                m_lessons->stepReached(session->lessonStep, QString(), *m_runner->snapshot());
                setLessonPlots(session->lessonStep);
            }
        }
    }
    const auto hidden = session->view.value("plots_hidden", nlohmann::json::array());
    for (std::size_t i = 0; i + 1 < m_plotActions.size(); ++i)
        m_plotActions[i]->setChecked(std::find(hidden.begin(), hidden.end(), nlohmann::json(i)) == hidden.end());
    if (const auto columns = session->view.value("plot_columns", 1); !m_plotActions.empty())
        m_plotActions.back()->setChecked(columns > 1);
    if (session->view.contains("zoom")) { // as it was zoomed, on the same point
        const double zoom = session->view["zoom"].get<double>();
        m_view->resetTransform();
        m_view->scale(zoom, zoom);
        m_zoomed = true;
        m_scene->setViewScale(zoom);
        if (const auto c = session->view.value("center", nlohmann::json::array()); c.size() == 2)
            m_view->centerOn(c[0].get<double>(), c[1].get<double>());
    }
    frame();
    if (session->view.contains("inspect")) // checked against this machine: one it lacks is said, not shown
        if (const QString err = inspect(q(session->view["inspect"].get<std::string>())); !err.isEmpty())
            statusBar()->showMessage(tr("view.inspect: %1").arg(err), 10000);
    wake();
    statusBar()->showMessage(tr("At t = %1 µs, event %2")
                                 .arg(static_cast<double>(m_shownNs) / 1e3, 0, 'f', 3)
                                 .arg(m_runner->snapshot()->events),
        10000);
    emit sessionOpened({});
}

} // namespace blkmq
