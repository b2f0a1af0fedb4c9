#pragma once

#include "lesson/Lesson.h"

#include <QWidget>

#include <memory>

class QComboBox;
class QLabel;
class QPushButton;
class QTextBrowser;

namespace blkmq {

// Plays a guided lesson (core/lesson): a list of its steps, the current step's narrative and,
// once the engine has reached the step's stop, whether each expectation holds with its values.
// Back, Replay and a click on an earlier step ask the main window to rebuild the step's scenario
// and play up to it again (the engine is deterministic, so it is the same state).
class LessonPanel : public QWidget {
    Q_OBJECT
public:
    explicit LessonPanel(QWidget* parent = nullptr);

    // Selects a lesson (a built-in name or a file); an error message or empty.
    QString open(const QString& nameOrPath);
    const Lesson* lesson() const { return m_lesson.get(); }
    std::shared_ptr<const Lesson> shared() const { return m_lesson; }
    int current() const { return m_current; } // the step shown, -1 before the first
    // The main window reports that step `step` was reached (or why it was not), with the snapshot
    // there; the panel shows the narrative and the expectations.
    void stepReached(int step, const QString& error, const Snapshot& snap);
    // The time the window shows: once it is not the step's, a line over the narrative says so (the
    // expectations were checked at the step's time; Replay step goes back to it).
    void setShownTime(std::int64_t ns);
    bool movedOn() const; // that line shows
    // Results of the last step reached: how many expectations held and how many did not.
    int held() const { return m_held; }
    int failed() const { return m_failed; }

signals:
    // Play `step`: fresh = rebuild the segment's scenario first (back, replay, a jump, a new segment).
    void playRequested(int step, bool fresh);
    // A lesson was selected: the main window shows its first step's machine, at t = 0.
    void opened();

public slots:
    void next();
    void back();
    void replay();

private:
    void request(int step, bool fresh); // asks for a step unless one is being played
    void showStep(int step);
    void updateButtons();

    std::shared_ptr<const Lesson> m_lesson;
    int m_current = -1;
    int m_held = 0;
    int m_failed = 0;
    bool m_busy = false; // a step is being played
    QComboBox* m_choice;
    QLabel* m_title;
    QComboBox* m_steps; // item 0: the lesson before its first step, then one per step
    QTextBrowser* m_text;
    QLabel* m_movedOn;
    std::int64_t m_reachedNs = -1; // the time the current step was reached at
    QPushButton* m_back;
    QPushButton* m_replay;
    QPushButton* m_next;
};

} // namespace blkmq
