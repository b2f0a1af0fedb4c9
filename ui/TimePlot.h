#pragma once

#include <QRect>
#include <QSize>
#include <QLocale>
#include <QString>
#include <QWidget>

#include <vector>

class QCustomPlot;
class QCPItemStraightLine;
class QCPGraph;
class QCPPainter;
class QIODevice;
class QLabel;
class QToolButton;

namespace blkmq {

// The one wrapper around QCustomPlot: a strip chart over simulated time
// with a bounded number of points per curve (old ones scroll out), labelled
// vertical markers, and exports.
class TimePlot : public QWidget {
    Q_OBJECT
public:
    TimePlot(const QString& title, const QString& unit, QWidget* parent = nullptr);

    int addCurve(const QString& name, const QColor& color);
    // Appends one point per curve (x in simulated ms); keeps at most pointBudget() points.
    // Set 0 is the run shown on the canvas; sets 1.. are the runs compared with it (setRuns).
    void append(double tMs, const std::vector<double>& values, int set = 0);
    // The interval in progress as the curves' last point until the next append() (or another
    // provisional point) replaces it; values empty: none. Before the first sample it is drawn as
    // the interval's level from t = 0, so a curve shows from the first frames.
    void setProvisional(double tMs, const std::vector<double>& values, int set = 0);
    // The runs compared with set 0, by label: each gets twins of the curves, dashed, dotted, ...
    void setRuns(const QStringList& others);
    void addMarker(double tMs, const QString& text, const QColor& color);
    // The time shown when the window has gone back in the run (< 0: none): a line over the curves,
    // which go on to where the run reached.
    void setCursor(double tMs);
    double cursor() const { return m_cursorMs; }
    // The run took a new branch at `tMs`: its points and markers after that go.
    void cutAfter(double tMs);
    void clear();
    // A new scenario: the time axis shows 0..endMs and follows the run again, the value axis resets.
    void setSpan(double endMs);
    // A tick label with an SI prefix: 400000 -> "400k", 1250000 -> "1.25M".
    static QString siLabel(double v, const QLocale& locale = QLocale::c());
    bool following() const { return m_follow; }
    // Off once the user drags or zooms the time axis: a "Whole run" button shows, which turns it on.
    void setFollowing(bool on);
    QToolButton* wholeRunButton() const { return m_wholeRun; }
    // Queued (cheap to call every frame: drawn once, when the event loop next runs); `now`: drawn
    // before it returns, for a picture taken at once (a screenshot).
    // The curves in the palette's colours (the twins of other runs keep their dashes).
    void applyPalette();
    void replot(bool now = false);
    QString title() const { return m_title; }
    int pointCount(int curve) const;
    static constexpr int pointBudget() { return 2000; }

    // Renders the chart at `size` as "png", "svg" or "pdf" into `out`, fonts and lines scaled to
    // the size (exportScale); false for another format or when rendering fails.
    bool render(QIODevice& out, const QString& format, QSize size);
    // Several charts as one picture, in a grid of 1 to 3 columns; a PDF takes at most four charts
    // a page, in as many pages as they need. `caption`, when given, is a line over them (what ran,
    // and what each line style is when runs are compared); `table`, rich text, a panel at their
    // right (the A/B table beside its curves), on every page.
    static bool renderGrid(QIODevice& out, const QString& format, QSize size, const std::vector<TimePlot*>& plots,
        const QString& caption = {}, const QString& table = {});
    static double exportScale(QSize size);
    QCustomPlot* plot() const { return m_plot; }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    // The chart into `where`, scaled by `scale` (0: for its size, exportScale).
    void paint(QCPPainter& painter, QRect where, double scale = 0);
    void placeWholeRun();
    static constexpr int kMarkerRows = 3;
    int markerLabels() const; // the live changes', stalls' and bookmarks' labels on the chart

    QCustomPlot* m_plot;
    QToolButton* m_wholeRun;
    QString m_title;
    std::vector<QCPGraph*> m_curves; // set 0
    std::vector<QColor> m_colours; // each curve's metric colour (Palette::curveColour)
    std::vector<std::vector<QCPGraph*>> m_others; // sets 1..
    std::vector<std::vector<double>> m_provisional; // per set: the keys of its provisional points
    void dropProvisional(int set);
    QCPItemStraightLine* m_cursor = nullptr;
    // Over the axis rect while every sample so far has no value (kNoValue: a latency with nothing
    // reaped), so an empty chart says why rather than looking broken.
    QLabel* m_noValue = nullptr;
    double m_cursorMs = -1;
    bool m_follow = true; // the time axis shows the whole run; false once the user zooms or drags
};

} // namespace blkmq
