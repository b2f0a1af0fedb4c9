#include "PlotPanel.h"

#include "TimePlot.h"

#include <QScrollArea>
#include <QVBoxLayout>

namespace blkmq {

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

    add(tr("Throughput"), tr("IOPS"))->addCurve(tr("IOPS"), QColor(0x21, 0x61, 0x8c));
    auto* lat = add(tr("Latency, submission to reap"), tr("µs"));
    lat->addCurve(tr("mean"), QColor(0x1e, 0x84, 0x49));
    lat->addCurve(tr("p99"), QColor(0xca, 0x6f, 0x1e));
    add(tr("Remote completions"), tr("% of completions"))->addCurve(tr("remote"), QColor(0xc0, 0x39, 0x2b));
    auto* irq = add(tr("IPIs, softirq raises, ksoftirqd wake-ups"), tr("per s"));
    irq->addCurve(tr("IPIs"), QColor(0xc0, 0x39, 0x2b));
    irq->addCurve(tr("softirq raises"), QColor(0xd4, 0xac, 0x0d));
    irq->addCurve(tr("ksoftirqd wake-ups"), QColor(0x7d, 0x3c, 0x98));
    auto* tags = add(tr("Tag allocation"), tr("%"));
    tags->addCurve(tr("local hits (no remote cacheline)"), QColor(0x11, 0x78, 0x64));
    tags->addCurve(tr("lock wait, % CPU"), QColor(0x94, 0x31, 0x26));
    auto* restart = add(tr("RESTART"), tr("calls/s, % CPU"));
    restart->addCurve(tr("restart calls/s"), QColor(0x28, 0x74, 0xa6));
    restart->addCurve(tr("walk CPU %"), QColor(0xa0, 0x40, 0x00));
}

TimePlot* PlotPanel::add(const QString& title, const QString& unit)
{
    auto* p = new TimePlot(title, unit, this);
    m_layout->addWidget(p);
    m_plots.push_back(p);
    return p;
}

void PlotPanel::append(const std::vector<SeriesRow>& rows, int set)
{
    for (const SeriesRow& r : rows) {
        const double t = static_cast<double>(r.t_ns) / 1e6;
        m_plots[0]->append(t, { r.iops }, set);
        m_plots[1]->append(t, { r.lat_mean_ns / 1e3, r.lat_p99_ns / 1e3 }, set);
        m_plots[2]->append(t, { r.remote_pct }, set);
        m_plots[3]->append(t, { r.ipis_per_s, r.softirq_raises_per_s, r.ksoftirqd_wakeups_per_s }, set);
        m_plots[4]->append(t, { r.tag_local_hit_pct, r.tag_lock_wait_pct }, set);
        m_plots[5]->append(t, { r.restart_calls_per_s, r.restart_cpu_pct }, set);
    }
}

void PlotPanel::setCompare(bool on, const QString& label)
{
    for (auto* p : m_plots)
        p->setCompare(on, label);
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
