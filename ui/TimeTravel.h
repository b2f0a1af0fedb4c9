#pragma once

#include "RunSet.h"
#include "TimelineBar.h"
#include "session/Session.h"

#include <QObject>

#include <functional>
#include <memory>

class QAction;
class QMenu;
class QWidget;

namespace blkmq {

class PlotPanel;
class WindowHost;

// Going back and forth along run A, and keeping it: Step back, the timeline's seeks, the branch a
// change at a point gone back to starts, bookmarks, and session files (docs/sessions.md). Every
// move replays the run off the GUI thread (EngineRunner::replaySession) from a checkpoint with its
// live commands; the window shows it once it has arrived.
class TimeTravel : public QObject {
    Q_OBJECT
public:
    TimeTravel(WindowHost& host, RunSet& runs, PlotPanel* plots, TimelineBar* timeline, QWidget* parent);

    // File: Open session…, Save session…; Simulation: Step back, the branches, bookmarks.
    void addFileActions(QMenu* file);
    void addSimulationActions(QMenu* sim);
    // What a saved session holds besides the run: the open lesson and step, the view (session.view).
    void setViewOf(std::function<void(Session&)> describe) { m_viewOf = std::move(describe); }

    QString saveSession(const QString& path); // pauses the runs; an error or ""
    // Replays the file's run; an error at once, or "" and sessionOpened(error) when it is shown.
    QString openSession(const QString& path);
    void stepBack();
    // Shows the run at `ns`, within what it reached; a move asked for while one is under way waits,
    // and only the last waiting one is made.
    void seekTo(std::int64_t ns);
    void switchBranch();
    void dropOtherBranch();
    void addBookmark(const QString& note); // at the shown time
    const std::vector<Session::Bookmark>& bookmarks() const { return m_bookmarks; }
    void newRun(std::int64_t durationNs); // a scenario loaded: no bookmarks, no other branch
    void showBookmarks(); // on the plots again, after they were cleared
    void setShownNs(std::int64_t ns) { m_shownNs = ns; }

signals:
    void sessionOpened(const QString& error); // a move along the run or a file, shown (or why not)
    // A session file's run is loaded and adopted: its lesson, plots, zoom and inspector are the view's.
    void sessionLoaded(std::shared_ptr<const blkmq::Session> session);

private:
    void replayed(const QString& error);
    void finishMove();
    void updateBranchActions();

    WindowHost& m_host;
    RunSet& m_runs;
    PlotPanel* m_plots;
    TimelineBar* m_timeline;
    QWidget* m_parent; // dialogs' parent
    std::function<void(Session&)> m_viewOf;
    std::vector<Session::Bookmark> m_bookmarks;
    std::int64_t m_shownNs = 0;
    std::shared_ptr<const Session> m_opening; // a session being replayed (openSession, stepBack, seekTo)
    bool m_moving = false; // m_opening is a move along the run (stepBack, seekTo), not a file
    bool m_switching = false; // the move is to the other branch (switchBranch)
    std::int64_t m_pendingSeek = -1; // seekTo() while a replay was under way
    TimelineBar::Course m_otherCourse; // the other branch's part of the timeline, after the point they part
    QAction* m_switchBranch = nullptr;
    QAction* m_dropBranch = nullptr;
};

} // namespace blkmq
