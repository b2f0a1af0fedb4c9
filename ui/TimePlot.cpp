#include "TimePlot.h"

#include "Palette.h"

#include "SiTicker.h"

#include <qcustomplot.h>

#include <QImage>
#include <QPdfWriter>
#include <QSvgGenerator>
#include <QTextDocument>
#include <QLabel>
#include <QToolButton>
#include <QWheelEvent>
#include <QVBoxLayout>

namespace blkmq {

QString TimePlot::siLabel(double v, const QLocale& locale) { return blkmq::siLabel(v, locale); }

TimePlot::TimePlot(const QString& title, const QString& unit, QWidget* parent)
    : QWidget(parent)
    , m_plot(new QCustomPlot(this))
    , m_wholeRun(new QToolButton(this))
    , m_title(title)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);
    // Narrower than a long title if it must be (a 1280x800 screen): no horizontal scrolling.
    m_plot->setMinimumSize(240, 150);
    m_plot->plotLayout()->insertRow(0);
    auto* caption = new QCPTextElement(
        m_plot, title + (unit.isEmpty() ? QString() : u" ("_qs + unit + u')'), QFont(font().family(), 8, QFont::Bold));
    m_plot->plotLayout()->addElement(0, 0, caption);
    m_plot->xAxis->setLabel(u"simulated time (ms)"_qs);
    // The legend sits in a row of its own under the axis rect, never over the curves.
    m_plot->legend->setVisible(false);
    m_plot->legend->setFont(QFont(font().family(), 7));
    m_plot->legend->setBrush(Qt::NoBrush);
    m_plot->legend->setBorderPen(Qt::NoPen);
    m_plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    m_plot->legend->setWrap(2);
    m_plot->legend->setRowSpacing(-3);
    m_plot->legend->setColumnSpacing(8);
    m_plot->axisRect()->insetLayout()->take(m_plot->legend);
    m_plot->plotLayout()->addElement(2, 0, m_plot->legend);
    m_plot->plotLayout()->setRowStretchFactor(2, 0.001);
    m_plot->legend->setMargins(QMargins(4, 0, 4, 2));
    m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new SiTicker));
    m_plot->yAxis->ticker()->setTickCount(3);
    m_plot->xAxis->ticker()->setTickCount(4);
    // Drag, or Ctrl + wheel (as on the canvas), on the time axis to look at a part of the run; the
    // plain wheel scrolls the plots. "Whole run" (or a double click) follows the whole run again.
    // Time never goes below 0.
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->axisRect()->setRangeDrag(Qt::Horizontal);
    m_plot->axisRect()->setRangeZoom(Qt::Horizontal);
    m_plot->installEventFilter(this);
    connect(m_plot, &QCustomPlot::mouseWheel, this, [this] { setFollowing(false); });
    connect(m_plot, &QCustomPlot::mousePress, this, [this] { setFollowing(false); });
    connect(m_plot, &QCustomPlot::mouseDoubleClick, this, [this] { setFollowing(true); });
    connect(m_plot->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, [this](const QCPRange& r) {
        if (r.lower < 0)
            m_plot->xAxis->setRange(0, r.size());
    });
    m_wholeRun->setText(tr("Whole run"));
    m_wholeRun->setToolTip(tr("Show the whole run again and follow it (or double-click the plot)"));
    m_wholeRun->setAutoRaise(true);
    m_wholeRun->setFont(QFont(font().family(), 7));
    m_wholeRun->hide();
    connect(m_wholeRun, &QToolButton::clicked, this, [this] { setFollowing(true); });
    const QFont tickFont(font().family(), 7);
    m_plot->xAxis->setTickLabelFont(tickFont);
    m_plot->yAxis->setTickLabelFont(tickFont);
    m_plot->xAxis->setLabelFont(tickFont);
    m_plot->setNoAntialiasingOnDrag(true);
}

int TimePlot::addCurve(const QString& name, const QColor& color)
{
    QCPGraph* g = m_plot->addGraph();
    g->setName(name);
    g->setPen(QPen(Palette::curveColour(static_cast<int>(m_curves.size()), color), 1.6));
    m_curves.push_back(g);
    m_colours.push_back(color);
    m_plot->legend->setVisible(m_curves.size() > 1);
    return static_cast<int>(m_curves.size()) - 1;
}

void TimePlot::applyPalette()
{
    for (std::size_t i = 0; i < m_curves.size(); ++i) {
        const QColor c = Palette::curveColour(static_cast<int>(i), m_colours[i]);
        for (std::size_t set = 0; set <= m_others.size(); ++set) {
            QCPGraph* g = set == 0 ? m_curves[i] : m_others[set - 1][i];
            QPen pen = g->pen();
            pen.setColor(c);
            g->setPen(pen);
        }
    }
    replot();
}

void TimePlot::setRuns(const QStringList& others)
{
    static constexpr Qt::PenStyle kStyles[] = { Qt::DashLine, Qt::DotLine, Qt::DashDotLine, Qt::DashDotDotLine };
    for (auto& set : m_others)
        for (auto* g : set)
            m_plot->removeGraph(g);
    m_others.clear();
    for (qsizetype r = 0; r < others.size(); ++r) {
        auto& set = m_others.emplace_back();
        for (auto* g : m_curves) {
            QCPGraph* twin = m_plot->addGraph();
            QPen pen = g->pen();
            pen.setStyle(kStyles[static_cast<std::size_t>(r) % std::size(kStyles)]);
            twin->setPen(pen);
            twin->setName(g->name() + u" ("_qs + others[r].section(QLatin1Char(':'), 0, 0) + u')');
            set.push_back(twin);
        }
    }
    m_plot->legend->setVisible(m_curves.size() * (m_others.size() + 1) > 1);
    replot();
}

void TimePlot::dropProvisional(int set)
{
    if (static_cast<std::size_t>(set) >= m_provisional.size())
        return;
    auto& keys = m_provisional[static_cast<std::size_t>(set)];
    for (QCPGraph* g : set == 0 ? m_curves : m_others[static_cast<std::size_t>(set - 1)])
        for (const double key : keys)
            g->data()->remove(key);
    keys.clear();
}

void TimePlot::setProvisional(double tMs, const std::vector<double>& values, int set)
{
    if (set < 0 || set > static_cast<int>(m_others.size()))
        return;
    dropProvisional(set);
    const auto& curves = set == 0 ? m_curves : m_others[static_cast<std::size_t>(set - 1)];
    if (values.empty() || curves.empty())
        return;
    const bool first = curves.front()->data()->isEmpty();
    // Only after the last real point: a sample at this time is already drawn.
    if (!first && (curves.front()->data()->constEnd() - 1)->key >= tMs)
        return;
    m_provisional.resize(m_others.size() + 1);
    auto& keys = m_provisional[static_cast<std::size_t>(set)];
    if (first && tMs > 0)
        keys.push_back(0); // the first interval's level from its start: one point alone draws no line
    keys.push_back(tMs);
    for (std::size_t i = 0; i < curves.size() && i < values.size(); ++i)
        for (const double key : keys)
            curves[i]->data()->add(QCPGraphData(key, values[i]));
}

void TimePlot::append(double tMs, const std::vector<double>& values, int set)
{
    if (set < 0 || set > static_cast<int>(m_others.size()))
        return;
    dropProvisional(set);
    const auto& curves = set == 0 ? m_curves : m_others[static_cast<std::size_t>(set - 1)];
    // A sample drawn already is not drawn again: after a move back, the run's course stays on the
    // plots, and the samples up to the time moved to come again.
    if (!curves.empty() && !curves.front()->data()->isEmpty() && (curves.front()->data()->constEnd() - 1)->key >= tMs)
        return;
    for (std::size_t i = 0; i < curves.size() && i < values.size(); ++i) {
        auto data = curves[i]->data();
        if (data->isEmpty() && tMs > 0) // the first interval's level from its start, t = 0
            data->add(QCPGraphData(0, values[i]));
        data->add(QCPGraphData(tMs, values[i]));
        if (data->size() > pointBudget())
            data->removeBefore(data->at(data->size() - pointBudget())->key);
    }
}

int TimePlot::pointCount(int curve) const { return m_curves[static_cast<std::size_t>(curve)]->data()->size(); }

void TimePlot::addMarker(double tMs, const QString& text, const QColor& color)
{
    auto* line = new QCPItemStraightLine(m_plot);
    line->point1->setCoords(tMs, 0);
    line->point2->setCoords(tMs, 1);
    line->setPen(QPen(color, 1, Qt::DashLine));
    // Labels take turns over three rows in the band above the curves (replot leaves room for it), so
    // two close changes do not write over each other; a light ground keeps a line from crossing one.
    const int row = markerLabels() % kMarkerRows;
    auto* label = new QCPItemText(m_plot);
    label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    label->position->setCoords(tMs, 0.02 + 0.07 * row);
    label->setBrush(QColor(255, 255, 255, 210));
    label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    label->setText(text);
    label->setFont(QFont(font().family(), 7));
    label->setColor(color);
    label->setPadding(QMargins(3, 0, 0, 0));
}

int TimePlot::markerLabels() const
{
    int n = 0;
    for (int i = 0; i < m_plot->itemCount(); ++i)
        n += qobject_cast<QCPItemText*>(m_plot->item(i)) ? 1 : 0;
    return n;
}

void TimePlot::setFollowing(bool on)
{
    m_follow = on;
    m_wholeRun->setVisible(!on);
    if (!on)
        placeWholeRun();
    replot();
}

void TimePlot::placeWholeRun()
{
    m_wholeRun->adjustSize();
    m_wholeRun->move(width() - m_wholeRun->width() - 2, 2);
    m_wholeRun->raise();
}

void TimePlot::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    placeWholeRun();
}

bool TimePlot::eventFilter(QObject* watched, QEvent* event)
{
    // The plain wheel is not the plot's: ignored here, Qt offers it to the plots' scroll area.
    if (watched == m_plot && event->type() == QEvent::Wheel
        && !(static_cast<QWheelEvent*>(event)->modifiers() & Qt::ControlModifier)) {
        event->ignore();
        return true;
    }
    return QWidget::eventFilter(watched, event);
}

void TimePlot::setSpan(double endMs)
{
    m_follow = true;
    m_wholeRun->hide();
    m_plot->xAxis->setRange(0, endMs > 0 ? endMs : 1.0);
    m_plot->yAxis->setRange(0, 1);
    replot();
}

void TimePlot::setCursor(double tMs)
{
    if (tMs == m_cursorMs)
        return;
    m_cursorMs = tMs;
    if (!m_cursor) {
        m_cursor = new QCPItemStraightLine(m_plot);
        m_cursor->setPen(QPen(QColor(0, 0, 0, 150), 2)); // apart from every curve's colour
    }
    m_cursor->setVisible(tMs >= 0);
    m_cursor->point1->setCoords(std::max(0.0, tMs), 0);
    m_cursor->point2->setCoords(std::max(0.0, tMs), 1);
}

void TimePlot::cutAfter(double tMs)
{
    dropProvisional(0);
    for (QCPGraph* g : m_curves)
        g->data()->removeAfter(tMs + 1e-9);
    std::vector<QCPAbstractItem*> later;
    for (int i = 0; i < m_plot->itemCount(); ++i) {
        QCPAbstractItem* item = m_plot->item(i);
        if (item == m_cursor)
            continue;
        if (const auto* line = qobject_cast<QCPItemStraightLine*>(item); line && line->point1->coords().x() > tMs)
            later.push_back(item);
        if (const auto* text = qobject_cast<QCPItemText*>(item); text && text->position->coords().x() > tMs)
            later.push_back(item);
    }
    for (QCPAbstractItem* item : later)
        m_plot->removeItem(item);
}

void TimePlot::clear()
{
    m_provisional.clear();
    m_cursor = nullptr; // clearItems() below deletes it
    m_cursorMs = -1;
    for (auto* g : m_curves)
        g->data()->clear();
    for (auto& set : m_others)
        for (auto* g : set)
            g->data()->clear();
    m_plot->clearItems();
    replot();
}

void TimePlot::replot(bool now)
{
    bool found = false, valued = false; // a curve with points; one with a value among them
    QCPRange x, y;
    std::vector<QCPGraph*> all = m_curves;
    for (const auto& set : m_others)
        all.insert(all.end(), set.begin(), set.end());
    for (std::size_t i = 0; i < all.size(); ++i) {
        QCPGraph* g = all[i];
        // A curve of one point (the first sample alone) is a dot; a line needs two. A compared run's
        // curve also has open marks, about sixteen along it, so where it equals run A's it still shows.
        const int points = g->data()->size();
        const bool dot = points == 1;
        const QCPScatterStyle mark = dot ? QCPScatterStyle(QCPScatterStyle::ssDisc, 4)
            : i >= m_curves.size()       ? QCPScatterStyle(QCPScatterStyle::ssCircle, 5)
                                         : QCPScatterStyle();
        if (mark.shape() != g->scatterStyle().shape())
            g->setScatterStyle(mark);
        g->setScatterSkip(std::max(0, points / 16 - 1));
        if (points == 0)
            continue;
        // Samples without a value (NaN) are gaps: the time they cover still counts for the time axis.
        const QCPRange kr((g->data()->constBegin())->key, (g->data()->constEnd() - 1)->key);
        x = found ? QCPRange(std::min(x.lower, kr.lower), std::max(x.upper, kr.upper)) : kr;
        found = true;
        bool ok = false;
        const QCPRange vr = g->data()->valueRange(ok);
        if (!ok)
            continue;
        y = valued ? QCPRange(std::min(y.lower, vr.lower), std::max(y.upper, vr.upper)) : vr;
        valued = true;
    }
    if (found && !valued && !m_noValue) {
        m_noValue = new QLabel(tr("nothing recorded yet"), m_plot);
        m_noValue->setStyleSheet(u"color: #566573; background: white; padding: 1px 4px;"_qs);
    }
    m_plot->yAxis->setTickLabels(valued || !found); // no value yet: no scale to read
    if (m_noValue) {
        const QRect r = m_plot->axisRect()->rect();
        m_noValue->adjustSize();
        m_noValue->move(r.center() - QPoint(m_noValue->width() / 2, m_noValue->height() / 2));
        m_noValue->setVisible(found && !valued);
    }
    // The whole run from t = 0 (the points kept), unless the user zoomed into a part of it.
    if (found && m_follow)
        m_plot->xAxis->setRange(0, std::max(x.upper, 1e-3));
    // A label in the right half of the run reads leftwards from its line, so none runs off the chart.
    const double middle = (m_plot->xAxis->range().lower + m_plot->xAxis->range().upper) / 2;
    for (int i = 0; i < m_plot->itemCount(); ++i)
        if (auto* label = qobject_cast<QCPItemText*>(m_plot->item(i))) {
            const bool left = label->position->coords().x() > middle;
            label->setPositionAlignment((left ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignTop);
            label->setPadding(left ? QMargins(0, 0, 3, 0) : QMargins(3, 0, 0, 0));
        }
    if (valued) { // a little room under 0, so a curve at 0 is a line above the axis, not hidden in it
        // and room over the curves for the markers' labels, when there are any
        const double headroom = markerLabels() > 0 ? 1.3 : 1.1;
        const double upper = y.upper > 0 ? y.upper * headroom : 1.0;
        const double lower = std::min(0.0, y.lower);
        m_plot->yAxis->setRange(lower - 0.03 * (upper - lower), upper);
    }
    m_plot->replot(now ? QCustomPlot::rpRefreshHint : QCustomPlot::rpQueuedReplot);
}

double TimePlot::exportScale(QSize size)
{
    // Fonts and pens grow with the picture: at 1920x1080 a chart is drawn as at 960x540, twice over.
    return std::max(1.0, std::min(size.width() / 960.0, size.height() / 540.0));
}

void TimePlot::paint(QCPPainter& painter, QRect where, double scale)
{
    const double s = scale > 0 ? scale : exportScale(where.size());
    painter.save();
    painter.translate(where.topLeft());
    painter.scale(s, s);
    m_plot->toPainter(&painter, static_cast<int>(where.width() / s), static_cast<int>(where.height() / s));
    painter.restore();
}

bool TimePlot::renderGrid(QIODevice& out, const QString& format, QSize size, const std::vector<TimePlot*>& plots,
    const QString& caption, const QString& table)
{
    if (plots.empty())
        return false;
    const double s = exportScale(size);
    const int top = caption.isEmpty() ? 0 : static_cast<int>(22 * s); // what ran, and each line style
    const int side = table.isEmpty() ? 0 : size.width() * 30 / 100; // the A/B table's panel
    // A PDF has at most four charts a page, each big enough to read; a picture has them all.
    const bool pdf = format == QLatin1String("pdf");
    const std::size_t perPage = pdf ? 4 : plots.size();
    const auto paintPage = [&](QCPPainter& painter, std::size_t first) {
        const int n = static_cast<int>(std::min(perPage, plots.size() - first));
        const int cols = n == 1 ? 1 : n <= 4 ? 2 : 3;
        const int rows = (n + cols - 1) / cols;
        const QSize tile((size.width() - side) / cols, (size.height() - top) / rows);
        painter.fillRect(QRect(QPoint(0, 0), size), Qt::white);
        if (top > 0) {
            QFont f = plots.front()->font();
            f.setPointSizeF(9 * s);
            painter.setFont(f);
            painter.setPen(QColor(0x2c, 0x3e, 0x50));
            painter.drawText(QRect(0, 0, size.width(), top), Qt::AlignCenter, caption);
        }
        // A tile of a grid is laid out at most 480 pixels wide and scaled up (to at most 1.4 times), so
        // that its ticks and legend read on a slide where four charts share a page.
        const double tileScale = std::max(exportScale(tile), std::min(1.4, tile.width() / 480.0));
        for (int i = 0; i < n; ++i)
            plots[first + static_cast<std::size_t>(i)]->paint(
                painter, QRect(QPoint((i % cols) * tile.width(), top + (i / cols) * tile.height()), tile), tileScale);
        if (side > 0) { // drawn at 960x540 size and scaled, like the charts
            QTextDocument doc;
            QFont f = plots.front()->font();
            f.setPointSizeF(7.5);
            doc.setDefaultFont(f);
            doc.setDocumentMargin(4);
            doc.setHtml(table);
            doc.setTextWidth((side - 8 * s) / s);
            painter.save();
            painter.translate(size.width() - side + 4 * s, top + 4 * s);
            painter.scale(s, s);
            doc.drawContents(&painter);
            painter.restore();
        }
    };
    const auto paintAll = [&](QPaintDevice& device, QPdfWriter* pages) {
        QCPPainter painter;
        if (!painter.begin(&device))
            return false;
        for (std::size_t first = 0; first < plots.size(); first += perPage) {
            if (first > 0 && (!pages || !pages->newPage()))
                return false;
            paintPage(painter, first);
        }
        return painter.end();
    };
    if (format == QLatin1String("png")) {
        QImage image(size, QImage::Format_ARGB32);
        image.fill(Qt::white);
        return paintAll(image, nullptr) && image.save(&out, "PNG");
    }
    if (format == QLatin1String("svg")) {
        QSvgGenerator generator;
        generator.setOutputDevice(&out);
        generator.setSize(size);
        generator.setViewBox(QRect(QPoint(0, 0), size));
        generator.setTitle(plots.size() == 1 ? plots.front()->title() : QStringLiteral("BlkMQ Lab"));
        return paintAll(generator, nullptr);
    }
    if (pdf) {
        QPdfWriter writer(&out);
        writer.setResolution(96);
        writer.setPageMargins(QMarginsF(0, 0, 0, 0));
        writer.setPageSize(QPageSize(QSizeF(size.width() * 72.0 / 96, size.height() * 72.0 / 96), QPageSize::Point));
        return paintAll(writer, &writer);
    }
    return false;
}

bool TimePlot::render(QIODevice& out, const QString& format, QSize size)
{
    return renderGrid(out, format, size, { this });
}

} // namespace blkmq
