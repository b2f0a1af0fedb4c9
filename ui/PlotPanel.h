#pragma once

#include "metrics/TimeSeries.h"

#include <QWidget>

#include <vector>

class QVBoxLayout;

namespace blkmq {

class TimePlot;

// The live plots, fed with time-series rows; each can be shown or hidden.
class PlotPanel : public QWidget {
    Q_OBJECT
public:
    explicit PlotPanel(QWidget* parent = nullptr);

    void append(const std::vector<SeriesRow>& rows, int set = 0);
    void setCompare(bool on, const QString& label = {});
    void addMarker(double tMs, const QString& text, bool alarm);
    void clear();
    void replot();
    const std::vector<TimePlot*>& plots() const { return m_plots; }
    void setPlotVisible(int i, bool visible);

private:
    TimePlot* add(const QString& title, const QString& unit);
    std::vector<TimePlot*> m_plots;
    QVBoxLayout* m_layout;
};

} // namespace blkmq
