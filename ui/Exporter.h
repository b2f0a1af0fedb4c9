#pragma once

#include "RunSet.h"
#include "Workers.h"
#include "session/Session.h"

#include <QObject>
#include <QSize>

#include <cstdint>
#include <vector>

class QMenu;
class QWidget;

namespace blkmq {

class CanvasView;
class ComparePanel;
class PlotPanel;

// Exports of what the window shows: charts (PNG, SVG, PDF at slide sizes), the time series as CSV,
// the canvas as a picture and a Perfetto trace. Each writes through SafeFile
// (atomic for a file, never replacing a device) and returns an error message naming the path, or "".
class Exporter : public QObject {
    Q_OBJECT
public:
    Exporter(const RunSet& runs, const RunRecord& record, PlotPanel* plots, ComparePanel* compare, CanvasView* canvas,
        QWidget* parent);

    // File: Export chart…, time series, trace, canvas; `bookmarks` and `shownNs` read when chosen.
    void addFileActions(QMenu* file, const std::vector<Session::Bookmark>& bookmarks, const std::int64_t& shownNs);

    // Whether exportChart could write `path`, before a run.
    static QString checkChartPath(const QString& path);
    // plot: an index into the plot panel, or -1 for every shown chart in a grid; size: 1920x1080 if
    // not given. Fonts and lines scale with the size.
    QString exportChart(const QString& path, int plot = 0, QSize size = {});
    // --chart: "all" (-1), a 1-based chart number, or a metric id (its chart); -2 if none.
    int chartIndex(const QString& id) const;
    QString exportCsv(const QString& path, const std::vector<Session::Bookmark>& bookmarks) const;
    QString exportCanvas(const QString& path, std::int64_t shownNs);
    // The run up to `untilNs` again from t = 0 on a thread of its own; an error at once, else "" and
    // traceExported(path, error) when the file is written.
    QString exportTrace(const QString& path, std::int64_t untilNs);
    QString exportWidget(const QString& path, QWidget* widget); // as shown, PNG
    static QString write(const QString& path, const QByteArray& bytes);

signals:
    void traceExported(const QString& path, const QString& error);
    void message(const QString& text, int ms); // for the status bar

private:
    void exportChartDialog();

    const RunSet& m_runs;
    const RunRecord& m_record;
    PlotPanel* m_plots;
    ComparePanel* m_compare;
    CanvasView* m_canvas;
    QWidget* m_parent; // dialogs' parent
    Workers m_workers;
};

} // namespace blkmq
