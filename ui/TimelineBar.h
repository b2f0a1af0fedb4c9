#pragma once

#include <QString>
#include <QWidget>

#include <cstdint>
#include <vector>

namespace blkmq {

// The run's timeline, under the canvas: the scenario's whole duration, the part simulated so far
// (up to the furthest point the run reached, also after going back), the time shown as a cursor,
// and what happened on the way: patch switches, the stall, tag races, bookmarks and lesson steps
// reached, each a mark of its own shape and colour with its text as a tooltip. Pressing or dragging
// on the simulated part asks for that time (seekRequested); the window moves the run there.
class TimelineBar final : public QWidget {
    Q_OBJECT
public:
    enum class Mark : std::uint8_t { Patch, Stall, Race, Bookmark, Lesson };

    explicit TimelineBar(QWidget* parent = nullptr);
    // A new run: its duration, nothing simulated, no marks.
    void reset(std::int64_t durationNs);
    // The furthest time reached and the time shown; repaints only if a pixel moves.
    void setReached(std::int64_t ns);
    void setShown(std::int64_t ns);
    // A mark at `ns`; the same kind, time and text again is one mark.
    void addMark(std::int64_t ns, Mark kind, const QString& text);
    // The run took a new branch at `ns`: what came after it goes (truncate), or is handed back to
    // be shown again when the run switches back to that course (cut, then paste). A course holds
    // its marks from `ns` on; cut() removes those after `ns`, or from `ns` on with `atToo` (a switch
    // of course: the marks at the point itself may be the course's own).
    struct Entry {
        std::int64_t ns;
        Mark kind;
        QString text;
    };
    struct Course {
        std::vector<Entry> marks; // after the point
        std::int64_t reached = 0;
    };
    void truncate(std::int64_t ns);
    Course cut(std::int64_t ns, bool atToo = false);
    void paste(const Course& c);

    std::int64_t reached() const { return m_reached; }
    std::int64_t shown() const { return m_shown; }
    int marks() const { return static_cast<int>(m_marks.size()); }
    // The time under x (widget coordinates), within what was simulated.
    std::int64_t timeAt(int x) const;
    int xOf(std::int64_t ns) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

signals:
    void seekRequested(std::int64_t ns);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    bool event(QEvent* event) override; // tooltips: the marks under the pointer

private:
    QRect track() const;
    void moveTo(std::int64_t& field, std::int64_t ns); // repaints only if a pixel moves

    std::int64_t m_duration = 1;
    std::int64_t m_reached = 0;
    std::int64_t m_shown = 0;
    std::vector<Entry> m_marks;
};

} // namespace blkmq
