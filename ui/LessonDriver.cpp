#include "LessonDriver.h"

#include "Inspector.h"
#include "LessonPanel.h"
#include "PlotPanel.h"
#include "TimelineBar.h"
#include "UiText.h"
#include "WindowHost.h"
#include "session/Session.h"

#include <QDockWidget>
#include <QMainWindow>
#include <QSignalBlocker>
#include <QTimer>

namespace blkmq {

LessonDriver::LessonDriver(WindowHost& host, RunSet& runs, LessonPanel* lessons, PlotPanel* plots, TopologyScene* scene,
    Inspector* inspector, TimelineBar* timeline, QMainWindow* window)
    : QObject(window)
    , m_host(host)
    , m_runs(runs)
    , m_lessons(lessons)
    , m_plots(plots)
    , m_scene(scene)
    , m_inspector(inspector)
    , m_timeline(timeline)
    , m_window(window)
{
    connect(m_lessons, &LessonPanel::playRequested, this, &LessonDriver::play);
    connect(m_lessons, &LessonPanel::opened, this, &LessonDriver::showMachine);
    connect(m_runs.a(), &EngineRunner::lessonPlayed, this, &LessonDriver::played);
}

void LessonDriver::setDocks(QDockWidget* lessons, QDockWidget* below)
{
    m_dock = lessons;
    m_below = below;
}

QString LessonDriver::open(const QString& nameOrPath)
{
    const QString err = m_lessons->open(nameOrPath);
    if (err.isEmpty()) {
        m_dock->show();
        m_dock->raise();
        // The narrative needs the height: the lesson takes three quarters of the right-hand column,
        // the scenario and inspector below it the rest.
        QTimer::singleShot(0, m_window, [this] {
            const int h = m_window->height();
            m_window->resizeDocks({ m_dock, m_below }, { h * 3 / 4, h / 4 }, Qt::Vertical);
        });
    }
    return err;
}

// The machine a lesson's text describes, before its first step: step 1's scenario at t = 0, paused.
void LessonDriver::showMachine()
{
    const auto lesson = m_lessons->shared();
    if (!lesson || lesson->size() == 0)
        return;
    auto s = lesson->scenarioOf(0);
    if (!s) {
        m_host.showMessage(tr("Lesson: %1").arg(q(s.error())), 10000);
        return;
    }
    m_runs.pause();
    m_host.loadScenario(*s);
    setPlots(0);
    m_host.showMessage(tr("Lesson: %1 — press Next step to start").arg(q(lesson->title())), 10000);
}

void LessonDriver::play(int step, bool fresh)
{
    const auto lesson = m_lessons->shared();
    if (!lesson)
        return;
    int from = step;
    if (fresh) {
        auto s = lesson->scenarioOf(step);
        if (!s) {
            m_lessons->stepReached(step, q(s.error()), *m_runs.a()->snapshot());
            return;
        }
        m_runs.pause();
        m_host.loadScenario(*s);
        from = lesson->segmentStart(step);
    }
    setPlots(step);
    m_scene->setHighlights({});
    m_host.showMessage(tr("Lesson: playing step %1…").arg(step + 1));
    m_runs.a()->playLesson(lesson, from, step);
    m_host.wake();
}

void LessonDriver::played(int step, const QString& error)
{
    const auto lesson = m_lessons->shared();
    m_host.frame();
    const auto snap = m_runs.a()->snapshot();
    if (!lesson || !snap || step < 0 || step >= lesson->size())
        return;
    m_lessons->stepReached(step, error, *snap);
    m_timeline->addMark(snap->now.ns(), TimelineBar::Mark::Lesson,
        tr("lesson step %1: %2").arg(step + 1).arg(q(lesson->steps()[static_cast<std::size_t>(step)].title)));
    std::vector<ObjectRef> marks;
    bool inspected = false;
    for (const LessonHighlight& h : lesson->steps()[static_cast<std::size_t>(step)].highlights) {
        ObjectRef sel;
        int script = -1;
        if (h.object.kind == ObjectRef::Kind::Request) {
            for (const RequestSnapshot& r : snap->requests)
                if (r.script >= 0 && m_inspector->scriptIds().value(r.script) == q(h.request)) {
                    m_scene->setFollowed(r.id);
                    sel = { ObjectRef::Kind::Request, r.id };
                    script = r.script;
                }
        } else {
            sel = pointAt(h.object, marks);
        }
        if (!inspected && sel.kind != ObjectRef::Kind::None) {
            m_inspector->show(sel, script); // without raising it over the lesson
            inspected = true;
        }
    }
    m_scene->setHighlights(marks);
    m_inspector->refresh();
    m_host.showMessage(error.isEmpty() ? tr("Lesson step %1 reached at t = %2 µs")
                                             .arg(step + 1)
                                             .arg(static_cast<double>(snap->now.ns()) / 1e3, 0, 'f', 3)
                                       : tr("Lesson step %1: %2").arg(step + 1).arg(error),
        10000);
    m_host.wake();
}

void LessonDriver::setPlots(int step)
{
    const auto lesson = m_lessons->shared();
    m_plots->setLessonPlots(lesson && step >= 0 && step < lesson->size() ? lesson->plotsOf(step) : std::nullopt);
}

void LessonDriver::restore(const Session& session)
{
    if (session.lesson.empty())
        return;
    const QSignalBlocker quiet(m_lessons); // its machine is the session's, not its first step's
    if (!m_lessons->open(q(session.lesson)).isEmpty())
        return;
    m_dock->show();
    if (session.lessonStep >= 0 && session.lessonStep < m_lessons->lesson()->size()) {
        m_lessons->stepReached(session.lessonStep, QString(), *m_runs.a()->snapshot());
        setPlots(session.lessonStep);
    }
}

void LessonDriver::describe(Session& session) const
{
    if (const Lesson* l = m_lessons->lesson()) {
        session.lesson = l->name();
        session.lessonStep = m_lessons->current();
    }
}

} // namespace blkmq
