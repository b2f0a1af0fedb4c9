// GUI frame time with 5,000+ requests in flight (issue 5): how long one
// MainWindow::frame() (drain the runner, update canvas, plots and log, paint)
// takes on the GUI thread while the engine runs on its worker. Reports the
// median and the 99th percentile; the target is a median within 16 ms.
#include "EngineRunner.h"
#include "MainWindow.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QGraphicsView>
#include <QThread>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

using namespace blkmq;

int main(int argc, char** argv)
{
    int frames = 600;
    for (int i = 1; i + 1 < argc; ++i)
        if (!std::strcmp(argv[i], "--frames"))
            frames = std::max(10, std::atoi(argv[i + 1]));
    qputenv(
        "QT_QPA_PLATFORM", qgetenv("QT_QPA_PLATFORM").isEmpty() ? QByteArray("offscreen") : qgetenv("QT_QPA_PLATFORM"));
    QApplication app(argc, argv);
    MainWindow w;
    w.resize(1500, 920);
    w.show();
    // 32 jobs x QD 160 on per-CPU queues: 5,120 requests in flight.
    if (!w.loadPreset(QStringLiteral("nvme-2s64-mq"), { "workload.jobs.0.iodepth=160", "duration=\"10s\"" }))
        return 2;
    w.runner()->setSpeed(1e-3);
    w.runner()->run();
    QElapsedTimer clock;
    std::vector<double> ms;
    int inFlight = 0;
    for (int i = 0; i < frames; ++i) {
        clock.start();
        w.frame();
        QApplication::processEvents(); // paint
        ms.push_back(static_cast<double>(clock.nsecsElapsed()) / 1e6);
        const auto snap = w.runner()->snapshot();
        inFlight = snap ? static_cast<int>(snap->requests.size()) : 0;
        QThread::msleep(static_cast<unsigned long>(std::max(0.0, 16.0 - ms.back())));
    }
    w.runner()->pause();
    std::sort(ms.begin(), ms.end());
    const double median = ms[ms.size() / 2];
    const double p99 = ms[std::min(ms.size() - 1, ms.size() * 99 / 100)];
    std::printf(
        "frame time with %d requests in flight over %d frames: median %.2f ms, p99 %.2f ms (target: median <= 16 ms)\n",
        inFlight, frames, median, p99);
    return 0;
}
