#include "TimelineBar.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace blkmq {

namespace {

// The marks' colours and shapes differ both ways (a colour-blind reader tells them by shape).
QColor markColour(TimelineBar::Mark m)
{
    switch (m) {
    case TimelineBar::Mark::Patch:
        return QColor(0x21, 0x66, 0xac); // blue, a triangle pointing down
    case TimelineBar::Mark::Stall:
        return QColor(0xb2, 0x18, 0x2b); // red, a square
    case TimelineBar::Mark::Race:
        return QColor(0xe0, 0x82, 0x14); // orange, a diamond
    case TimelineBar::Mark::Bookmark:
        return QColor(0x1b, 0x78, 0x37); // green, a star
    case TimelineBar::Mark::Lesson:
        return QColor(0x76, 0x2a, 0x83); // purple, a circle under the bar
    }
    return Qt::black;
}

} // namespace

TimelineBar::TimelineBar(QWidget* parent)
    : QWidget(parent)
{
    setMouseTracking(false);
    setCursor(Qt::PointingHandCursor);
    setToolTip(tr("The run so far: press or drag to show any time of it (the run goes back or forward "
                  "there). Marks: ▼ patch switch, ■ stall, ◆ tag race, ★ bookmark, ● lesson step."));
}

QSize TimelineBar::sizeHint() const { return { 400, std::max(26, fontMetrics().height() + 12) }; }
QSize TimelineBar::minimumSizeHint() const { return { 120, sizeHint().height() }; }

void TimelineBar::reset(std::int64_t durationNs)
{
    m_duration = std::max<std::int64_t>(1, durationNs);
    m_reached = m_shown = 0;
    m_marks.clear();
    update();
}

QRect TimelineBar::track() const { return rect().adjusted(8, 6, -8, -6); }

int TimelineBar::xOf(std::int64_t ns) const
{
    const QRect t = track();
    return t.left() + static_cast<int>(static_cast<double>(ns) / static_cast<double>(m_duration) * (t.width() - 1));
}

std::int64_t TimelineBar::timeAt(int x) const
{
    const QRect t = track();
    const double f = std::clamp(static_cast<double>(x - t.left()) / std::max(1, t.width() - 1), 0.0, 1.0);
    return std::min(m_reached, static_cast<std::int64_t>(f * static_cast<double>(m_duration)));
}

void TimelineBar::setReached(std::int64_t ns) { moveTo(m_reached, ns); }
void TimelineBar::setShown(std::int64_t ns) { moveTo(m_shown, ns); }

void TimelineBar::moveTo(std::int64_t& field, std::int64_t ns)
{
    ns = std::clamp<std::int64_t>(ns, 0, m_duration);
    if (ns == field)
        return;
    const bool moves = xOf(ns) != xOf(field);
    field = ns;
    if (moves)
        update();
}

void TimelineBar::addMark(std::int64_t ns, Mark kind, const QString& text)
{
    for (const Entry& e : m_marks)
        if (e.ns == ns && e.kind == kind && e.text == text)
            return;
    m_marks.push_back({ ns, kind, text });
    update();
}

void TimelineBar::truncate(std::int64_t ns) { cut(ns); }

TimelineBar::Course TimelineBar::cut(std::int64_t ns, bool atToo)
{
    Course c { {}, m_reached };
    for (const Entry& e : m_marks)
        if (e.ns >= ns)
            c.marks.push_back(e);
    std::erase_if(m_marks, [&](const Entry& e) { return e.ns > ns || (atToo && e.ns == ns); });
    m_reached = std::min(m_reached, ns);
    update();
    return c;
}

void TimelineBar::paste(const Course& c)
{
    for (const Entry& e : c.marks)
        addMark(e.ns, e.kind, e.text);
    m_reached = std::max(m_reached, c.reached);
    update();
}

void TimelineBar::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QRect t = track();
    const int mid = t.center().y();
    p.setPen(Qt::NoPen);
    p.setBrush(QColor(0xe5, 0xe8, 0xec)); // the scenario's duration
    p.drawRoundedRect(QRect(t.left(), mid - 3, t.width(), 7), 3, 3);
    p.setBrush(QColor(0x95, 0xa5, 0xa6)); // simulated so far
    p.drawRoundedRect(QRect(t.left(), mid - 3, std::max(1, xOf(m_reached) - t.left()), 7), 3, 3);
    for (const Entry& e : m_marks) {
        const int x = xOf(e.ns);
        const QColor c = markColour(e.kind);
        p.setBrush(c);
        p.setPen(QPen(c.darker(130), 1));
        QPainterPath shape;
        switch (e.kind) {
        case Mark::Patch:
            shape.moveTo(x - 5, t.top());
            shape.lineTo(x + 5, t.top());
            shape.lineTo(x, mid);
            shape.closeSubpath();
            break;
        case Mark::Stall:
            shape.addRect(x - 4, mid - 4, 8, 8);
            break;
        case Mark::Race:
            shape.moveTo(x, mid - 5);
            shape.lineTo(x + 5, mid);
            shape.lineTo(x, mid + 5);
            shape.lineTo(x - 5, mid);
            shape.closeSubpath();
            break;
        case Mark::Lesson:
            shape.addEllipse(QPointF(x, t.bottom() - 4), 4, 4);
            break;
        case Mark::Bookmark:
            for (int i = 0; i < 10; ++i) {
                const double r = i % 2 ? 2.5 : 6.0, a = -std::numbers::pi / 2 + i * std::numbers::pi / 5;
                const QPointF pt(x + r * std::cos(a), t.bottom() - 5 + r * std::sin(a));
                i ? shape.lineTo(pt) : shape.moveTo(pt);
            }
            shape.closeSubpath();
            break;
        }
        p.drawPath(shape);
    }
    // The time shown: a cursor across the bar.
    const int x = xOf(m_shown);
    p.setPen(QPen(QColor(0x2c, 0x3e, 0x50), 2));
    p.drawLine(x, t.top() - 3, x, t.bottom() + 3);
}

void TimelineBar::mousePressEvent(QMouseEvent* event)
{
    if (event->button() == Qt::LeftButton && m_reached > 0)
        emit seekRequested(timeAt(event->position().toPoint().x()));
}

void TimelineBar::mouseMoveEvent(QMouseEvent* event)
{
    if ((event->buttons() & Qt::LeftButton) && m_reached > 0)
        emit seekRequested(timeAt(event->position().toPoint().x()));
}

bool TimelineBar::event(QEvent* event)
{
    if (event->type() == QEvent::ToolTip) {
        const auto* help = static_cast<QHelpEvent*>(event);
        QStringList lines;
        for (const Entry& e : m_marks)
            if (std::abs(xOf(e.ns) - help->pos().x()) <= 5)
                lines << QStringLiteral("t = %1 ms: %2").arg(static_cast<double>(e.ns) / 1e6, 0, 'f', 4).arg(e.text);
        if (!lines.isEmpty()) {
            QToolTip::showText(help->globalPos(), lines.join(QLatin1Char('\n')), this);
            return true;
        }
    }
    return QWidget::event(event);
}

} // namespace blkmq
