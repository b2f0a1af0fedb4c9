#pragma once

#include "metrics/TimeSeries.h"

#include <QWidget>

#include <vector>

class QVBoxLayout;

namespace blkmq {

class TimePlot;

// The live plots, one per plot group of the metric table (core/metrics/Metrics.h), in the
// table's order; each can be shown or hidden.
class PlotPanel : public QWidget {
    Q_OBJECT
public:
    explicit PlotPanel(QWidget* parent = nullptr);

    void append(const std::vector<SeriesRow>& rows, int set = 0);
    // The runs compared with set 0 (TimePlot::setRuns).
    void setRuns(const QStringList& others);
    void addMarker(double tMs, const QString& text, bool alarm);
    void clear();
    void replot();
    const std::vector<TimePlot*>& plots() const { return m_plots; }
    // The plot that draws `metric`, or nullptr when the metric is not plotted.
    TimePlot* plotOf(int metric) const;
    void setPlotVisible(int i, bool visible);

private:
    struct Curve {
        int metric;
        std::size_t plot;
    };
    std::vector<TimePlot*> m_plots;
    std::vector<Curve> m_curves; // every plotted metric, in table order (= curve order in its plot)
    QVBoxLayout* m_layout;
    std::vector<std::vector<double>> m_values; // append()'s per-plot row, kept to reuse its storage
};

} // namespace blkmq
