#include "SweepChart.h"

#include "SiTicker.h"
#include "UiText.h"

#include "io/SafeFile.h"

#include <qcustomplot.h>

#include <QApplication>
#include <QBuffer>
#include <QFileInfo>
#include <QPdfWriter>
#include <QSvgGenerator>

#include <algorithm>
#include <memory>

namespace blkmq {

namespace {

// Distinct colours for the lines, then dashes once they repeat.
const QColor kColours[] = { { 0x29, 0x80, 0xb9 }, { 0xc0, 0x39, 0x2b }, { 0x27, 0xae, 0x60 }, { 0x8e, 0x44, 0xad },
    { 0xe6, 0x7e, 0x22 }, { 0x16, 0xa0, 0x85 }, { 0x2c, 0x3e, 0x50 }, { 0xd3, 0x54, 0x00 } };

void build(QCustomPlot& plot, const SweepChart& chart)
{
    plot.plotLayout()->insertRow(0);
    QString title = q(chart.title);
    if (chart.seeds > 1)
        title += QStringLiteral(" — mean of %1 seeds, bars: min to max").arg(chart.seeds);
    plot.plotLayout()->addElement(0, 0, new QCPTextElement(&plot, title, QFont(plot.font().family(), 10, QFont::Bold)));
    plot.xAxis->setLabel(q(chart.xLabel));
    plot.yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new SiTicker));
    plot.yAxis->setLabel(q(chart.yLabel));
    if (!chart.xTicks.empty()) { // a named axis: its values as ticks
        auto ticker = QSharedPointer<QCPAxisTickerText>::create();
        for (std::size_t i = 0; i < chart.xTicks.size(); ++i)
            ticker->addTick(static_cast<double>(i), q(chart.xTicks[i]));
        plot.xAxis->setTicker(ticker);
    }
    double xLo = INFINITY, xHi = -INFINITY, yHi = 0, yLo = 0;
    for (std::size_t i = 0; i < chart.lines.size(); ++i) {
        const SweepChartLine& line = chart.lines[i];
        QCPGraph* g = plot.addGraph();
        QPen pen(kColours[i % std::size(kColours)], 1.8);
        if (i >= std::size(kColours))
            pen.setStyle(Qt::DashLine);
        g->setPen(pen);
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, pen.color(), pen.color(), 5));
        g->setName(line.label.empty() ? q(chart.title) : q(line.label));
        QVector<double> x(line.x.begin(), line.x.end()), y(line.mean.begin(), line.mean.end());
        g->setData(x, y, true);
        if (chart.seeds > 1) {
            auto* bars = new QCPErrorBars(plot.xAxis, plot.yAxis);
            bars->setDataPlottable(g);
            bars->removeFromLegend();
            QVector<double> below, above;
            for (std::size_t k = 0; k < line.mean.size(); ++k) {
                below << line.mean[k] - line.min[k];
                above << line.max[k] - line.mean[k];
            }
            bars->setData(below, above);
            bars->setPen(QPen(pen.color(), 1.2));
        }
        for (std::size_t k = 0; k < line.x.size(); ++k) {
            xLo = std::min(xLo, line.x[k]);
            xHi = std::max(xHi, line.x[k]);
            yHi = std::max(yHi, line.max.empty() ? line.mean[k] : line.max[k]);
            yLo = std::min(yLo, line.min.empty() ? line.mean[k] : line.min[k]);
        }
    }
    const double pad = xHi > xLo ? (xHi - xLo) * 0.05 : 0.5;
    plot.xAxis->setRange(xLo - pad, xHi + pad);
    plot.yAxis->setRange(yLo, yHi > yLo ? yHi * 1.1 : yLo + 1);
    plot.legend->setVisible(chart.lines.size() > 1);
    plot.legend->setFont(QFont(plot.font().family(), 8));
    // The legend under the axes, never over the data.
    plot.axisRect()->insetLayout()->take(plot.legend);
    plot.plotLayout()->addElement(2, 0, plot.legend);
    plot.plotLayout()->setRowStretchFactor(2, 0.001);
    plot.legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    plot.legend->setWrap(3);
    plot.legend->setBorderPen(Qt::NoPen);
}

} // namespace

std::string renderSweepChart(const SweepChart& chart, const std::string& path, int width, int height)
{
    const QString format = QFileInfo(q(path)).suffix().toLower();
    if (format != QLatin1String("png") && format != QLatin1String("svg") && format != QLatin1String("pdf"))
        return "cannot write '" + path + "': a chart is .png, .svg or .pdf";
    // The chart tool has no application: an offscreen one for as long as it draws.
    std::unique_ptr<QApplication> app;
    static int argc = 1;
    static char name[] = "blkmqlab-chart";
    static char* argv[] = { name, nullptr };
    if (!QCoreApplication::instance()) {
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
        app = std::make_unique<QApplication>(argc, argv);
    }
    QCustomPlot plot;
    build(plot, chart);
    // Drawn at 960x540 and scaled, as the GUI's exports: fonts and lines grow with the picture.
    const double s = std::max(1.0, std::min(width / 960.0, height / 540.0));
    const int w = static_cast<int>(width / s), h = static_cast<int>(height / s);
    plot.resize(w, h);
    plot.replot();
    QBuffer out;
    out.open(QIODevice::WriteOnly);
    const auto paint = [&](QPaintDevice& device) {
        QCPPainter painter;
        if (!painter.begin(&device))
            return false;
        painter.fillRect(QRect(0, 0, width, height), Qt::white);
        painter.scale(s, s);
        plot.toPainter(&painter, w, h);
        return painter.end();
    };
    bool ok = false;
    if (format == QLatin1String("png")) {
        QImage image(width, height, QImage::Format_ARGB32);
        image.fill(Qt::white);
        ok = paint(image) && image.save(&out, "PNG");
    } else if (format == QLatin1String("svg")) {
        QSvgGenerator svg;
        svg.setOutputDevice(&out);
        svg.setSize(QSize(width, height));
        svg.setViewBox(QRect(0, 0, width, height));
        svg.setTitle(q(chart.title));
        ok = paint(svg);
    } else {
        QPdfWriter pdf(&out);
        pdf.setResolution(96);
        pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
        pdf.setPageSize(QPageSize(QSizeF(width * 72.0 / 96, height * 72.0 / 96), QPageSize::Point));
        ok = paint(pdf);
    }
    if (!ok)
        return "could not draw the chart for '" + path + "'";
    return SafeFile::write(path, std::string_view(out.data().constData(), static_cast<std::size_t>(out.data().size())));
}

} // namespace blkmq
