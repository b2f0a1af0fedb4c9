#pragma once

#include "metrics/TimeSeries.h"

#include <nlohmann/json.hpp>

#include <QWidget>

#include <optional>
#include <string>
#include <vector>

class QAction;
class QLabel;
class QGridLayout;
class QMenu;
class QScrollArea;

namespace blkmq {

class TimePlot;

// The live plots, one per plot group of the metric table (core/metrics/Metrics.h), in the
// table's order; each can be shown or hidden.
class PlotPanel : public QWidget {
    Q_OBJECT
public:
    explicit PlotPanel(QWidget* parent = nullptr);

    void append(const std::vector<SeriesRow>& rows, int set = 0);
    // The sample interval in progress (Snapshot::intervalSoFar) as a provisional last point; none: drop it.
    void setProvisional(const std::optional<SeriesRow>& row, int set = 0);
    // The runs compared with set 0 (TimePlot::setRuns).
    void setRuns(const QStringList& others);
    void addMarker(double tMs, const QString& text, bool alarm);
    void setCursor(double tMs); // TimePlot::setCursor on every plot
    void cutAfter(double tMs); // TimePlot::cutAfter on every plot
    void clear();
    // A new scenario: every time axis shows 0..endMs (the run's duration) and follows the run.
    void setSpan(double endMs);
    // How a live change is labelled on the plots: "A: complete-llist on".
    static QString markerLabel(const QString& run, const QString& change);
    // "solid: A, as loaded; dashed: B: complete-llist on" while runs are compared, else empty.
    const QString& runsText() const { return m_runsText; }
    void replot(bool now = false); // TimePlot::replot
    void applyPalette(); // TimePlot::applyPalette
    // Replots the next `n` visible plots in turn: while a run plays, each frame redraws a few of
    // them, so no frame pays for all (the others show their data a few frames later).
    void replotSome(int n);
    const std::vector<TimePlot*>& plots() const { return m_plots; }
    // The plot that draws `metric`, or nullptr when the metric is not plotted.
    TimePlot* plotOf(int metric) const;
    void setPlotVisible(int i, bool visible);
    // One column (a narrow panel) or a grid of several (a wide screen, a projector's whole width).
    // The grid uses as many of them as fit side by side at the plots' minimum width; the others
    // come back when the panel grows, so no column is ever cut off.
    void setColumns(int columns);
    int columns() const { return m_columns; }
    int shownColumns() const { return m_shownColumns; }

    // View > Plots: a checkable entry per plot, then "In two columns".
    void addViewMenu(QMenu* menu);
    // The plots a lesson step is about (metric ids, Lesson::plotsOf); none: every plot the View
    // menu shows. A plot shows when both want it; with none to show, the panel gives its room away.
    void setLessonPlots(const std::optional<std::vector<std::string>>& metrics);
    // A session file's view: "plots_hidden" (by index: those not shown, but for a plot a lesson
    // step leaves out, whether the View menu has it) and "plot_columns"; restore() takes them back.
    void saveTo(nlohmann::json& view) const;
    void restore(const nlohmann::json& view);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    struct Curve {
        int metric;
        std::size_t plot;
    };
    std::vector<TimePlot*> m_plots;
    std::size_t m_nextReplot = 0;
    std::vector<Curve> m_curves; // every plotted metric, in table order (= curve order in its plot)
    QGridLayout* m_layout;
    int m_columns = 1;
    int m_shownColumns = 1;
    QScrollArea* m_scroll;
    int columnsThatFit() const;
    void relayout();
    QLabel* m_runs; // what each line style is, when runs are compared
    QString m_runsText;
    std::vector<std::vector<double>> m_values; // append()'s per-plot row, kept to reuse its storage
    void valuesOf(const SeriesRow& r);
    std::vector<QAction*> m_viewActions; // addViewMenu's, one per plot
    QAction* m_columnsAction = nullptr;
    std::optional<std::vector<int>> m_lessonPlots; // by index
    void applyVisibility();
};

} // namespace blkmq
