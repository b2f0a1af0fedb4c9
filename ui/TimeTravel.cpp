#include "TimeTravel.h"

#include "PlotPanel.h"
#include "UiText.h"
#include "WindowHost.h"
#include "io/Limits.h"
#include "io/SafeFile.h"
#include "lesson/Lesson.h"

#include <QAction>
#include <QFileDialog>
#include <QInputDialog>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>

namespace blkmq {

namespace {
QString micros(std::int64_t ns) { return QString::number(static_cast<double>(ns) / 1e3, 'f', 3); }
} // namespace

TimeTravel::TimeTravel(WindowHost& host, RunSet& runs, PlotPanel* plots, TimelineBar* timeline, QWidget* parent)
    : QObject(parent)
    , m_host(host)
    , m_runs(runs)
    , m_plots(plots)
    , m_timeline(timeline)
    , m_parent(parent)
{
    EngineRunner* a = m_runs.a();
    connect(m_timeline, &TimelineBar::seekRequested, this, &TimeTravel::seekTo);
    connect(a, &EngineRunner::sessionReplayed, this, &TimeTravel::replayed);
    connect(a, &EngineRunner::branched, this, [this](std::int64_t ns) {
        m_otherCourse = m_timeline->cut(ns);
        updateBranchActions();
        m_host.showMessage(tr("A change at t = %1 µs, a point gone back to: the run takes a new branch there; "
                              "the course it left is kept (Simulation → Switch to the other branch)")
                               .arg(micros(ns)),
            15000);
    });
}

void TimeTravel::addFileActions(QMenu* file)
{
    file->addAction(tr("Open session…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O), this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            m_parent, tr("Open session"), QString(), tr("BlkMQ Lab sessions (*.blkmqlab);;All files (*)"));
        if (path.isEmpty())
            return;
        if (const QString err = openSession(path); !err.isEmpty()) {
            QMessageBox::warning(m_parent, tr("Cannot open session"), err);
            return;
        }
        connect( // its replay's verdict, once
            this, &TimeTravel::sessionOpened, this,
            [this](const QString& error) {
                if (!error.isEmpty())
                    QMessageBox::warning(m_parent, tr("Cannot open session"), error);
            },
            Qt::SingleShotConnection);
    });
    file->addAction(tr("Save session…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S), this, [this] {
        QString path = QFileDialog::getSaveFileName(
            m_parent, tr("Save session"), QString(), tr("BlkMQ Lab sessions (*.blkmqlab)"));
        if (path.isEmpty())
            return;
        if (!path.endsWith(QStringLiteral(".blkmqlab")))
            path += QStringLiteral(".blkmqlab");
        if (const QString err = saveSession(path); !err.isEmpty())
            QMessageBox::critical(m_parent, tr("Save failed"), err);
        else
            m_host.showMessage(tr("Session saved to %1: it opens at t = %2 µs").arg(path, micros(m_shownNs)), 10000);
    });
}

void TimeTravel::addSimulationActions(QMenu* sim)
{
    auto* backAction = sim->addAction(tr("Step back"), this, &TimeTravel::stepBack);
    backAction->setShortcuts({ QKeySequence(Qt::SHIFT | Qt::Key_Period), QKeySequence(Qt::Key_Comma) });
    backAction->setToolTip(
        tr("The run one event earlier (Shift+. or ,): replayed from a checkpoint with its live changes"));
    m_switchBranch = sim->addAction(tr("Switch to the other branch"), this, &TimeTravel::switchBranch);
    m_switchBranch->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_B));
    m_switchBranch->setToolTip(tr("A change at a point gone back to starts a new branch; this goes to the course it "
                                  "left, where the two part (and keeps this one as the other)"));
    m_dropBranch = sim->addAction(tr("Drop the other branch"), this, &TimeTravel::dropOtherBranch);
    updateBranchActions();
    auto* markAction = sim->addAction(tr("Add bookmark…"), this, [this] {
        bool ok = false;
        const QString note = QInputDialog::getText(m_parent, tr("Bookmark"),
            tr("A note for t = %1 µs").arg(micros(m_shownNs)), QLineEdit::Normal, QString(), &ok);
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
}

void TimeTravel::newRun(std::int64_t durationNs)
{
    m_bookmarks.clear();
    m_timeline->reset(durationNs);
    m_otherCourse = {};
    updateBranchActions();
}

void TimeTravel::showBookmarks()
{
    for (const Session::Bookmark& b : m_bookmarks)
        m_plots->addMarker(static_cast<double>(b.t_ns) / 1e6, QStringLiteral("★ ") + q(b.note), false);
}

QString TimeTravel::saveSession(const QString& path)
{
    m_runs.pause();
    Session session = m_runs.a()->currentSession();
    session.bookmarks = m_bookmarks;
    if (m_viewOf)
        m_viewOf(session);
    return q(SafeFile::write(path.toStdString(), session.toText()));
}

QString TimeTravel::openSession(const QString& path)
{
    auto s = Session::fromFile(path.toStdString());
    if (!s)
        return q(s.error());
    if (!s->lesson.empty())
        if (auto l = Lesson::load(s->lesson); !l)
            return q(path.toStdString() + ": lesson.name: " + l.error());
    if (!m_runs.a()->snapshot()) // a window that shows nothing yet: the session's machine at t = 0 meanwhile
        m_host.loadScenario(*s->scenarioOf());
    m_runs.pause();
    m_opening = std::make_shared<const Session>(std::move(*s));
    m_host.showMessage(tr("Opening %1: replaying its run…").arg(path));
    m_runs.a()->replaySession(m_opening);
    return {};
}

void TimeTravel::stepBack()
{
    if (m_opening)
        return; // a replay is under way
    const std::uint64_t at = m_runs.a()->snapshot()->events;
    if (at == 0) {
        m_host.showMessage(tr("Step back: the run is at its first event already"), 5000);
        return;
    }
    auto line = std::make_shared<Session>(m_runs.a()->timeline());
    line->bookmarks = m_bookmarks;
    m_opening = line;
    m_moving = true;
    m_runs.a()->replaySession(m_opening, Session::To::Event, at - 1);
}

void TimeTravel::seekTo(std::int64_t ns)
{
    if (m_opening) { // one under way: this one waits, and replaces any that waited before it
        m_pendingSeek = ns;
        return;
    }
    m_pendingSeek = -1;
    auto line = std::make_shared<Session>(m_runs.a()->timeline());
    ns = std::clamp<std::int64_t>(ns, 0, line->at_ns);
    line->bookmarks = m_bookmarks;
    m_opening = line;
    m_moving = true;
    m_runs.a()->replaySession(m_opening, Session::To::Time, 0, SimTime(ns));
}

void TimeTravel::switchBranch()
{
    EngineRunner* a = m_runs.a();
    if (m_opening || !a->hasOtherBranch())
        return;
    const std::int64_t at = a->otherBranchAtNs();
    const TimelineBar::Course leaving = m_timeline->cut(at, true);
    m_timeline->paste(m_otherCourse);
    m_otherCourse = leaving;
    m_opening = std::make_shared<const Session>(); // the runner replays its own; this marks a move
    m_moving = true;
    m_switching = true;
    a->switchBranch();
    m_host.showMessage(tr("Switching to the other branch at t = %1 µs…").arg(micros(at)));
}

void TimeTravel::dropOtherBranch()
{
    if (m_opening)
        return;
    m_runs.a()->dropOtherBranch();
    m_otherCourse = {};
    updateBranchActions();
    m_host.showMessage(tr("The other branch is dropped"), 5000);
}

void TimeTravel::updateBranchActions()
{
    if (!m_switchBranch)
        return;
    const bool other = m_runs.a()->hasOtherBranch();
    m_switchBranch->setEnabled(other);
    m_dropBranch->setEnabled(other);
}

void TimeTravel::addBookmark(const QString& note)
{
    QString text = note.simplified(); // one line, as a plot's label
    while (text.toUtf8().size() > limits::kBookmarkNoteBytes)
        text.chop(1);
    m_bookmarks.push_back({ m_shownNs, text.toStdString() });
    m_plots->addMarker(static_cast<double>(m_shownNs) / 1e6, QStringLiteral("★ ") + text, false);
    m_timeline->addMark(m_shownNs, TimelineBar::Mark::Bookmark, text);
    m_plots->replot();
}

void TimeTravel::finishMove()
{
    // The scene, zoom, selection, lesson, bookmarks, timeline and plots stay: the same run. A switch
    // to the other branch draws that branch's plots afresh.
    const bool switched = std::exchange(m_switching, false);
    m_host.clearRunView(!switched);
    m_runs.a()->adoptReplayed();
    updateBranchActions();
    if (switched)
        showBookmarks();
    m_host.frame();
    m_host.wake();
}

void TimeTravel::replayed(const QString& error)
{
    const auto session = std::exchange(m_opening, nullptr);
    if (!session)
        return;
    EngineRunner* a = m_runs.a();
    const auto arrived = [&] {
        m_host.showMessage(
            tr("At t = %1 µs, event %2").arg(micros(a->snapshot()->now.ns())).arg(a->snapshot()->events), 10000);
    };
    if (std::exchange(m_moving, false)) {
        if (!error.isEmpty()) {
            m_switching = false;
            m_host.showMessage(tr("Could not move the run: %1").arg(error), 15000);
        } else {
            finishMove();
            arrived();
        }
        emit sessionOpened(error);
        if (m_pendingSeek >= 0)
            seekTo(m_pendingSeek);
        return;
    }
    if (!error.isEmpty()) { // the run on screen is as it was
        m_host.showMessage(tr("Session not opened: %1").arg(error), 15000);
        emit sessionOpened(error);
        return;
    }
    m_host.loadScenario(*session->scenarioOf()); // it loaded on the worker
    a->adoptReplayed();
    m_bookmarks = session->bookmarks;
    for (const Session::Bookmark& b : m_bookmarks)
        m_timeline->addMark(b.t_ns, TimelineBar::Mark::Bookmark, q(b.note));
    showBookmarks();
    emit sessionLoaded(session);
    m_host.wake();
    arrived();
    emit sessionOpened({});
}

} // namespace blkmq
