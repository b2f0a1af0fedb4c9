#include "Exporter.h"

#include "CanvasView.h"
#include "ComparePanel.h"
#include "PlotPanel.h"
#include "TimePlot.h"
#include "engine/ChromeTrace.h"
#include "engine/Engine.h"
#include "experiment/TbbHandoff.h"
#include "io/SafeFile.h"
#include "metrics/Metrics.h"
#include "scenario/ScenarioLoader.h"

#include <nlohmann/json.hpp>

#include <QBuffer>
#include <QFileDialog>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QPainter>

namespace blkmq {

namespace {
QString q(const std::string& s) { return QString::fromStdString(s); }
} // namespace

Exporter::Exporter(const RunSet& runs, const RunRecord& record, PlotPanel* plots, ComparePanel* compare,
    CanvasView* canvas, QWidget* parent)
    : QObject(parent)
    , m_runs(runs)
    , m_record(record)
    , m_plots(plots)
    , m_compare(compare)
    , m_canvas(canvas)
    , m_parent(parent)
    , m_workers(this)
{
    connect(this, &Exporter::traceExported, this, [this](const QString& path, const QString& error) {
        if (!error.isEmpty())
            QMessageBox::critical(m_parent, tr("Export failed"), error);
        else
            emit message(tr("Trace written to %1: open it in ui.perfetto.dev").arg(path), 10000);
    });
}

void Exporter::addFileActions(QMenu* file, const std::vector<Session::Bookmark>& bookmarks, const std::int64_t& shownNs)
{
    file->addAction(tr("Export &chart…"), this, &Exporter::exportChartDialog);
    file->addAction(tr("Export time series (CSV)…"), this, [this, &bookmarks] {
        const QString path = QFileDialog::getSaveFileName(m_parent, tr("Export CSV"), QString(), tr("CSV (*.csv)"));
        if (!path.isEmpty())
            if (const QString err = exportCsv(path, bookmarks); !err.isEmpty())
                QMessageBox::critical(m_parent, tr("Export failed"), err);
    });
    file->addAction(tr("Export trace for Perfetto (JSON)…"), this, [this, &shownNs] {
        const QString path = QFileDialog::getSaveFileName(
            m_parent, tr("Export trace"), QString(), tr("Chrome trace-event JSON (*.json)"));
        if (path.isEmpty())
            return;
        if (const QString err = exportTrace(path, shownNs); !err.isEmpty())
            QMessageBox::critical(m_parent, tr("Export failed"), err);
        else
            emit message(tr("Writing the trace to %1…").arg(path), 0);
    });
    file->addAction(tr("Save canvas as PNG…"), this, [this, &shownNs] {
        const QString path = QFileDialog::getSaveFileName(m_parent, tr("Save canvas"), QString(), tr("PNG (*.png)"));
        if (!path.isEmpty())
            if (const QString err = exportCanvas(path, shownNs); !err.isEmpty())
                QMessageBox::critical(m_parent, tr("Export failed"), err);
    });
}

QString Exporter::exportWidget(const QString& path, QWidget* widget)
{
    QBuffer out;
    out.open(QIODevice::WriteOnly);
    if (!widget->grab().save(&out, "PNG"))
        return tr("could not render the window");
    return write(path, out.data());
}

// Every export goes through SafeFile: atomic for files, written through to a device or FIFO, never
// replacing one.
QString Exporter::write(const QString& path, const QByteArray& bytes)
{
    return q(SafeFile::write(path.toStdString(), std::string_view(bytes.constData(), bytes.size())));
}

QString Exporter::checkChartPath(const QString& path)
{
    const QString format = QFileInfo(path).suffix().toLower();
    if (format != QLatin1String("png") && format != QLatin1String("svg") && format != QLatin1String("pdf"))
        return tr("%1: unknown chart format '%2' (use .png, .svg or .pdf)").arg(path, format);
    return QString::fromStdString(SafeFile::checkWritable(path.toStdString()));
}

QString Exporter::exportChart(const QString& path, int plot, QSize size)
{
    const auto& all = m_plots->plots();
    if (plot < -1 || plot >= static_cast<int>(all.size()))
        return tr("there is no chart %1 (1 to %2, or all)").arg(plot + 1).arg(all.size());
    if (!size.isValid())
        size = QSize(1920, 1080); // a 16:9 slide
    if (const QString err = checkChartPath(path); !err.isEmpty())
        return err;
    std::vector<TimePlot*> plots;
    for (TimePlot* p : all)
        if (plot == -1 ? !p->isHidden() : p == all[static_cast<std::size_t>(plot)])
            plots.push_back(p);
    QBuffer out;
    out.open(QIODevice::WriteOnly);
    // Compared runs: their table beside their curves. Over the charts, what ran and when.
    const QString table = m_compare->tableText();
    const Scenario& sc = m_runs.a()->scenario();
    const auto snap = m_runs.a()->snapshot();
    QString caption = tr("%1, seed %2, t = %3 ms")
                          .arg(q(sc.name))
                          .arg(sc.seed)
                          .arg(snap ? static_cast<double>(snap->now.ns()) / 1e6 : 0.0, 0, 'f', 3);
    if (!m_plots->runsText().isEmpty())
        caption += QStringLiteral(" — ") + m_plots->runsText();
    if (!TimePlot::renderGrid(out, QFileInfo(path).suffix().toLower(), size, plots, caption, table))
        return tr("could not render the chart to %1").arg(path);
    return write(path, out.data());
}

int Exporter::chartIndex(const QString& id) const
{
    if (id == QLatin1String("all"))
        return -1;
    bool number = false;
    const int n = id.toInt(&number);
    const auto& plots = m_plots->plots();
    if (number)
        return n >= 1 && n <= static_cast<int>(plots.size()) ? n - 1 : -2;
    for (std::size_t i = 0; i < kMetrics.size(); ++i) // a metric id: the chart that draws it
        if (QString::fromUtf8(kMetrics[i].id.data(), static_cast<qsizetype>(kMetrics[i].id.size())) == id)
            if (TimePlot* p = m_plots->plotOf(static_cast<int>(i)))
                return static_cast<int>(std::find(plots.begin(), plots.end(), p) - plots.begin());
    return -2;
}

QString Exporter::exportTrace(const QString& path, std::int64_t untilNs)
{
    if (untilNs <= 0)
        return tr("nothing to trace yet: run the scenario first");
    if (const std::string err = SafeFile::checkWritable(path.toStdString()); !err.empty())
        return QString::fromStdString(err);
    auto scenario = ScenarioLoader::fromText(m_runs.a()->liveScenarioJson(), "scenario");
    if (!scenario)
        return QString::fromStdString(scenario.error());
    const SimTime until(untilNs);
    auto* worker = QThread::create([this, sc = std::move(*scenario), until, path] {
        Engine engine(sc);
        ChromeTrace trace(engine, {});
        engine.addTraceSink(&trace);
        for (SimTime t = sc.sample_interval; engine.now() < until && !engine.finished(); t = t + sc.sample_interval) {
            engine.runUntil(std::min(t, until));
            trace.sample(engine);
        }
        const std::string err = SafeFile::write(path.toStdString(), trace.finish(engine));
        // The closure is built and posted while the hand-off is held, and passes it before it reads
        // what it captured (Qt's event queue is invisible to ThreadSanitizer).
        const auto handoff = TbbHandoff::hold();
        QMetaObject::invokeMethod(
            this,
            [this, path, err] {
                TbbHandoff::pass();
                emit traceExported(path, QString::fromStdString(err));
            },
            Qt::QueuedConnection);
    });
    m_workers.start(worker);
    return {};
}

QString Exporter::exportCsv(const QString& path, const std::vector<Session::Bookmark>& bookmarks) const
{
    // Run A's series; with runs compared, each metric again per run (b_iops, ...) at the same times;
    // and the live changes, stalls and bookmarks (★ note) of the interval that ends at t_ns.
    std::vector<Marker> marks = m_record.markers;
    for (const Session::Bookmark& b : bookmarks)
        marks.push_back({ b.t_ns, "★ " + b.note });
    std::stable_sort(marks.begin(), marks.end(), [](const Marker& a, const Marker& b) { return a.t_ns < b.t_ns; });
    std::string header = TimeSeries::csvHeader();
    for (std::size_t k = 1; k < m_runs.all.size(); ++k)
        for (const Metric& m : kMetrics)
            header.append(",").append(m_runs.all[k].label.toLower().toStdString()).append("_").append(m.id);
    header += ",markers\n";
    QByteArray bytes = QByteArray::fromStdString(header);
    std::size_t marker = 0;
    std::int64_t previous = -1;
    static const std::vector<SeriesRow> kNone;
    std::vector<std::size_t> next(
        m_runs.all.size(), 0); // each compared run's rows, walked with A's (both in time order)
    for (const auto& r : m_record.rows) {
        std::string line = TimeSeries::csvRow(r);
        for (std::size_t k = 1; k < m_runs.all.size(); ++k) {
            const std::vector<SeriesRow>& rows = k - 1 < m_record.others.size() ? m_record.others[k - 1] : kNone;
            std::size_t& i = next[k];
            while (i < rows.size() && rows[i].t_ns < r.t_ns)
                ++i;
            const std::string other
                = i < rows.size() && rows[i].t_ns == r.t_ns ? TimeSeries::csvRow(rows[i]) : std::string();
            // Its values without its t_ns column; empty cells where B has no row at that time.
            line += other.empty() ? std::string(kMetrics.size(), ',') : other.substr(other.find(','));
        }
        std::string text;
        for (; marker < marks.size() && marks[marker].t_ns <= r.t_ns; ++marker)
            if (marks[marker].t_ns > previous)
                text.append(text.empty() ? "" : "; ").append(marks[marker].text);
        for (char& c : text)
            if (c == '"')
                c = '\'';
        line.append(",\"").append(text).append("\"\n");
        bytes += QByteArray::fromStdString(line);
        previous = r.t_ns;
    }
    return write(path, bytes);
}

QString Exporter::exportCanvas(const QString& path, std::int64_t shownNs)
{
    // At twice the on-screen size, with the simulated time and the legend under it: a picture a
    // slide can take as it is.
    const QSize view = m_canvas->viewport()->size();
    const QSize legend(view.width(), m_canvas->legend()->heightForWidth(view.width()) + 8);
    QImage image(QSize(view.width(), view.height() + legend.height()) * 2, QImage::Format_ARGB32);
    image.fill(Qt::white);
    QPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.scale(2, 2);
    m_canvas->render(&painter, QRectF(0, 0, view.width(), view.height()), m_canvas->viewport()->rect());
    QFont f = m_parent->font();
    f.setBold(true);
    painter.setFont(f);
    painter.setPen(QColor(0x2c, 0x3e, 0x50));
    painter.drawText(QRectF(8, 4, view.width() - 16, 20), Qt::AlignLeft,
        tr("%1 — t = %2 ms").arg(q(m_runs.a()->scenario().name)).arg(static_cast<double>(shownNs) / 1e6, 0, 'f', 4));
    painter.translate(0, view.height());
    m_canvas->legend()->render(&painter, QPoint(), QRegion(), QWidget::DrawChildren);
    painter.end();
    QBuffer out;
    out.open(QIODevice::WriteOnly);
    if (!image.save(&out, "PNG"))
        return tr("could not render the canvas");
    return write(path, out.data());
}

void Exporter::exportChartDialog()
{
    QStringList names;
    for (auto* p : m_plots->plots())
        names << p->title();
    names << tr("All charts, in a grid");
    bool ok = false;
    const QString which = QInputDialog::getItem(m_parent, tr("Export chart"), tr("Chart"), names, 0, false, &ok);
    if (!ok)
        return;
    const int index = which == names.back() ? -1 : static_cast<int>(names.indexOf(which));
    // Slide sizes first: fonts and lines scale with the size, so a 1920x1080 chart reads on a projector.
    const QStringList sizes = { tr("1920x1080 (16:9 slide)"), tr("1280x720 (16:9)"), tr("2560x1440 (16:9, large)"),
        tr("1600x1200 (4:3)"), tr("900x300 (strip)"), tr("Other…") };
    const QString choice
        = QInputDialog::getItem(m_parent, tr("Export chart"), tr("Size in pixels"), sizes, 0, false, &ok);
    if (!ok)
        return;
    QString sizeText = choice.section(QLatin1Char(' '), 0, 0);
    if (choice == sizes.back())
        sizeText = QInputDialog::getText(m_parent, tr("Export chart"), tr("Size in pixels (width x height)"),
            QLineEdit::Normal, QStringLiteral("1920x1080"), &ok);
    const QStringList wh = sizeText.split(QLatin1Char('x'));
    const QSize size = wh.size() == 2 ? QSize(wh[0].trimmed().toInt(), wh[1].trimmed().toInt()) : QSize();
    if (!ok || size.width() < 50 || size.height() < 50 || size.width() > 10000 || size.height() > 10000) {
        if (ok)
            QMessageBox::warning(
                m_parent, tr("Export chart"), tr("The size must look like 1920x1080 (50 to 10000 pixels each)."));
        return;
    }
    const QString path = QFileDialog::getSaveFileName(
        m_parent, tr("Export chart"), QString(), tr("PNG (*.png);;SVG (*.svg);;PDF (*.pdf)"));
    if (path.isEmpty())
        return;
    if (const QString err = exportChart(path, index, size); !err.isEmpty())
        QMessageBox::critical(m_parent, tr("Export failed"), err);
}

} // namespace blkmq
