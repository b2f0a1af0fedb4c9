#include "PlotPanel.h"

#include "TimePlot.h"

#include <QAction>
#include <QEvent>
#include <QLabel>
#include <QMenu>
#include <QTextDocumentFragment>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QGridLayout>
#include <QVBoxLayout>

namespace blkmq {

namespace {

QString q(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

} // namespace

PlotPanel::PlotPanel(QWidget* parent)
    : QWidget(parent)
{
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    m_runs = new QLabel(this);
    m_runs->setWordWrap(true);
    m_runs->setTextFormat(Qt::RichText);
    m_runs->hide();
    outer->addWidget(m_runs);
    m_scroll = new QScrollArea(this);
    m_scroll->setWidgetResizable(true);
    // Only as many columns as fit are shown; a panel narrower than one plot scrolls sideways.
    m_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    auto* inner = new QWidget(m_scroll);
    m_layout = new QGridLayout(inner);
    m_layout->setContentsMargins(2, 2, 2, 2);
    m_scroll->setWidget(inner);
    m_scroll->viewport()->installEventFilter(this);
    outer->addWidget(m_scroll);

    std::vector<std::string_view> groups;
    for (int i = 0; i < kMetricCount; ++i) {
        const Metric& m = kMetrics[static_cast<std::size_t>(i)];
        if (m.group.empty())
            continue;
        auto g = std::find(groups.begin(), groups.end(), m.group);
        if (g == groups.end()) {
            auto* p = new TimePlot(q(m.group), QString::fromUtf8(unitInfo(m.unit).axis), this);
            m_layout->addWidget(p, static_cast<int>(m_plots.size()), 0);
            m_plots.push_back(p);
            groups.push_back(m.group);
            g = groups.end() - 1;
        }
        const auto plot = static_cast<std::size_t>(g - groups.begin());
        m_plots[plot]->addCurve(q(m.label), QColor::fromRgb(m.rgb));
        m_curves.push_back({ i, plot });
    }
}

TimePlot* PlotPanel::plotOf(int metric) const
{
    for (const Curve& c : m_curves)
        if (c.metric == metric)
            return m_plots[c.plot];
    return nullptr;
}

void PlotPanel::valuesOf(const SeriesRow& r)
{
    m_values.resize(m_plots.size());
    for (auto& v : m_values)
        v.clear();
    for (const Curve& c : m_curves)
        m_values[c.plot].push_back(r[c.metric] * unitInfo(kMetrics[static_cast<std::size_t>(c.metric)].unit).plotScale);
}

void PlotPanel::append(const std::vector<SeriesRow>& rows, int set)
{
    for (const SeriesRow& r : rows) {
        valuesOf(r);
        const double t = static_cast<double>(r.t_ns) / 1e6;
        for (std::size_t p = 0; p < m_plots.size(); ++p)
            m_plots[p]->append(t, m_values[p], set);
    }
}

void PlotPanel::setProvisional(const std::optional<SeriesRow>& row, int set)
{
    if (!row) {
        for (auto* p : m_plots)
            p->setProvisional(0, {}, set);
        return;
    }
    valuesOf(*row);
    const double t = static_cast<double>(row->t_ns) / 1e6;
    for (std::size_t p = 0; p < m_plots.size(); ++p)
        m_plots[p]->setProvisional(t, m_values[p], set);
}

void PlotPanel::setRuns(const QStringList& others)
{
    for (auto* p : m_plots)
        p->setRuns(others);
    // What each line style is, once for all plots: "solid: A; dashed: B: complete-llist on".
    static const char* const kStyles[] = { "dashed", "dotted", "dash-dotted", "dash-dot-dotted" };
    QString text = tr("<b>solid</b>: A, as loaded");
    for (qsizetype r = 0; r < others.size(); ++r)
        text += QStringLiteral("; <b>%1</b>: %2").arg(QLatin1String(kStyles[r % 4]), others[r].toHtmlEscaped());
    m_runs->setText(text);
    m_runsText = others.isEmpty() ? QString() : QTextDocumentFragment::fromHtml(text).toPlainText();
    m_runs->setVisible(!others.isEmpty());
}

QString PlotPanel::markerLabel(const QString& run, const QString& change)
{
    // "kernel.patches.complete-llist=true" -> "A: complete-llist on"; "kernel.restart=own-hctx" ->
    // "A: restart own-hctx"; "devices.0.rq_affinity=2" -> "A: rq_affinity 2"; others as they are.
    const qsizetype eq = change.indexOf(QLatin1Char('='));
    if (eq < 0)
        return run + QStringLiteral(": ") + change;
    QString path = change.left(eq);
    QString value = change.mid(eq + 1);
    if (path.startsWith(QLatin1String("kernel.patches.")))
        path = path.mid(15);
    else if (path.startsWith(QLatin1String("kernel.")))
        path = path.mid(7);
    else if (path.startsWith(QLatin1String("devices.")) || path.startsWith(QLatin1String("costs.")))
        path = path.section(QLatin1Char('.'), -1);
    if (value == QLatin1String("true"))
        value = QStringLiteral("on");
    else if (value == QLatin1String("false"))
        value = QStringLiteral("off");
    return run + QStringLiteral(": ") + path + QLatin1Char(' ') + value;
}

void PlotPanel::addMarker(double tMs, const QString& text, bool alarm)
{
    // Live changes are named as people say them; stalls and rejections keep their words.
    const QString label = alarm ? text : markerLabel(QStringLiteral("A"), text);
    for (auto* p : m_plots)
        p->addMarker(tMs, label, alarm ? QColor(0xc0, 0x39, 0x2b) : QColor(0x34, 0x49, 0x5e));
}

void PlotPanel::setSpan(double endMs)
{
    for (auto* p : m_plots)
        p->setSpan(endMs);
}

void PlotPanel::clear()
{
    for (auto* p : m_plots)
        p->clear();
}

void PlotPanel::applyPalette()
{
    for (TimePlot* p : m_plots)
        p->applyPalette();
}

void PlotPanel::replot(bool now)
{
    for (auto* p : m_plots)
        if (p->isVisible())
            p->replot(now);
}

void PlotPanel::replotSome(int n)
{
    for (std::size_t tried = 0; n > 0 && tried < m_plots.size(); ++tried) {
        TimePlot* p = m_plots[m_nextReplot];
        m_nextReplot = (m_nextReplot + 1) % m_plots.size();
        if (p->isVisible()) {
            p->replot();
            --n;
        }
    }
}

void PlotPanel::setPlotVisible(int i, bool visible)
{
    m_plots[static_cast<std::size_t>(i)]->setVisible(visible);
    relayout();
}

void PlotPanel::setColumns(int columns)
{
    m_columns = std::max(1, columns);
    if (m_columnsAction) { // the View menu says what is set
        const QSignalBlocker quiet(m_columnsAction);
        m_columnsAction->setChecked(m_columns > 1);
    }
    relayout();
}

int PlotPanel::columnsThatFit() const
{
    const QMargins m = m_layout->contentsMargins();
    const int spacing = std::max(0, m_layout->horizontalSpacing());
    const int plot = m_plots.empty() ? 1 : std::max(1, m_plots.front()->minimumSizeHint().width());
    const int width = m_scroll->viewport()->width() - m.left() - m.right();
    return std::max(1, (width + spacing) / (plot + spacing));
}

bool PlotPanel::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_scroll->viewport() && event->type() == QEvent::Resize
        && std::min(m_columns, columnsThatFit()) != m_shownColumns)
        relayout();
    return QWidget::eventFilter(watched, event);
}

void PlotPanel::relayout()
{
    // The shown plots fill the grid in table order, without holes where a hidden one was.
    m_shownColumns = std::min(m_columns, columnsThatFit());
    for (TimePlot* p : m_plots)
        m_layout->removeWidget(p);
    for (int c = 0; c < m_layout->columnCount(); ++c)
        m_layout->setColumnStretch(c, c < m_shownColumns ? 1 : 0);
    int k = 0;
    for (TimePlot* p : m_plots) {
        m_layout->addWidget(p, k / m_shownColumns, k % m_shownColumns);
        k += p->isHidden() ? 0 : 1;
    }
}

void PlotPanel::setCursor(double tMs)
{
    for (TimePlot* p : m_plots)
        p->setCursor(tMs);
}

void PlotPanel::cutAfter(double tMs)
{
    for (TimePlot* p : m_plots)
        p->cutAfter(tMs);
}

void PlotPanel::addViewMenu(QMenu* menu)
{
    for (TimePlot* p : m_plots) {
        auto* a = menu->addAction(p->title());
        a->setCheckable(true);
        a->setChecked(true);
        connect(a, &QAction::toggled, this, &PlotPanel::applyVisibility);
        m_viewActions.push_back(a);
    }
    menu->addSeparator();
    m_columnsAction = menu->addAction(tr("In two columns"));
    m_columnsAction->setCheckable(true);
    connect(m_columnsAction, &QAction::toggled, this, [this](bool on) { setColumns(on ? 2 : 1); });
}

void PlotPanel::setLessonPlots(const std::optional<std::vector<std::string>>& metrics)
{
    if (!metrics && !m_lessonPlots)
        return;
    m_lessonPlots.reset();
    if (metrics) {
        std::vector<int> shown;
        for (const std::string& id : *metrics)
            if (const TimePlot* p = plotOf(findMetric(id)))
                shown.push_back(static_cast<int>(std::find(m_plots.begin(), m_plots.end(), p) - m_plots.begin()));
        m_lessonPlots = shown;
    }
    applyVisibility();
}

void PlotPanel::saveTo(nlohmann::json& view) const
{
    std::vector<int> hidden;
    for (std::size_t i = 0; i < m_plots.size(); ++i) {
        const int plot = static_cast<int>(i);
        const bool lessonHides
            = m_lessonPlots && std::find(m_lessonPlots->begin(), m_lessonPlots->end(), plot) == m_lessonPlots->end();
        if (lessonHides ? i < m_viewActions.size() && !m_viewActions[i]->isChecked() : m_plots[i]->isHidden())
            hidden.push_back(plot);
    }
    view["plots_hidden"] = hidden;
    view["plot_columns"] = m_columns;
}

void PlotPanel::restore(const nlohmann::json& view)
{
    const auto hidden = view.value("plots_hidden", std::vector<int>());
    for (std::size_t i = 0; i < m_viewActions.size(); ++i)
        m_viewActions[i]->setChecked(std::find(hidden.begin(), hidden.end(), static_cast<int>(i)) == hidden.end());
    setColumns(view.value("plot_columns", 1));
}

void PlotPanel::applyVisibility()
{
    bool any = false;
    for (std::size_t i = 0; i < m_plots.size() && i < m_viewActions.size(); ++i) {
        const int plot = static_cast<int>(i);
        const bool lesson
            = !m_lessonPlots || std::find(m_lessonPlots->begin(), m_lessonPlots->end(), plot) != m_lessonPlots->end();
        const bool on = m_viewActions[i]->isChecked() && lesson;
        setPlotVisible(plot, on);
        any = any || on;
    }
    setVisible(any);
}

} // namespace blkmq
