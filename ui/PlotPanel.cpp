#include "PlotPanel.h"

#include "TimePlot.h"

#include <QScrollArea>
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
    auto* scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    auto* inner = new QWidget(scroll);
    m_layout = new QVBoxLayout(inner);
    m_layout->setContentsMargins(2, 2, 2, 2);
    scroll->setWidget(inner);
    outer->addWidget(scroll);

    std::vector<std::string_view> groups;
    for (int i = 0; i < kMetricCount; ++i) {
        const Metric& m = kMetrics[static_cast<std::size_t>(i)];
        if (m.group.empty())
            continue;
        auto g = std::find(groups.begin(), groups.end(), m.group);
        if (g == groups.end()) {
            auto* p = new TimePlot(q(m.group), QString::fromUtf8(unitInfo(m.unit).axis), this);
            m_layout->addWidget(p);
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

void PlotPanel::append(const std::vector<SeriesRow>& rows, int set)
{
    auto& values = m_values;
    values.resize(m_plots.size());
    for (const SeriesRow& r : rows) {
        for (auto& v : values)
            v.clear();
        for (const Curve& c : m_curves)
            values[c.plot].push_back(
                r[c.metric] * unitInfo(kMetrics[static_cast<std::size_t>(c.metric)].unit).plotScale);
        const double t = static_cast<double>(r.t_ns) / 1e6;
        for (std::size_t p = 0; p < m_plots.size(); ++p)
            m_plots[p]->append(t, values[p], set);
    }
}

void PlotPanel::setRuns(const QStringList& others)
{
    for (auto* p : m_plots)
        p->setRuns(others);
}

void PlotPanel::addMarker(double tMs, const QString& text, bool alarm)
{
    for (auto* p : m_plots)
        p->addMarker(tMs, text, alarm ? QColor(0xc0, 0x39, 0x2b) : QColor(0x34, 0x49, 0x5e));
}

void PlotPanel::clear()
{
    for (auto* p : m_plots)
        p->clear();
}

void PlotPanel::replot()
{
    for (auto* p : m_plots)
        if (p->isVisible())
            p->replot();
}

void PlotPanel::setPlotVisible(int i, bool visible) { m_plots[static_cast<std::size_t>(i)]->setVisible(visible); }

} // namespace blkmq
