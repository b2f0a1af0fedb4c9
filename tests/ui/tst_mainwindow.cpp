// The desktop application under QT_QPA_PLATFORM=offscreen.
#include "CanvasView.h"
#include "EngineRunner.h"
#include "EventLogModel.h"
#include "LessonPanel.h"
#include "MainWindow.h"
#include "Palette.h"
#include "PatchPanel.h"
#include "PlotPanel.h"
#include "ScenarioPanel.h"
#include "TimePlot.h"
#include "TokenLayer.h"
#include "TopologyScene.h"
#include "check/ModelChecker.h"
#include "cpu/Op.h"
#include "engine/Engine.h"
#include "lesson/Lesson.h"
#include "scenario/ScenarioLoader.h"
#include "session/Session.h"

#include <nlohmann/json.hpp>

#include <qcustomplot.h>

#include <chrono>
#include <functional>
#include <thread>

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QDialog>
#include <QDockWidget>
#include <QComboBox>
#include <QFile>
#include <QGraphicsScene>
#include <QGridLayout>
#include <QJsonDocument>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSlider>
#include <QSpinBox>
#include <QStatusBar>
#include <QTableView>
#include <QTextBrowser>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QXmlStreamReader>
#include <QtTest>

using namespace blkmq;

class TestMainWindow : public QObject {
    Q_OBJECT

    // Steps the window's run to `t` and draws a frame of it; false if it did not get there in time.
    static bool playTo(MainWindow& w, SimTime t, int timeoutMs)
    {
        w.runner()->stepUntil(stop::at(t));
        if (!QTest::qWaitFor([&] { return w.runner()->snapshot()->now >= t && !w.runner()->busy(); }, timeoutMs))
            return false;
        w.frame();
        return true;
    }

    static QString q(const std::string& s) { return QString::fromStdString(s); }

    static QByteArray head(const QString& path, int n)
    {
        QFile f(path);
        return f.open(QIODevice::ReadOnly) ? f.read(n) : QByteArray();
    }

private slots:
    void initTestCase() { QCoreApplication::setOrganizationName(QStringLiteral("BlkMQ Lab tests")); }

    void opensOnEveryPreset()
    {
        MainWindow w;
        w.show();
        for (const auto& p : ScenarioLoader::presets()) {
            QVERIFY2(w.loadPreset(QString::fromStdString(p.name)), p.name.c_str());
            QVERIFY(w.windowTitle().contains(QString::fromStdString(p.name)));
            QCOMPARE(w.runner()->scenario().name, p.name);
            const auto snap = w.runner()->snapshot();
            QVERIFY(snap);
            QCOMPARE(snap->cpus.size(), static_cast<std::size_t>(w.runner()->scenario().topology.nrCpus()));
            QCOMPARE(w.patchPanel()->restartBox()->currentText().toStdString(), w.runner()->scenario().kernel.restart);
        }
    }

    // File > Open of a fio job file: its jobs (and runtime) on the scenario shown, as blkmqlab-cli
    // run does; a key the lab does not model is refused naming the file's line, and changes nothing.
    void fioJobFilesOpenOnTheScenarioShown()
    {
        MainWindow w;
        QVERIFY(w.loadPreset(QStringLiteral("default")));
        QTemporaryDir dir;
        const QString job = dir.filePath(u"job.fio"_qs);
        QFile f(job);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("[global]\nfilename=/dev/nvme0\nrw=randread\nbs=8k\niodepth=3\nruntime=2ms\n\n[two]\nnumjobs=2\n");
        f.close();
        QCOMPARE(w.openFile(job), QString());
        const Scenario& s = w.runner()->scenario();
        QCOMPARE(s.name, std::string("default"));
        QCOMPARE(s.jobs.size(), std::size_t(1));
        QCOMPARE(s.jobs[0].numjobs, 2);
        QCOMPARE(s.jobs[0].iodepth, 3);
        QCOMPARE(s.jobs[0].bs, 8192);
        QCOMPARE(s.duration.ns(), std::int64_t(2000000));
        QCOMPARE(w.openFioJob(job, { "workload.jobs.0.iodepth=5" }), QString()); // --set comes after the job
        QCOMPARE(w.runner()->scenario().jobs[0].iodepth, 5);
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write("[one]\nfilename=/dev/nvme0\nverify=md5\n");
        f.close();
        const QString err = w.openFile(job);
        QVERIFY2(err.contains(u"job.fio:3"_qs) && err.contains(u"verify"_qs), qPrintable(err));
        QCOMPARE(w.runner()->scenario().jobs[0].numjobs, 2); // unchanged
    }

    // A bare start greets: the scenario runs and the status bar points at the keys and the lessons.
    void bareStartRunsAndSaysWhatToDo()
    {
        MainWindow w;
        w.show();
        QVERIFY(w.loadPreset(QStringLiteral("default")));
        w.runner()->setSpeed(1e-3);
        w.greet();
        QVERIFY(w.runner()->isRunning());
        const QString said = w.statusBar()->currentMessage();
        QVERIFY2(said.startsWith(u"default is running"_qs) && said.contains(u"Lessons"_qs), qPrintable(said));
        QTRY_VERIFY_WITH_TIMEOUT(w.shownTimeNs() > 0, 10000);
        w.runOrPause();
    }

    void runAdvancesSimulatedTime()
    {
        MainWindow w;
        w.show();
        QVERIFY(w.loadPreset(QStringLiteral("default")));
        QCOMPARE(w.shownTimeNs(), std::int64_t(0));
        w.runner()->setSpeed(1e-3);
        w.runOrPause();
        QTRY_VERIFY_WITH_TIMEOUT(w.shownTimeNs() > 100000, 10000);
        QTRY_VERIFY_WITH_TIMEOUT(!w.plotPanel()->plots()[0]->plot()->graph(0)->data()->isEmpty(), 10000);
        // every curve of every plot is fed, one per plotted metric of the table
        int curves = 0;
        for (auto* p : w.plotPanel()->plots())
            for (int g = 0; g < p->plot()->graphCount(); ++g, ++curves)
                QVERIFY2(!p->plot()->graph(g)->data()->isEmpty(), qPrintable(p->title()));
        const auto plotted
            = std::count_if(kMetrics.begin(), kMetrics.end(), [](const Metric& m) { return !m.group.empty(); });
        QCOMPARE(curves, static_cast<int>(plotted));
        w.runOrPause();
        QVERIFY(!w.runner()->isRunning());
        w.frame(); // shows the state the pause left
        const auto t = w.shownTimeNs();
        QTest::qWait(200);
        w.frame();
        QCOMPARE(w.shownTimeNs(), t); // paused means paused
        QVERIFY(w.eventLog()->rowCount() > 0);
    }

    // A runner that stops says so at once, before the GUI thread hears of it, and the late news of
    // a stop never stops a run started since (a Run pressed as A ended left B behind for good).
    void aStoppedRunnerSaysSoAtOnce()
    {
        const auto noEvents = [](const std::function<bool()>& done) {
            for (int i = 0; i < 20000 && !done(); ++i)
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            return done();
        };
        auto scenario = ScenarioLoader::fromPreset("default", { "duration=\"300us\"" });
        QVERIFY(scenario.ok());
        EngineRunner end;
        end.load(*scenario);
        end.setSpeed(0);
        end.run();
        QVERIFY(noEvents([&] { return end.simulatedNs() >= usec(300).ns() && !end.busy(); }));
        QVERIFY(!end.isRunning()); // the end reached: not running, though no event was handled yet
        QSignalSpy ended(&end, &EngineRunner::stateChanged);
        QTRY_COMPARE(ended.size(), 1);

        EngineRunner paused;
        paused.load(*scenario);
        paused.setSpeed(1e-3); // the run after the pause takes 0.2 s; runTo() goes as fast as it can
        paused.runTo(usec(100));
        QVERIFY(noEvents([&] { return !paused.isRunning() && !paused.busy(); }));
        QCOMPARE(paused.simulatedNs(), usec(100).ns());
        QSignalSpy state(&paused, &EngineRunner::stateChanged);
        paused.run(); // before the news of the pause arrives
        QCoreApplication::processEvents();
        QCoreApplication::processEvents();
        QVERIFY(paused.isRunning() || paused.simulatedNs() >= usec(300).ns());
        QTRY_VERIFY_WITH_TIMEOUT(paused.simulatedNs() >= usec(300).ns() && !paused.isRunning(), 20000);
    }

    void stepProcessesOneEvent()
    {
        MainWindow w;
        QVERIFY(w.loadPreset(QStringLiteral("default")));
        QCOMPARE(w.runner()->snapshot()->events, std::uint64_t(0));
        w.step();
        QTRY_COMPARE(w.runner()->snapshot()->events, std::uint64_t(1));
        w.step();
        w.step();
        QTRY_COMPARE(w.runner()->snapshot()->events, std::uint64_t(3));
    }

    void patchSwitchSendsCommandAndMarker()
    {
        MainWindow w;
        w.show();
        QVERIFY(w.loadPreset(QStringLiteral("usb-storage")));
        w.runner()->setSpeed(0.05); // 50 ms of simulated time per second
        w.runOrPause();
        QTRY_VERIFY_WITH_TIMEOUT(w.shownTimeNs() > 5000000, 10000);
        w.runOrPause();
        QCheckBox* box = w.patchPanel()->patchBox("complete-local-bh");
        QVERIFY(box);
        const int items = w.plotPanel()->plots()[0]->plot()->itemCount();
        box->setChecked(true); // as a click would
        QTRY_COMPARE(w.plotPanel()->plots()[0]->plot()->itemCount(), items + 2); // marker line + label
        const auto* label = qobject_cast<QCPItemText*>(w.plotPanel()->plots()[0]->plot()->item(items + 1));
        QVERIFY(label);
        QCOMPARE(label->text(), u"A: complete-local-bh on"_qs); // not the raw --set key
        const auto wakeups = w.runner()->snapshot()->counters.ksoftirqd_wakeups;
        const auto completed = w.runner()->snapshot()->counters.completed;
        QVERIFY(wakeups > 0);
        w.runner()->setSpeed(0);
        w.runOrPause();
        QTRY_VERIFY_WITH_TIMEOUT(!w.runner()->isRunning(), 20000); // to the end of the scenario
        QVERIFY(w.runner()->snapshot()->counters.completed > completed + 100);
        // no ksoftirqd wake-up since the switch: the softirq now runs at local_bh_enable
        QCOMPARE(w.runner()->snapshot()->counters.ksoftirqd_wakeups, wakeups);
    }

    // The wheel passing over a panel never changes a setting: an unfocused combo box, spin box or
    // slider leaves the wheel to what holds it (the panel's scroll area), in every panel and the
    // toolbar; nothing reaches the run.
    void wheelNeverChangesASetting()
    {
        MainWindow w;
        w.resize(1280, 800);
        w.show();
        QVERIFY(w.loadPreset(QStringLiteral("default")));
        const auto value = [](QWidget* x) -> QString {
            if (auto* c = qobject_cast<QComboBox*>(x))
                return QString::number(c->currentIndex());
            if (auto* s = qobject_cast<QAbstractSpinBox*>(x))
                return s->text();
            if (auto* s = qobject_cast<QAbstractSlider*>(x))
                return QString::number(s->value());
            return {};
        };
        QList<QWidget*> settings;
        for (QWidget* x : w.findChildren<QWidget*>())
            if (qobject_cast<QComboBox*>(x) || qobject_cast<QAbstractSpinBox*>(x) || qobject_cast<QAbstractSlider*>(x))
                if (!qobject_cast<QScrollBar*>(x)) // a scroll bar is what the wheel is for
                    settings << x;
        QVERIFY(settings.size() > 12); // the patch and scenario panels' drop-downs and boxes, the toolbar's
        QVERIFY(settings.contains(w.patchPanel()->restartBox()));
        QStringList before;
        for (QWidget* x : settings)
            before << value(x);
        const std::string live = w.runner()->liveScenarioJson();
        QSignalSpy commands(w.patchPanel(), &PatchPanel::commandRequested);
        QSignalSpy restarts(w.patchPanel(), &PatchPanel::restartRequested);
        const int markers = w.plotPanel()->plots()[0]->plot()->itemCount();
        for (QWidget* x : settings)
            for (const int dy : { -120, 120, -360 }) {
                const QPointF at(x->width() / 2.0, x->height() / 2.0);
                QWheelEvent wheel(at, x->mapToGlobal(at), QPoint(), QPoint(0, dy), Qt::NoButton, Qt::NoModifier,
                    Qt::NoScrollPhase, false);
                QApplication::sendEvent(x, &wheel);
                QVERIFY2(!wheel.isAccepted(),
                    qPrintable(QString::fromLatin1(x->metaObject()->className()) + u' ' + x->objectName()));
            }
        QCoreApplication::processEvents();
        for (qsizetype i = 0; i < settings.size(); ++i)
            QVERIFY2(value(settings[i]) == before[i],
                qPrintable(
                    QString::fromLatin1(settings[i]->metaObject()->className()) + u' ' + settings[i]->objectName()));
        QCOMPARE(commands.count(), 0);
        QCOMPARE(restarts.count(), 0);
        QCOMPARE(w.runner()->liveScenarioJson(), live);
        QCOMPARE(w.runner()->snapshot()->markers, std::size_t(0));
        QCOMPARE(w.plotPanel()->plots()[0]->plot()->itemCount(), markers); // no switch marker
    }

    // The plain wheel over a plot scrolls the plots; Ctrl + wheel zooms its time axis, never below
    // t = 0, and "Whole run" shows and follows the whole run again.
    void plotsZoomOnlyWithCtrlAndNeverBeforeZero()
    {
        MainWindow w;
        w.resize(1280, 800);
        w.show();
        QVERIFY(w.loadPreset(QStringLiteral("default")));
        QVERIFY(playTo(w, SimTime(200000), 20000));
        TimePlot* plot = w.plotPanel()->plots()[0];
        QCustomPlot* qcp = plot->plot();
        const QCPRange range = qcp->xAxis->range();
        const QPointF left(qcp->axisRect()->left() + 2, qcp->axisRect()->center().y());
        const auto wheel = [&](int dy, Qt::KeyboardModifiers mods) {
            QWheelEvent e(
                left, qcp->mapToGlobal(left), QPoint(), QPoint(0, dy), Qt::NoButton, mods, Qt::NoScrollPhase, false);
            QApplication::sendEvent(qcp, &e);
            return e.isAccepted();
        };
        QVERIFY(!wheel(-240, Qt::NoModifier)); // left to the scroll area
        QCOMPARE(qcp->xAxis->range(), range);
        QVERIFY(plot->following());
        QVERIFY(!plot->wholeRunButton()->isVisibleTo(plot));
        wheel(-240, Qt::ControlModifier); // zoom out around the left edge
        QVERIFY(!plot->following());
        QVERIFY(qcp->xAxis->range().size() > range.size());
        QCOMPARE(qcp->xAxis->range().lower, 0.0);
        wheel(480, Qt::ControlModifier); // zoom in
        QVERIFY(qcp->xAxis->range().lower >= 0);
        QVERIFY(qcp->xAxis->range().size() < range.size());
        QVERIFY(plot->wholeRunButton()->isVisibleTo(plot));
        plot->wholeRunButton()->click();
        QVERIFY(plot->following());
        QVERIFY(!plot->wholeRunButton()->isVisibleTo(plot));
        QCOMPARE(qcp->xAxis->range().lower, 0.0);
        QVERIFY(qAbs(qcp->xAxis->range().upper - range.upper) < 1e-9);
    }

    void stallShowsBannerAndStuckRequest()
    {
        MainWindow w;
        w.show();
        QVERIFY(w.loadPreset(QStringLiteral("shared-hctx-stall")));
        QVERIFY(w.stallBanner()->isHidden());
        w.runner()->setSpeed(0);
        w.runOrPause();
        QTRY_VERIFY_WITH_TIMEOUT(w.stallBanner()->isVisible(), 10000);
        QVERIFY(w.stallBanner()->text().contains(QStringLiteral("request A")));
        QVERIFY(w.stallBanner()->text().contains(QStringLiteral("shared_hctx_restart was 0")));
        // "hctx->dispatch" never breaks after its hyphen: word joiners hold the arrow together.
        QVERIFY2(
            w.stallBanner()->text().contains(u"hctx\u2060-\u2060&gt;dispatch"_qs), qPrintable(w.stallBanner()->text()));
        QTRY_VERIFY(!w.runner()->isRunning()); // paused on the stall
        w.frame();
        const auto snap = w.runner()->snapshot();
        QVERIFY(snap->hctxs[0].restart);
        int stuck = 0;
        for (const auto& r : snap->requests)
            stuck += r.stuck;
        QCOMPARE(stuck, 1);
    }

    // The lock-split race is flagged like a stall: a banner naming the CPUs, the run paused there, and
    // the tag map showing what the CPUs cache and what was lost.
    void tagRaceShowsBannerAndTagMap()
    {
        MainWindow w;
        w.show();
        QVERIFY(w.loadPreset(QStringLiteral("ida-lock-split-race")));
        QVERIFY(w.raceBanner()->isHidden());
        w.runner()->setSpeed(0);
        w.runOrPause();
        QTRY_VERIFY_WITH_TIMEOUT(w.raceBanner()->isVisible(), 10000);
        QVERIFY(w.raceBanner()->text().contains(QStringLiteral("steal_tags() copied CPU")));
        QTRY_VERIFY(!w.runner()->isRunning()); // paused on it
        w.frame();
        const auto snap = w.runner()->snapshot();
        QVERIFY(snap->counters.tag_lost > 0);
        int lost = 0;
        for (const auto v : snap->tagMaps[0])
            lost += v == kTagLost;
        QCOMPARE(static_cast<std::uint64_t>(lost), snap->counters.tag_lost);
        QVERIFY(w.loadPreset(QStringLiteral("ida-lock-split-race")));
        QVERIFY(w.raceBanner()->isHidden()); // a new run starts clean
    }

    // A run paused by a tag race stops at the event that made it, at any speed, the same every time:
    // the time an engine on its own reaches when the first tag is lost.
    void tagRacePausesAtTheEventThatMadeIt()
    {
        MainWindow w;
        w.show();
        QVERIFY(w.loadPreset(QStringLiteral("ida-lock-split-race")));
        Engine alone(w.runner()->scenario());
        while (alone.counters().tag_lost == 0 && alone.step()) { }
        QVERIFY(alone.counters().tag_lost > 0);
        const std::int64_t raceNs = alone.now().ns();
        for (const double speed : { 0.0, 1e-4, 0.0 }) { // full speed, the default 100 us per second
            QVERIFY(w.loadPreset(QStringLiteral("ida-lock-split-race")));
            w.runner()->setSpeed(speed);
            w.runOrPause();
            QTRY_VERIFY_WITH_TIMEOUT(w.raceBanner()->isVisible(), 20000);
            QTRY_VERIFY(!w.runner()->isRunning());
            QCOMPARE(w.runner()->simulatedNs(), raceNs);
            QTRY_COMPARE(w.runner()->snapshot()->counters.tag_lost, alone.counters().tag_lost);
        }
    }

    // The allocator switches from the patch panel by restarting the run at t = 0 with the same seed; the
    // patches of the allocator left go off and grey out; a percpu_ida patch restarts the run too.
    void allocatorSwitchRestartsTheRun()
    {
        MainWindow w;
        QVERIFY(w.loadPreset(QStringLiteral("ida-lock-split-race"), { "seed=7" }));
        for (int i = 0; i < 20; ++i)
            w.runner()->step();
        QTRY_VERIFY(w.runner()->snapshot()->events > 0);
        QComboBox* tags = w.patchPanel()->choiceBox("tags");
        QVERIFY(tags && tags->isEnabled());
        tags->setCurrentIndex(tags->findData(QStringLiteral("sbitmap")));
        QCOMPARE(w.runner()->scenario().kernel.tags, std::string("sbitmap"));
        QVERIFY(!w.runner()->scenario().kernel.tag_patches.lockSplit);
        QCOMPARE(w.runner()->scenario().seed, std::uint64_t(7));
        QCOMPARE(w.runner()->snapshot()->events, std::uint64_t(0)); // from t = 0
        QCheckBox* split = w.patchPanel()->patchBox("ida-lock-split");
        QVERIFY(!split->isChecked() && !split->isEnabled());
        tags->setCurrentIndex(tags->findData(QStringLiteral("percpu_ida")));
        QVERIFY(split->isEnabled());
        split->setChecked(true);
        QVERIFY(w.runner()->scenario().kernel.tag_patches.lockSplit);
    }

    void exportsWriteValidFiles()
    {
        MainWindow w;
        w.show();
        QVERIFY(w.loadPreset(QStringLiteral("default"), { "duration=\"4ms\"" }));
        w.runner()->setSpeed(0);
        w.runOrPause();
        QTRY_VERIFY_WITH_TIMEOUT(!w.runner()->isRunning(), 20000);
        QTRY_COMPARE(w.seriesRows().size(), std::size_t(4));
        QTemporaryDir dir;
        const auto path = [&](const char* name) { return dir.filePath(QString::fromLatin1(name)); };
        QCOMPARE(w.exportChart(path("c.png"), 0, QSize(800, 300)), QString());
        QCOMPARE(head(path("c.png"), 8), QByteArray("\x89PNG\r\n\x1a\n", 8));
        QCOMPARE(w.exportChart(path("c.pdf"), 1, QSize(800, 300)), QString());
        QCOMPARE(head(path("c.pdf"), 5), QByteArray("%PDF-"));
        QCOMPARE(w.exportChart(path("c.svg"), 2, QSize(800, 300)), QString());
        QFile svg(path("c.svg"));
        QVERIFY(svg.open(QIODevice::ReadOnly));
        QXmlStreamReader xml(&svg);
        bool sawSvg = false;
        while (!xml.atEnd())
            if (xml.readNext() == QXmlStreamReader::StartElement && xml.name() == QLatin1String("svg"))
                sawSvg = true;
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        QVERIFY(sawSvg);
        QCOMPARE(w.exportCsv(path("s.csv")), QString());
        QFile csv(path("s.csv"));
        QVERIFY(csv.open(QIODevice::ReadOnly));
        const auto lines = QString::fromUtf8(csv.readAll()).trimmed().split(u'\n');
        QCOMPARE(lines.size(), 5);
        QVERIFY(lines[0].startsWith(QStringLiteral("t_ns,iops")));
        QCOMPARE(w.exportScenario(path("s.json")), QString());
        QFile json(path("s.json"));
        QVERIFY(json.open(QIODevice::ReadOnly));
        QVERIFY(ScenarioLoader::fromText(json.readAll().toStdString(), "exported").ok()); // loads back
        QCOMPARE(w.exportCanvas(path("canvas.png")), QString());
        QCOMPARE(head(path("canvas.png"), 4), QByteArray("\x89PNG", 4));
        // a failed write says so and leaves nothing behind
        QVERIFY(!w.exportChart(QStringLiteral("/nonexistent-dir/c.png")).isEmpty());
        QVERIFY(!w.exportChart(path("c.bmp")).isEmpty());
        QVERIFY(!QFile::exists(path("c.bmp")));
    }

    void exportsForSlides()
    {
        MainWindow w;
        w.show();
        QVERIFY(w.loadPreset(QStringLiteral("default"), { "duration=\"4ms\"" }));
        QVERIFY(w.compareWith({ "kernel.patches.complete-llist=true" }).isEmpty());
        w.setSpeed(0);
        w.runOrPause();
        QTRY_VERIFY_WITH_TIMEOUT(w.runner()->simulatedNs() >= 2000000, 20000);
        w.runOrPause();
        w.patchPanel()->patchBox("complete-local-bh")->setChecked(true); // a live change: a marker
        w.runOrPause();
        // Both at the end: B follows A in lockstep, so both may be idle a moment while B is behind.
        QTRY_VERIFY_WITH_TIMEOUT(
            w.runnerB()->simulatedNs() >= 4000000 && !w.runner()->isRunning() && !w.runnerB()->isRunning(), 20000);
        w.frame();
        QTemporaryDir dir;
        // The default is a 16:9 slide; fonts and lines are drawn twice as large as on a 960x540 chart.
        QCOMPARE(w.exportChart(dir.filePath(u"one.png"_qs), w.chartIndex(u"ipis_per_s"_qs)), QString());
        QImage one(dir.filePath(u"one.png"_qs));
        QCOMPARE(one.size(), QSize(1920, 1080));
        QCOMPARE(TimePlot::exportScale(one.size()), 2.0);
        QCOMPARE(w.chartIndex(u"all"_qs), -1);
        QCOMPARE(w.chartIndex(u"2"_qs), 1);
        QCOMPARE(w.chartIndex(u"nope"_qs), -2);
        QCOMPARE(w.exportChart(dir.filePath(u"all.png"_qs), -1, QSize(1280, 720)), QString());
        QCOMPARE(QImage(dir.filePath(u"all.png"_qs)).size(), QSize(1280, 720));
        QCOMPARE(w.exportChart(dir.filePath(u"all.svg"_qs), -1), QString());
        // A/B curves come with their table: its rows are in the picture.
        const QByteArray svg = head(dir.filePath(u"all.svg"_qs), 1 << 24);
        QVERIFY(svg.contains("complete-llist on")); // the caption over the charts
        QVERIFY(svg.contains("default, seed 1, t = ")); // what ran, and when
        QVERIFY2(svg.contains("Δ%"), "no A/B table in the SVG");
        QCOMPARE(w.exportChart(dir.filePath(u"all.pdf"_qs), -1), QString());
        const QByteArray pdf = head(dir.filePath(u"all.pdf"_qs), 1 << 24);
        QVERIFY(pdf.startsWith("%PDF-"));
        // Four charts a page at most: as many pages as the shown charts need.
        int shown = 0;
        for (const TimePlot* p : w.plotPanel()->plots())
            shown += p->isHidden() ? 0 : 1;
        QVERIFY(shown > 4);
        const int pages = static_cast<int>(pdf.count("/Type /Page\n") + pdf.count("/Type /Page\r"));
        QCOMPARE(pages, (shown + 3) / 4);
        // The CSV has B's columns at the same times and the live change in its interval.
        QCOMPARE(w.exportCsv(dir.filePath(u"ab.csv"_qs)), QString());
        QFile csv(dir.filePath(u"ab.csv"_qs));
        QVERIFY(csv.open(QIODevice::ReadOnly));
        const QStringList lines = QString::fromUtf8(csv.readAll()).trimmed().split(u'\n');
        const QStringList header = lines[0].split(u',');
        QVERIFY(header.contains(u"b_iops"_qs));
        QCOMPARE(header.last(), u"markers"_qs);
        const auto b = header.indexOf(u"b_iops"_qs);
        QVERIFY(lines.size() >= 4);
        QVERIFY(lines[2].split(u',')[b].toDouble() > 0);
        QStringList markers;
        for (const QString& line : lines)
            markers << line.section(u',', -1);
        QVERIFY2(
            markers.join(u'|').contains(u"kernel.patches.complete-local-bh=true"_qs), qPrintable(markers.join(u'|')));
        // The canvas at twice its size, with the time written on it.
        QCOMPARE(w.exportCanvas(dir.filePath(u"canvas.png"_qs)), QString());
        const QImage canvas(dir.filePath(u"canvas.png"_qs));
        QVERIFY(canvas.width() >= 2 * 300);
    }

    void scenarioParametersReload()
    {
        MainWindow w;
        QVERIFY(w.loadPreset(QStringLiteral("default")));
        QCOMPARE(w.applyOverrides({ "workload.jobs.0.iodepth=3", "seed=9" }), QString());
        QCOMPARE(w.runner()->scenario().jobs[0].iodepth, 3);
        QCOMPARE(w.runner()->scenario().seed, std::uint64_t(9));
        QCOMPARE(w.scenarioPanel()->seedBox()->value(), 9);
        // a bad value names the field and leaves the running scenario alone
        const QString err = w.applyOverrides({ "topology=\"0c\"" });
        QVERIFY(err.contains(QStringLiteral("topology")));
        QCOMPARE(w.runner()->scenario().topologyText, std::string("2n:1p:4c:1t"));
        // the panel produces overrides only for what was edited
        w.scenarioPanel()->seedBox()->setValue(11);
        const auto sets = w.scenarioPanel()->overrides();
        QCOMPARE(sets.size(), std::size_t(1));
        QCOMPARE(sets[0], std::string("seed=11"));
    }

    void compareRunsBInLockstep()
    {
        MainWindow w;
        w.show();
        QVERIFY(w.loadPreset(QStringLiteral("nvme-tcp-napi"), { "duration=\"3ms\"" }));
        const int graphs = w.plotPanel()->plots()[3]->plot()->graphCount();
        w.setCompare(true);
        QVERIFY(w.runnerB());
        QCOMPARE(w.plotPanel()->plots()[3]->plot()->graphCount(), 2 * graphs);
        w.patchPanelB()->patchBox("complete-remote-softirq")->setChecked(true);
        w.runner()->setSpeed(1e-3);
        w.runnerB()->setSpeed(1e-3);
        w.runOrPause();
        QTRY_VERIFY_WITH_TIMEOUT(w.runnerB()->snapshot()->now.ns() > 1000000, 20000);
        QVERIFY(w.runnerB()->simulatedNs() <= w.runner()->simulatedNs()); // never ahead of A
        w.runOrPause();
        const auto a = w.runner()->snapshot();
        const auto b = w.runnerB()->snapshot();
        QCOMPARE(a->counters.complete_by_context[static_cast<int>(ExecContext::Hardirq)] > 0, true);
        QCOMPARE(b->counters.complete_by_context[static_cast<int>(ExecContext::Hardirq)], std::uint64_t(0));
        QTRY_VERIFY(!w.plotPanel()->plots()[3]->plot()->graph(graphs)->data()->isEmpty()); // B's dashed curve
        // B's curve carries open marks besides its dashes, so where it equals A's it still shows.
        QTRY_VERIFY(w.plotPanel()->plots()[3]->plot()->graph(graphs)->data()->size() > 1);
        w.plotPanel()->plots()[3]->replot(true);
        QCOMPARE(w.plotPanel()->plots()[3]->plot()->graph(graphs)->scatterStyle().shape(), QCPScatterStyle::ssCircle);
        QCOMPARE(w.plotPanel()->plots()[3]->plot()->graph(0)->scatterStyle().shape(), QCPScatterStyle::ssNone);
        w.setCompare(false);
        QCOMPARE(w.plotPanel()->plots()[3]->plot()->graphCount(), graphs);
    }

    // The live scenario is the engine's: a switch flipped while paused is in it at once, survives
    // Reset, and the A/B table reads the metric table for every run.
    void liveScenarioIsTheEngines()
    {
        MainWindow w;
        QVERIFY(w.loadPreset(QStringLiteral("default"), { "duration=\"2ms\"" }));
        QVERIFY(!w.runner()->scenario().kernel.patches.llist);
        w.patchPanel()->patchBox("complete-llist")->setChecked(true);
        const auto live = nlohmann::json::parse(w.runner()->liveScenarioJson());
        QCOMPARE(live["kernel"]["patches"]["complete-llist"].get<bool>(), true);
        QCOMPARE(w.runner()->snapshot()->markers, std::size_t(1)); // applied now, not at the next run
        w.reset();
        QVERIFY(w.runner()->scenario().kernel.patches.llist);
        w.setCompare(true);
        w.runOrPause();
        QTRY_VERIFY_WITH_TIMEOUT(w.runner()->simulatedNs() >= 2000000, 20000);
        QTRY_VERIFY_WITH_TIMEOUT(w.runnerB()->simulatedNs() >= 2000000, 20000);
        w.frame();
        const auto* table = w.findChild<QLabel*>(QStringLiteral("compareTable"));
        QVERIFY(table);
        QVERIFY2(table->text().contains(u">Δ</th>"_qs) && table->text().contains(u"Δ%"_qs)
                && table->text().contains(u"IOPS"_qs) && table->text().contains(u"p99 latency"_qs)
                && table->text().contains(u"remote completions"_qs),
            qPrintable(table->text()));
        // A percentage's Δ is in percentage points, beside the relative Δ%.
        QVERIFY2(table->text().contains(QRegularExpression(u">[+-]?\\d+\\.\\d pp<"_qs)), qPrintable(table->text()));
    }

    // In a dock as narrow as at 1280x800 the A/B table does not widen the panel: it keeps one change
    // column (pp for a percentage, the relative change else); a wide dock and the exports get Δ and Δ%.
    void compareTableFitsANarrowDock()
    {
        MainWindow w;
        w.resize(1280, 800);
        w.show();
        QVERIFY(w.loadPreset(QStringLiteral("default"), { "duration=\"1ms\"" }));
        w.setCompare(true);
        w.runOrPause();
        QTRY_VERIFY_WITH_TIMEOUT(w.runner()->simulatedNs() >= 1000000, 20000);
        QTRY_VERIFY_WITH_TIMEOUT(w.runnerB()->simulatedNs() >= 1000000, 20000);
        auto* table = w.findChild<QLabel*>(QStringLiteral("compareTable"));
        QScrollArea* scroll = nullptr;
        for (QWidget* p = table->parentWidget(); p && !scroll; p = p->parentWidget())
            scroll = qobject_cast<QScrollArea*>(p);
        QVERIFY(scroll);
        const auto shown = [&](int width) {
            scroll->setFixedWidth(width);
            QCoreApplication::processEvents();
            w.frame();
            QCoreApplication::processEvents();
            return table->text();
        };
        const QString narrow = shown(360);
        QVERIFY2(!narrow.contains(u"Δ%</th>"_qs) && narrow.contains(u">Δ</th>"_qs), qPrintable(narrow));
        QVERIFY2(narrow.contains(QRegularExpression(u">[+-]?\\d+\\.\\d pp<"_qs)), qPrintable(narrow));
        QVERIFY2(table->minimumSizeHint().width() <= scroll->viewport()->width(),
            qPrintable(
                QStringLiteral("%1 > %2").arg(table->minimumSizeHint().width()).arg(scroll->viewport()->width())));
        // Nothing else in the panel (B's patch panel, its group titles) widens it either.
        QVERIFY2(w.comparePanel()->minimumSizeHint().width() <= scroll->viewport()->width(),
            qPrintable(QString::number(w.comparePanel()->minimumSizeHint().width())));
        QVERIFY(w.patchPanel()->minimumSizeHint().width() <= scroll->viewport()->width());
        QVERIFY(w.comparePanel()->tableText().contains(u"Δ%</th>"_qs)); // what an export puts beside the curves
        const QString wide = shown(900);
        QVERIFY2(wide.contains(u"Δ%</th>"_qs), qPrintable(wide));
    }

    // The canvas can draw run B's machine instead of A's: its requests in flight, and the legend says so.
    void canvasShowsRunB()
    {
        MainWindow w;
        w.show();
        QVERIFY(w.loadPreset(QStringLiteral("default")));
        w.runner()->setSpeed(0); // B takes A's speed when it starts
        w.setCompare(true);
        QCOMPARE(w.compareWith({ "kernel.patches.complete-llist=true" }), QString());
        w.setPauseAt(SimTime(5'000'000)); // mid-run, where the two differ in flight
        w.runOrPause();
        QTRY_VERIFY_WITH_TIMEOUT(w.runner()->simulatedNs() >= 5000000, 20000);
        QTRY_VERIFY_WITH_TIMEOUT(w.runnerB()->simulatedNs() >= 5000000, 20000);
        QTRY_VERIFY(!w.runner()->isRunning());
        const int inFlightA = static_cast<int>(w.runner()->snapshot()->requests.size());
        const int inFlightB = static_cast<int>(w.runnerB()->snapshot()->requests.size());
        QVERIFY2(inFlightA != inFlightB, "the two runs must differ for the canvas to tell them apart");
        w.frame();
        QCOMPARE(w.scene()->requestsInFlight(), inFlightA);
        const auto* legend = static_cast<CanvasView*>(w.canvasView())->legend();
        QVERIFY(!legend->text().contains(u"canvas: run B"_qs));
        w.comparePanel()->setCanvasShowsB(true);
        QTRY_COMPARE(w.scene()->requestsInFlight(), inFlightB); // drawn while paused
        QVERIFY(legend->text().contains(u"canvas: run B"_qs));
        w.setCompare(false); // no run B: the canvas draws A again
        QTRY_COMPARE(w.scene()->requestsInFlight(), inFlightA);
        QVERIFY(!legend->text().contains(u"canvas: run B"_qs));
    }

    void eventLogModelIsSound()
    {
        EventLogModel model(nullptr, 100);
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        std::vector<TraceRecord> batch;
        for (int i = 0; i < 70; ++i)
            batch.push_back(TraceRecord { i, i, 1, 0, TraceKind::IpiSend });
        model.append(batch);
        QCOMPARE(model.rowCount(), 70);
        for (auto& r : batch)
            r.time += 70;
        model.append(batch); // overflows: the oldest scroll out
        QCOMPARE(model.rowCount(), 100);
        QCOMPARE(model.record(0).time, std::int64_t(40));
        QCOMPARE(model.data(model.index(99, EventLogModel::Kind), Qt::DisplayRole).toString(), QStringLiteral("IPI"));
        QCOMPARE(
            model.data(model.index(99, EventLogModel::Detail), Qt::DisplayRole).toString(), QStringLiteral("to CPU 1"));
        // Every enumerated value by its kernel name: vectors, softirqs, a pending mask bit by bit.
        model.clear();
        model.append({ TraceRecord { 1, -1, static_cast<int>(IrqKind::CallFunction), 0, TraceKind::IrqEnter },
            TraceRecord { 2, -1, static_cast<int>(IrqKind::RdmaCq), 0, TraceKind::IrqExit },
            TraceRecord { 3, -1, IRQ_POLL_SOFTIRQ, 0, TraceKind::SoftirqRaise },
            TraceRecord { 4, -1, (1 << NET_RX_SOFTIRQ) | (1 << BLOCK_SOFTIRQ), 0, TraceKind::SoftirqRun } });
        const QStringList details { u"CALL_FUNCTION_VECTOR (IPI)"_qs, u"RDMA completion vector"_qs, u"IRQ_POLL"_qs,
            u"pending: NET_RX BLOCK"_qs };
        for (int row = 0; row < 4; ++row)
            QCOMPARE(model.data(model.index(row, EventLogModel::Detail), Qt::DisplayRole).toString(), details[row]);
        model.clear();
        QCOMPARE(model.rowCount(), 0);
        // An operation stamps its start: a batch may begin before the last row shown (105.229 after
        // 105.397 us). The log stays in time order.
        model.append({ TraceRecord { 100000, -1, 0, 0, TraceKind::IrqEnter },
            TraceRecord { 105397, -1, 0, 0, TraceKind::IrqExit } });
        model.append({ TraceRecord { 105229, -1, 1, 0, TraceKind::Restart },
            TraceRecord { 110000, -1, 0, 0, TraceKind::IrqEnter } });
        QCOMPARE(model.rowCount(), 4);
        for (int row = 1; row < model.rowCount(); ++row)
            QVERIFY(model.record(row - 1).time <= model.record(row).time);
        QCOMPARE(model.record(1).kind, TraceKind::Restart);
    }

    void plotsReadLikeSlides()
    {
        QCOMPARE(TimePlot::siLabel(400000), u"400k"_qs);
        QCOMPARE(TimePlot::siLabel(1.25e6), u"1.25M"_qs);
        QCOMPARE(TimePlot::siLabel(30), u"30"_qs);
        QCOMPARE(TimePlot::siLabel(0), u"0"_qs);
        QCOMPARE(PlotPanel::markerLabel(u"A"_qs, u"kernel.restart=own-hctx"_qs), u"A: restart own-hctx"_qs);
        QCOMPARE(PlotPanel::markerLabel(u"A"_qs, u"devices.nvme0.rq_affinity=2"_qs), u"A: rq_affinity 2"_qs);
        MainWindow w;
        w.show();
        QVERIFY(w.loadPreset(QStringLiteral("default")));
        QVERIFY(w.compareWith({ "kernel.patches.complete-llist=true" }).isEmpty());
        w.setSpeed(0);
        w.runOrPause();
        QTRY_VERIFY_WITH_TIMEOUT(w.shownTimeNs() >= 3000000, 20000);
        w.runOrPause();
        w.frame();
        for (TimePlot* p : w.plotPanel()->plots()) {
            QCustomPlot* plot = p->plot();
            plot->replot();
            // The legend is a row of its own: it covers no curve.
            QVERIFY2(!plot->legend->outerRect().intersects(plot->axisRect()->outerRect()), qPrintable(p->title()));
            QCOMPARE(plot->xAxis->range().lower, 0.0); // the whole run, from t = 0
        }
        // B's difference is said once, in words.
        const auto* runs = w.plotPanel()->findChild<QLabel*>();
        QVERIFY(runs && runs->text().contains(u"B: complete-llist on"_qs));
        // Another scenario: the time axis is its duration, not the last one's range.
        QVERIFY(w.loadPreset(QStringLiteral("shared-hctx-stall")));
        for (TimePlot* p : w.plotPanel()->plots())
            QCOMPARE(p->plot()->xAxis->range().upper, 1.0);
    }

    void oneNamePerRequest()
    {
        // The stall's request A: the banner, the inspector, the log and its token say "request A".
        MainWindow w;
        QVERIFY(w.loadPreset(QStringLiteral("shared-hctx-stall")));
        w.setSpeed(0);
        w.runOrPause();
        QTRY_VERIFY_WITH_TIMEOUT(w.stalled(), 20000);
        w.frame();
        QVERIFY2(
            w.stallBanner()->text().contains(u"request A, submitted on CPU 0"_qs), qPrintable(w.stallBanner()->text()));
        const auto snap = w.runner()->snapshot();
        const auto a = std::find_if(snap->requests.begin(), snap->requests.end(), [](auto& r) { return r.stuck; });
        QVERIFY(a != snap->requests.end());
        // The banner's numbered steps: a click on one selects its object.
        QCOMPARE(w.stallSteps().size(), std::size_t(4));
        emit w.stallBanner()->linkActivated(u"step:0"_qs);
        QCOMPARE(int(w.selection().kind), int(ObjectRef::Kind::Request));
        QCOMPARE(w.selection().index, a->id);
        // A waits in the scheduler: the inspector says it was never dispatched, in words.
        QVERIFY2(
            w.inspector()->toPlainText().contains(u"not dispatched yet"_qs), qPrintable(w.inspector()->toPlainText()));
        QVERIFY(!w.inspector()->toPlainText().contains(u"- µs"_qs));
        emit w.stallBanner()->linkActivated(u"step:1"_qs); // RESTART set on nullb0's hctx
        QCOMPARE(int(w.selection().kind), int(ObjectRef::Kind::Hctx));
        QCOMPARE(w.selection().index, 0);
        QVERIFY(w.inspector()->toPlainText().contains(u"nullb0 hctx 0"_qs));
        QVERIFY(w.stallBanner()->text().contains(u"<b>nullb0 hctx 0 gets RESTART set"_qs));
        // the log shows the step's time at its top: the first row at or after it
        w.eventLogView()->resize(600, 300);
        emit w.stallBanner()->linkActivated(u"step:1"_qs);
        const QModelIndex top = w.eventLogView()->indexAt(QPoint(2, 2));
        QVERIFY(top.isValid());
        const int topRow = w.eventLogFilter()->mapToSource(top).row();
        const std::int64_t marked = w.stallSteps()[1].at.ns();
        QVERIFY(topRow > 0 && w.eventLog()->record(topRow).time >= marked);
        QVERIFY(w.eventLog()->record(topRow - 1).time < marked);
        emit w.stallBanner()->linkActivated(u"step:3"_qs); // the tag set nothing holds
        QCOMPARE(int(w.selection().kind), int(ObjectRef::Kind::Tags));
        QVERIFY(w.inspect(QStringLiteral("cpu:0")).isEmpty());
        // A click on A's submit row selects A: the inspector names it, the status bar too.
        int row = -1;
        for (int i = 0; i < w.eventLog()->rowCount(); ++i)
            if (w.eventLog()->record(i).kind == TraceKind::Submit && w.eventLog()->record(i).rq == a->id
                && w.eventLog()->data(w.eventLog()->index(i, EventLogModel::Request), Qt::DisplayRole).toString()
                    == u"request A"_qs)
                row = i;
        QVERIFY(row >= 0);
        w.eventLogFilter()->setFilterFixedString(QString());
        w.eventLogView()->setCurrentIndex(w.eventLogFilter()->mapFromSource(w.eventLog()->index(row, 0)));
        QVERIFY2(w.inspector()->toPlainText().startsWith(u"request A"_qs), qPrintable(w.inspector()->toPlainText()));
        QVERIFY(w.inspector()->toPlainText().contains(u"nullb0 hctx 0"_qs));
        // The only hctx of nullb1 is "nullb1 hctx 0" in the log, not its global index.
        bool nullb1 = false;
        for (int i = 0; i < w.eventLog()->rowCount(); ++i)
            nullb1 |= w.eventLog()->data(w.eventLog()->index(i, EventLogModel::Detail), Qt::DisplayRole).toString()
                == u"nullb1 hctx 0"_qs;
        QVERIFY(nullb1);
        QVERIFY(!w.eventLog()
                     ->data(w.eventLog()->index(row, EventLogModel::Detail), Qt::DisplayRole)
                     .toString()
                     .contains(u"hctx 1"_qs));
    }

    void idleWindowStopsDrawing()
    {
        MainWindow w;
        w.show();
        QVERIFY(w.loadPreset(QStringLiteral("wagner-nvmefc-4s80")));
        QVERIFY(w.drawing()); // a fresh scenario is drawn once ...
        QTRY_VERIFY_WITH_TIMEOUT(!w.drawing(), 5000); // ... then nothing changes: the timer stops
        w.setSpeed(1e-3); // as fast as it goes, its 20 ms end in a tenth of a second: a step would be refused
        w.runOrPause();
        QVERIFY(w.drawing());
        QTRY_VERIFY_WITH_TIMEOUT(w.runner()->simulatedNs() > 200000, 20000);
        w.runOrPause(); // paused on a big machine: it settles and stops drawing
        QTRY_VERIFY_WITH_TIMEOUT(!w.drawing(), 5000);
        w.step(); // a step wakes it, and says what the event was
        QVERIFY(w.drawing());
        QTRY_VERIFY_WITH_TIMEOUT(w.statusBar()->currentMessage().startsWith(u"Step: t = "_qs), 5000);
        QTRY_VERIFY_WITH_TIMEOUT(!w.drawing(), 5000);
    }

    // While a run plays each frame redraws a few plots in turn; paused, every visible plot shows the
    // clock it stopped at (its x axis reaches the last point).
    void plotsCatchUpWhenARunStops()
    {
        MainWindow w;
        w.show();
        QVERIFY(w.loadPreset(QStringLiteral("default")));
        w.setSpeed(0);
        w.runOrPause();
        QTRY_VERIFY_WITH_TIMEOUT(w.runner()->simulatedNs() > 3000000, 20000);
        w.runOrPause();
        QTRY_VERIFY_WITH_TIMEOUT(!w.runner()->isRunning() && !w.runner()->busy(), 5000);
        QTRY_VERIFY_WITH_TIMEOUT(!w.drawing(), 5000); // settled: the last frames ran
        int checked = 0;
        for (TimePlot* p : w.plotPanel()->plots()) {
            if (!p->isVisible() || p->pointCount(0) == 0)
                continue;
            const auto data = p->plot()->graph(0)->data();
            const double lastKey = (data->constEnd() - 1)->key;
            QCOMPARE(p->plot()->xAxis->range().upper, std::max(lastKey, 1e-3));
            ++checked;
        }
        QVERIFY(checked >= 4);
    }

    void kernelPathStripFollowsTheSelectedCpu()
    {
        MainWindow w;
        QVERIFY(w.loadPreset(QStringLiteral("default")));
        QVERIFY(w.kernelPathStrip()->text().contains(u"click a CPU"_qs));
        // Step until some CPU is inside a kernel path, then select it: the strip names its levels.
        int cpu = -1;
        for (int i = 0; i < 400 && cpu < 0; ++i) {
            const auto before = w.runner()->snapshot()->events;
            w.step();
            QTRY_VERIFY_WITH_TIMEOUT(w.runner()->snapshot()->events != before && !w.runner()->busy(), 5000);
            const auto snap = w.runner()->snapshot();
            for (std::size_t c = 0; c < snap->cpus.size() && cpu < 0; ++c)
                if (snap->cpus[c].kernelDepth == 2 && snap->cpus[c].kernelPath[1].path)
                    cpu = static_cast<int>(c);
        }
        QVERIFY(cpu >= 0);
        w.frame();
        QVERIFY(w.inspect(QStringLiteral("cpu:%1").arg(cpu)).isEmpty());
        const CpuSnapshot& c = w.runner()->snapshot()->cpus[static_cast<std::size_t>(cpu)];
        const QString text = w.kernelPathStrip()->text();
        QVERIFY2(text.contains(QStringLiteral("CPU %1").arg(cpu)), qPrintable(text));
        for (int i = 0; i < c.kernelDepth; ++i) {
            const KernelFrame& f = c.kernelPath[static_cast<std::size_t>(i)];
            if (f.path)
                QVERIFY2(text.contains(QString::fromUtf8(f.path).toHtmlEscaped()), qPrintable(text));
        }
        QVERIFY2(text.contains(u"⇢"_qs), qPrintable(text)); // an interrupted level below the running one
    }

    void tagCellNamesItsRequest()
    {
        MainWindow w;
        QVERIFY(w.loadPreset(QStringLiteral("shared-hctx-stall")));
        // Step until a request holds a driver tag; its cell's tooltip names it, as everything else does.
        const RequestSnapshot* held = nullptr;
        std::shared_ptr<const Snapshot> snap;
        for (int i = 0; i < 200 && !held; ++i) {
            const auto before = w.runner()->snapshot()->events;
            w.step();
            QTRY_VERIFY_WITH_TIMEOUT(w.runner()->snapshot()->events != before && !w.runner()->busy(), 5000);
            snap = w.runner()->snapshot();
            for (const RequestSnapshot& r : snap->requests)
                if (r.tag >= 0 && !held)
                    held = &r;
        }
        QVERIFY(held);
        w.frame();
        const QString info = w.scene()->tagInfoAt(w.scene()->tagCenter(held->hctx, held->tag));
        QVERIFY2(info.startsWith(QStringLiteral("tag %1: held by request ").arg(held->tag)), qPrintable(info));
        QVERIFY2(info.contains(QStringLiteral("submitted on CPU %1").arg(held->cpu)), qPrintable(info));
        // the requests of this preset are scripted: a script id (A to F) names it
        QVERIFY2(info.contains(QRegularExpression(u"held by request [A-F], "_qs)), qPrintable(info));
        // the other tag of the two is free (the set is shared: nullb1's map shows the same tags)
        const int other = 1 - held->tag;
        QCOMPARE(
            w.scene()->tagInfoAt(w.scene()->tagCenter(held->hctx, other)), QStringLiteral("tag %1: free").arg(other));
        QVERIFY(w.scene()->tagInfoAt(QPointF(-1e6, -1e6)).isEmpty());
    }

    void plotsReachTheClockBetweenSamples()
    {
        // sample_interval is 1 ms; paused at 0.3 ms the curves already show the interval so far.
        MainWindow w;
        QVERIFY(w.loadPreset(QStringLiteral("default")));
        QVERIFY(playTo(w, usec(300), 10000));
        QVERIFY(w.seriesRows().empty()); // no sample yet
        TimePlot* iops = w.plotPanel()->plotOf(metricIndex("iops"));
        QVERIFY(iops);
        QCOMPARE(iops->pointCount(0), 2); // the interval's level from 0 to the clock
        const auto* data = iops->plot()->graph(0)->data().data();
        const double shownMs = static_cast<double>(w.runner()->snapshot()->now.ns()) / 1e6;
        QCOMPARE((data->constEnd() - 1)->key, shownMs);
        QCOMPARE((data->constEnd() - 1)->value, data->constBegin()->value);
        QVERIFY((data->constEnd() - 1)->value > 0);
        // Past the first sample the provisional point follows the real one, and is replaced. The
        // first interval keeps its level from t = 0: the curve starts at 0, not at the first sample.
        QVERIFY(playTo(w, usec(1500), 10000));
        QCOMPARE(w.seriesRows().size(), std::size_t(1));
        QCOMPARE(iops->pointCount(0), 3); // the first interval from 0 to 1 ms, then the interval so far
        const auto* sampled = iops->plot()->graph(0)->data().data();
        QCOMPARE(sampled->at(0)->key, 0.0);
        QCOMPARE(sampled->at(1)->key, 1.0);
        QCOMPARE(sampled->at(0)->value, sampled->at(1)->value);
        QVERIFY(sampled->at(1)->value > 0);
        // A curve at 0 (no remote completion with rq_affinity=0) is drawn above the axis, not on it.
        QVERIFY(w.applyOverrides({ "devices.nvme0.rq_affinity=0" }).isEmpty());
        QVERIFY(playTo(w, usec(2500), 10000));
        TimePlot* remote = w.plotPanel()->plotOf(metricIndex("remote_pct"));
        remote->replot(true);
        QCOMPARE(remote->plot()->graph(0)->data()->at(1)->value, 0.0);
        QVERIFY(remote->plot()->yAxis->range().lower < 0);
    }

    // Everything shown belongs to one time: an action's later steps (RESTART set 0.9 µs into the
    // dispatch that starts at 10 µs) wait in the log until the clock reaches them.
    void eventLogShowsNothingLaterThanTheClock()
    {
        MainWindow w;
        QVERIFY(w.loadPreset(QStringLiteral("shared-hctx-stall")));
        const auto latest = [&] {
            std::int64_t t = -1;
            for (int i = 0; i < w.eventLog()->rowCount(); ++i)
                t = std::max(t, w.eventLog()->record(i).time);
            return t;
        };
        const auto hasRestartSet = [&] {
            for (int i = 0; i < w.eventLog()->rowCount(); ++i)
                if (w.eventLog()->record(i).kind == TraceKind::RestartMark)
                    return true;
            return false;
        };
        QVERIFY(playTo(w, usec(9), 10000));
        QVERIFY(!hasRestartSet());
        w.runner()->stepUntil(stop::restartSet(0)); // the dispatch at 10 µs that marks it
        QVERIFY(QTest::qWaitFor([&] { return !w.runner()->busy(); }, 10000));
        w.frame();
        QCOMPARE(w.shownTimeNs(), usec(10).ns());
        QVERIFY(w.eventLog()->rowCount() > 0);
        QVERIFY2(latest() <= w.shownTimeNs(), qPrintable(QString::number(latest())));
        QVERIFY(hasRestartSet()); // what the run stopped at is on the log, stamped at the clock
        QVERIFY(playTo(w, usec(20), 10000));
        QVERIFY(latest() <= w.shownTimeNs());
    }

    // A CPU's busy share is over at least 50 µs of simulated time: stepping one event at a time, the
    // busy CPUs do not read 0% busy.
    void busySharesHoldWhileStepping()
    {
        MainWindow w;
        QVERIFY(w.loadPreset(QStringLiteral("default")));
        QVERIFY(playTo(w, usec(20), 10000));
        for (int i = 0; i < 3; ++i) {
            const auto before = w.runner()->snapshot()->events;
            w.step();
            QTRY_VERIFY_WITH_TIMEOUT(w.runner()->snapshot()->events > before && !w.runner()->busy(), 5000);
            w.frame();
            const QStringList captions = w.scene()->captions();
            QVERIFY(!captions.isEmpty());
            for (const QString& c : captions)
                if (c.startsWith(u"node"_qs))
                    QVERIFY2(!c.endsWith(u" 0% busy"_qs), qPrintable(c));
        }
    }

    // Presentation mode: full screen, the panels hidden, the canvas drawn larger; leaving it brings
    // back the panels that were shown (and only those). Hide panels alone leaves the screen as it is.
    void presentationModeGivesTheCanvasTheRoom()
    {
        MainWindow w;
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.loadPreset(QStringLiteral("shared-hctx-stall")));
        const auto shownDocks = [&] {
            QStringList shown;
            for (const QDockWidget* d : w.findChildren<QDockWidget*>())
                if (d->isVisible())
                    shown << d->objectName();
            shown.sort();
            return shown;
        };
        const QStringList before = shownDocks();
        QVERIFY(before.size() >= 3);
        w.presentation()->setPresenting(true);
        QTRY_VERIFY(w.windowState() & Qt::WindowFullScreen);
        QVERIFY(shownDocks().isEmpty());
        w.presentation()->setPresenting(false);
        QTRY_VERIFY(!(w.windowState() & Qt::WindowFullScreen));
        QCOMPARE(shownDocks(), before);
        // The room the panels leave goes to the canvas, which draws the machine larger (the offscreen
        // screen is smaller than the window, so this is measured without full screen).
        w.resize(1280, 800);
        QTRY_VERIFY(w.canvasView()->transform().m11() > 0);
        QTest::qWait(50);
        const double scaleBefore = w.canvasView()->transform().m11();
        w.presentation()->setPanelsHidden(true);
        QVERIFY(shownDocks().isEmpty());
        QVERIFY(!(w.windowState() & Qt::WindowFullScreen));
        QTRY_VERIFY(w.canvasView()->transform().m11() > 1.2 * scaleBefore);
        w.presentation()->setPanelsHidden(false);
        QCOMPARE(shownDocks(), before);
    }

    // At 1280x800 no text on the canvas is drawn under TopologyScene::kMinTextPx: a small machine
    // keeps its tiles' and hctxs' text, a big one gives it up for captions at that size, and the
    // machine fills the canvas, also once the stall banner has taken part of its height.
    void canvasTextIsReadableAtLectureSize()
    {
        MainWindow w;
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        const auto check = [&](const QString& preset, bool small) {
            QGraphicsView* view = w.canvasView();
            QTest::qWait(20); // the layout follows the canvas's size
            const std::vector<std::pair<QString, double>> texts = w.scene()->shownTexts();
            QVERIFY2(!texts.empty(), qPrintable(preset));
            for (const auto& [t, px] : texts)
                QVERIFY2(px >= TopologyScene::kMinTextPx - 0.01,
                    qPrintable(QStringLiteral("%1: '%2' is %3 px high").arg(preset, t).arg(px)));
            QCOMPARE(w.scene()->detailShown(), small);
            const auto named = [&](const QString& prefix) {
                return std::any_of(
                    texts.begin(), texts.end(), [&](const auto& t) { return t.first.startsWith(prefix); });
            };
            if (small)
                QVERIFY2(named(u"CPU 0"_qs) && named(u"hctx 0"_qs), qPrintable(preset));
            // Fit fills the canvas: the machine spans its width or its height, and most of its area.
            const QRectF drawn = view->mapFromScene(w.scene()->sceneRect()).boundingRect();
            const QSizeF room = view->viewport()->size();
            QVERIFY2(
                drawn.width() >= 0.97 * room.width() || drawn.height() >= 0.97 * room.height(), qPrintable(preset));
            const double filled = drawn.width() * drawn.height() / (room.width() * room.height());
            QVERIFY2(filled >= 0.5, qPrintable(QStringLiteral("%1 fills %2 of the canvas").arg(preset).arg(filled)));
        };
        for (const auto& [preset, small] : { std::pair { u"default"_qs, true }, { u"nullblk-shared-4dev"_qs, true },
                 { u"overstreet-full-tagspace"_qs, true }, { u"threadirqs-rt"_qs, false },
                 { u"restart-128x64"_qs, false }, { u"wagner-nvmefc-4s80"_qs, false } }) {
            QVERIFY(w.loadPreset(preset));
            QVERIFY(playTo(w, usec(100), 20000));
            check(preset, small);
        }
        // The stall banner takes the canvas's upper part: the machine is laid out again for the
        // lower, wider room, and keeps its text and the stuck request's frame.
        QVERIFY(w.loadPreset(u"shared-hctx-stall"_qs));
        const double before = w.canvasView()->viewport()->height();
        w.runner()->run();
        QTRY_VERIFY_WITH_TIMEOUT(w.canvasView()->viewport()->height() < 0.8 * before, 20000);
        w.frame();
        check(u"shared-hctx-stall, stalled"_qs, true);
    }

    // At 1280x800 every step of the stall lesson and of where-requests-complete shows its whole text,
    // "What holds here" included, without scrolling.
    void lessonTextIsWholeAtLectureSize()
    {
        MainWindow w;
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        for (const QString& lesson : { u"shared-hctx-stall"_qs, u"where-requests-complete"_qs }) {
            const auto loaded = Lesson::load(lesson.toStdString());
            QVERIFY(loaded);
            QVERIFY(w.openLesson(lesson).isEmpty());
            auto* text = w.lessonPanel()->findChild<QTextBrowser*>();
            QVERIFY(text);
            const int steps = static_cast<int>(loaded->steps().size());
            for (int step = 0; step < steps; ++step) {
                w.lessonPanel()->next();
                QTRY_COMPARE_WITH_TIMEOUT(w.lessonPanel()->current(), step, 20000);
                QTest::qWait(20);
                const QString where = QStringLiteral("%1 step %2").arg(lesson).arg(step + 1);
                QVERIFY2(text->verticalScrollBar()->maximum() == 0,
                    qPrintable(
                        QStringLiteral("%1 scrolls by %2 px").arg(where).arg(text->verticalScrollBar()->maximum())));
            }
        }
    }

    // Help → Keys and mouse (F1) lists every shortcut the window's actions have, read from them.
    void helpListsEveryShortcut()
    {
        MainWindow w;
        w.show();
        QAction* keys = nullptr;
        for (QAction* a : w.findChildren<QAction*>())
            if (a->shortcut() == QKeySequence(QKeySequence::HelpContents))
                keys = a;
        QVERIFY(keys);
        keys->trigger();
        const auto* sheet = w.findChild<QDialog*>(QStringLiteral("keySheet"));
        QVERIFY(sheet && sheet->isVisible());
        const QString text = sheet->findChild<QTextBrowser*>()->toPlainText();
        int listed = 0;
        for (const QAction* a : w.findChildren<QAction*>())
            for (const QKeySequence& k : a->shortcuts()) {
                QVERIFY2(text.contains(k.toString(QKeySequence::NativeText)), qPrintable(k.toString()));
                ++listed;
            }
        QVERIFY(listed >= 15);
        for (const char* what :
            { "Step back", "Add bookmark", "Next interesting", "Fit", "Switch to the other branch" })
            QVERIFY2(text.contains(QString::fromUtf8(what)), what);
    }

    void exportsAPerfettoTrace()
    {
        MainWindow w;
        QVERIFY(w.loadPreset(QStringLiteral("default")));
        QTemporaryDir dir;
        const QString path = dir.filePath(u"t.json"_qs);
        QVERIFY(!w.exportTrace(path).isEmpty()); // nothing run yet
        QVERIFY(playTo(w, usec(1500), 10000));
        QSignalSpy done(&w, &MainWindow::traceExported);
        QCOMPARE(w.exportTrace(path), QString());
        QTRY_COMPARE_WITH_TIMEOUT(done.size(), 1, 20000);
        QCOMPARE(done.front().at(1).toString(), QString());
        const QJsonObject doc = QJsonDocument::fromJson(head(path, 1 << 26)).object();
        // The same run as the window's, up to the time it shows.
        QCOMPARE(doc[u"otherData"_qs].toObject()[u"fingerprint"_qs].toString(),
            QString::fromStdString(w.runner()->snapshot()->fingerprint));
        int slices = 0, threads = 0;
        for (const auto& e : doc[u"traceEvents"_qs].toArray()) {
            slices += e.toObject()[u"ph"_qs].toString() == u"X"_qs;
            threads += e.toObject()[u"name"_qs].toString() == u"thread_name"_qs;
        }
        QVERIFY(slices > 100);
        QCOMPARE(threads, 8);
        QVERIFY(!w.exportTrace(u"/nonexistent/t.json"_qs).isEmpty());
    }

    void compareOverSeedsSaysWhatDiffers()
    {
        MainWindow w;
        QVERIFY(w.loadPreset(QStringLiteral("default"), { "duration=\"3ms\"" }));
        QVERIFY(!w.compareOverSeeds(4).isEmpty()); // no B yet
        QVERIFY(w.compareWith({ "kernel.patches.complete-llist=true" }).isEmpty());
        QSignalSpy done(&w, &MainWindow::seedsCompared);
        QCOMPARE(w.compareOverSeeds(4), QString());
        QTRY_COMPARE_WITH_TIMEOUT(done.size(), 1, 60000);
        const QString text = w.seedsTable()->text();
        QVERIFY2(text.contains(u"<b>4 seeds</b> (1 to 4)"_qs), qPrintable(text));
        // the llist patch's fewer IPIs differ on every seed; the p99 latency does not
        const auto row = [&](const QString& label) {
            const auto at = text.indexOf(u"<td width='30%'>"_qs + label + u"</td>"_qs);
            return at < 0 ? QString() : text.mid(at, text.indexOf(u"</tr>"_qs, at) - at);
        };
        QVERIFY2(row(u"IPIs"_qs).contains(u"title='differs'"_qs), qPrintable(row(u"IPIs"_qs)));
        QVERIFY(!row(u"p99 latency"_qs).isEmpty());
        QVERIFY(!row(u"p99 latency"_qs).contains(u"title='differs'"_qs));
    }

    void plotsInAGrid()
    {
        PlotPanel panel;
        panel.resize(1200, 900); // wide enough for two columns
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        auto* grid = qobject_cast<QGridLayout*>(panel.plots().front()->parentWidget()->layout());
        QVERIFY(grid);
        const auto cellOf = [grid](QWidget* w) {
            int row = -1, col = -1, rs = 0, cs = 0;
            grid->getItemPosition(grid->indexOf(w), &row, &col, &rs, &cs);
            return QPoint(col, row);
        };
        QCOMPARE(cellOf(panel.plots()[1]), QPoint(0, 1)); // one column
        panel.setColumns(2);
        QCOMPARE(cellOf(panel.plots()[1]), QPoint(1, 0));
        QCOMPARE(cellOf(panel.plots()[2]), QPoint(0, 1));
        panel.setPlotVisible(0, false); // no hole where a hidden plot was
        QCOMPARE(cellOf(panel.plots()[1]), QPoint(0, 0));
        QCOMPARE(cellOf(panel.plots()[2]), QPoint(1, 0));
    }

    void bigMachinesAreAggregated()
    {
        MainWindow w;
        // 128 devices: one box per tag set with its totals, not 16 of them and "+112 more".
        QVERIFY(w.loadPreset(QStringLiteral("restart-128x64")));
        QVERIFY(playTo(w, usec(200), 20000));
        QStringList captions = w.scene()->captions();
        const auto devices = captions.filter(u"128 devices, ibnbd0 to ibnbd127 (8192 hctx)"_qs);
        QCOMPARE(devices.size(), 1);
        QVERIFY2(devices.front().contains(u" at the device"_qs), qPrintable(devices.front()));
        int atDevice = 0;
        for (const HctxSnapshot& h : w.runner()->snapshot()->hctxs)
            atDevice += h.atDevice;
        QVERIFY2(
            devices.front().contains(QStringLiteral("%1 at the device").arg(atDevice)), qPrintable(devices.front()));
        // Zoomed out, a CPU's own text gives way to its node's totals, which stay readable.
        w.scene()->setViewScale(0.3);
        QVERIFY(!w.scene()->detailShown());
        captions = w.scene()->captions();
        QVERIFY2(!captions.filter(u"node 0\n32 CPUs, "_qs).isEmpty(), qPrintable(captions.join(u" | "_qs)));
        w.scene()->setViewScale(1.0);
        QVERIFY(w.scene()->detailShown());
        // A small machine keeps its detail at any scale (a teacher zooms out, the names stay).
        QVERIFY(w.loadPreset(QStringLiteral("shared-hctx-stall")));
        w.scene()->setViewScale(0.3);
        QVERIFY(w.scene()->detailShown());
    }

    void nextInterestingStopsWhereTheStallIsMade()
    {
        // RESTART set at 0.010 ms, and the early return of blk_mq_sched_restart() at 0.101 ms: both stop it.
        MainWindow w;
        QVERIFY(w.loadPreset(QStringLiteral("shared-hctx-stall")));
        std::vector<std::int64_t> stops;
        for (int i = 0; i < 12 && (stops.empty() || stops.back() < 101010); ++i) {
            const auto before = w.runner()->snapshot()->events;
            w.stepToInteresting();
            QTRY_VERIFY_WITH_TIMEOUT(w.runner()->snapshot()->events != before && !w.runner()->busy(), 5000);
            stops.push_back(w.runner()->snapshot()->now.ns());
        }
        QVERIFY(std::find(stops.begin(), stops.end(), 10000) != stops.end());
        QVERIFY(std::find(stops.begin(), stops.end(), 101010) != stops.end());
        // The status line says where it stopped and why: at 0.010 ms, RESTART was set.
        QVERIFY(w.loadPreset(QStringLiteral("shared-hctx-stall")));
        w.show();
        w.statusBar()->clearMessage(); // the first run's last stop is not this one's
        // The new run is in place (its snapshot at t = 0) before the first step.
        QTRY_VERIFY_WITH_TIMEOUT(!w.runner()->busy() && w.runner()->snapshot()->now.ns() == 0, 5000);
        while (w.runner()->snapshot()->now.ns() < 10000) {
            w.stepToInteresting();
            QTRY_VERIFY_WITH_TIMEOUT(
                w.statusBar()->currentMessage().startsWith(u"Next interesting: "_qs) && !w.runner()->busy(), 5000);
            if (w.runner()->snapshot()->now.ns() < 10000)
                w.statusBar()->clearMessage();
        }
        QCOMPARE(w.statusBar()->currentMessage(), u"Next interesting: stopped at t = 10.000 µs: RESTART was set"_qs);
    }

    void lessonPlaysInTheWindow()
    {
        MainWindow w;
        w.show();
        QVERIFY(w.openLesson(QStringLiteral("shared-hctx-stall")).isEmpty());
        LessonPanel* p = w.lessonPanel();
        QCOMPARE(p->current(), -1);
        for (int step = 0; step < 8; ++step) {
            p->next();
            QTRY_COMPARE_WITH_TIMEOUT(p->current(), step, 10000);
            QVERIFY2(p->failed() == 0, qPrintable(QString::number(step)));
        }
        // Step 8 is D's free: queue B's counter is 0 and blk_mq_sched_restart() returned at once.
        QCOMPARE(w.runner()->snapshot()->counters.restart_skips, std::uint64_t(1));
        QVERIFY(w.timelineBar()->marks() >= 7); // each step reached is on the timeline (some share a time)
        QVERIFY(p->held() >= 3);
        p->back(); // back: the scenario is rebuilt and played to step 7, the same state as before
        QTRY_COMPARE_WITH_TIMEOUT(p->current(), 6, 10000);
        QCOMPARE(p->failed(), 0);
        QCOMPARE(w.runner()->snapshot()->counters.restart_skips, std::uint64_t(0));
        QCOMPARE(w.runner()->snapshot()->counters.restarts, std::uint64_t(1));
        p->next();
        p->next();
        QTRY_COMPARE_WITH_TIMEOUT(p->current(), 7, 10000);
        p->next();
        QTRY_COMPARE_WITH_TIMEOUT(p->current(), 8, 10000);
        QVERIFY(w.stalled()); // the banner tells the stall the step runs to
        QCOMPARE(p->failed(), 0);
        p->next(); // the fix: a fresh scenario with Roman's counter
        QTRY_COMPARE_WITH_TIMEOUT(p->current(), 9, 10000);
        QCOMPARE(p->failed(), 0);
        QVERIFY(!w.stalled());
        QCOMPARE(w.runner()->scenario().kernel.restart, std::string("rr-shared-tags-counter"));
    }

    // Every step of every built-in lesson: what it points at is on the canvas (a box, or the token
    // of the request it names), the event it runs until is on the log at the step's time, and an
    // IPI it stops at is drawn as an arc that stays while the step is read.
    void everyLessonStepShowsWhatItSays()
    {
        MainWindow w;
        w.show();
        int events = 0, arcs = 0, pointers = 0;
        for (const auto& info : Lesson::builtin()) {
            QVERIFY(w.openLesson(QString::fromStdString(info.name)).isEmpty());
            LessonPanel* p = w.lessonPanel();
            const auto lesson = Lesson::load(info.name);
            QVERIFY(lesson.ok());
            for (int step = 0; step < lesson->size(); ++step) {
                const LessonStep& s = lesson->steps()[static_cast<std::size_t>(step)];
                const QString where = QStringLiteral("%1 step %2").arg(QString::fromStdString(info.name)).arg(step + 1);
                p->next();
                QTRY_VERIFY2_WITH_TIMEOUT(p->current() == step && !w.runner()->busy(), qPrintable(where), 30000);
                w.frame();
                const auto snap = w.runner()->snapshot();
                for (const LessonHighlight& h : s.highlights) {
                    ObjectRef object = h.object;
                    if (object.kind == ObjectRef::Kind::Request) {
                        const auto& script = w.runner()->scenario().script;
                        const auto it = std::find_if(snap->requests.begin(), snap->requests.end(), [&](const auto& r) {
                            return r.script >= 0 && script[static_cast<std::size_t>(r.script)].id == h.request;
                        });
                        QVERIFY2(it != snap->requests.end(), qPrintable(where + u": no request "_qs + q(h.request)));
                        object.index = it->id;
                    }
                    QVERIFY2(w.scene()->draws(object), qPrintable(where + u": "_qs + q(h.text) + u" is not drawn"_qs));
                    ++pointers;
                }
                std::string kind = s.until.rfind("event:", 0) == 0 ? s.until.substr(6)
                    : s.until.rfind("restart-set:", 0) == 0        ? "restart-mark"
                    : s.until == "counter:ipis"                    ? "ipi-send"
                    : s.until == "counter:tag_steals"              ? "tag-steal"
                                                                   : "";
                if (kind.empty())
                    continue;
                const TraceRecord* found = nullptr;
                for (int row = 0; row < w.eventLog()->rowCount(); ++row)
                    if (traceKindName(w.eventLog()->record(row).kind).id == kind)
                        found = &w.eventLog()->record(row);
                QVERIFY2(found, qPrintable(where + u": no "_qs + q(kind) + u" on the log"_qs));
                QVERIFY2(found->time == w.shownTimeNs(), qPrintable(where));
                ++events;
                if (kind != "ipi-send")
                    continue;
                const int from = found->cpu, to = found->arg;
                QVERIFY2(w.scene()->drawsIpiArc(from, to), qPrintable(where));
                QTest::qWait(600); // longer than an arc lasts while a run plays
                w.frame();
                QVERIFY2(w.scene()->drawsIpiArc(from, to), qPrintable(where + u": the arc went"_qs));
                ++arcs;
            }
        }
        QCOMPARE(events, 12);
        QCOMPARE(arcs, 2);
        QVERIFY(pointers >= 29);
    }

    // A lesson step shows the plots it names and gives the rest of the room away; a scenario loaded
    // after it shows every plot the View menu has on again.
    // A lesson step's text holds at its time; once the run has gone on, the panel says so.
    void lessonPanelSaysWhenTheRunMovedOn()
    {
        MainWindow w;
        w.show();
        QVERIFY(w.openLesson(QStringLiteral("shared-hctx-stall")).isEmpty());
        w.lessonPanel()->next();
        QTRY_COMPARE_WITH_TIMEOUT(w.lessonPanel()->current(), 0, 20000);
        w.frame();
        QVERIFY(!w.lessonPanel()->movedOn());
        QVERIFY(playTo(w, usec(50), 10000));
        QVERIFY(w.lessonPanel()->movedOn());
        // Next from there plays step 2 from its scenario's start, not from where the run went: the
        // same state as step 2 played straight after step 1.
        MainWindow straight;
        QVERIFY(straight.openLesson(QStringLiteral("shared-hctx-stall")).isEmpty());
        straight.lessonPanel()->next();
        QTRY_COMPARE_WITH_TIMEOUT(straight.lessonPanel()->current(), 0, 20000);
        straight.lessonPanel()->next();
        QTRY_COMPARE_WITH_TIMEOUT(straight.lessonPanel()->current(), 1, 20000);
        w.lessonPanel()->next();
        QTRY_COMPARE_WITH_TIMEOUT(w.lessonPanel()->current(), 1, 20000);
        QTRY_VERIFY_WITH_TIMEOUT(!w.runner()->busy() && !straight.runner()->busy(), 20000);
        QCOMPARE(w.runner()->snapshot()->fingerprint, straight.runner()->snapshot()->fingerprint);
        QCOMPARE(w.runner()->snapshot()->events, straight.runner()->snapshot()->events);
        w.frame();
        QVERIFY(!w.lessonPanel()->movedOn());
        w.lessonPanel()->replay();
        QTRY_VERIFY_WITH_TIMEOUT(!w.runner()->busy() && w.lessonPanel()->current() == 1, 20000);
        w.frame();
        QVERIFY(!w.lessonPanel()->movedOn());
    }

    void lessonStepsShowTheirPlots()
    {
        MainWindow w;
        w.resize(1280, 800);
        w.show();
        const auto shownTitles = [&] {
            QStringList shown;
            for (TimePlot* p : w.plotPanel()->plots())
                if (!p->isHidden())
                    shown << p->title();
            return shown;
        };
        const int all = static_cast<int>(w.plotPanel()->plots().size());
        QCOMPARE(shownTitles().size(), all);
        QVERIFY(w.openLesson(QStringLiteral("where-requests-complete")).isEmpty());
        w.lessonPanel()->next();
        QTRY_COMPARE_WITH_TIMEOUT(w.lessonPanel()->current(), 0, 20000);
        QCOMPARE(shownTitles(),
            (QStringList { u"Throughput"_qs, u"Latency, submission to reap"_qs, u"Remote completions"_qs,
                u"IPIs, softirq raises, ksoftirqd wake-ups"_qs }));
        QVERIFY(!w.plotPanel()->isHidden());
        // The stall lesson's steps last microseconds: no plot, and the canvas takes the panel's room.
        const int canvasBefore = w.findChild<QGraphicsView*>()->width();
        QVERIFY(w.openLesson(QStringLiteral("shared-hctx-stall")).isEmpty());
        w.lessonPanel()->next();
        QTRY_COMPARE_WITH_TIMEOUT(w.lessonPanel()->current(), 0, 20000);
        QVERIFY(w.plotPanel()->isHidden());
        QTRY_VERIFY(w.findChild<QGraphicsView*>()->width() > canvasBefore);
        // A session saved here keeps no plot hidden: the lesson step decides, not the View menu.
        const QString file = QDir(QDir::tempPath()).filePath(u"lesson-plots.blkmqlab"_qs);
        QVERIFY(w.saveSession(file).isEmpty());
        QFile saved(file);
        QVERIFY(saved.open(QIODevice::ReadOnly));
        QVERIFY(saved.readAll().contains("\"plots_hidden\": []"));
        QVERIFY(w.loadPreset(QStringLiteral("default")));
        QVERIFY(!w.plotPanel()->isHidden());
        QCOMPARE(shownTitles().size(), all);
        QFile::remove(file);
    }

    // A step title wider than the lesson dock (at 1280x800 under a real X server): the box shows it
    // with an ellipsis, its list opens wide enough for every title whole, and each item's tooltip is
    // the whole title.
    void lessonTitlesStayWhole()
    {
        MainWindow w;
        w.resize(1280, 800);
        w.show();
        QVERIFY(w.openLesson(QStringLiteral("shared-hctx-stall")).isEmpty());
        const auto boxes = w.lessonPanel()->findChildren<QComboBox*>();
        QCOMPARE(boxes.size(), 2);
        QComboBox* steps = boxes[1];
        QVERIFY(steps->count() > 5);
        int widest = 0;
        for (int i = 0; i < steps->count(); ++i)
            widest = std::max(widest, steps->view()->fontMetrics().horizontalAdvance(steps->itemText(i)));
        for (int i = 1; i < steps->count(); ++i)
            QCOMPARE(steps->itemData(i, Qt::ToolTipRole).toString(), steps->itemText(i));
        steps->setFixedWidth(widest / 2); // as narrow as a dock at 1280x800 under a real X server
        steps->showPopup();
        QTRY_VERIFY(steps->view()->isVisible());
        QVERIFY2(steps->view()->width() >= widest, qPrintable(QString::number(steps->view()->width())));
        steps->hidePopup();
    }

    // Choosing a lesson from the panel's list shows the machine its text describes (step 1's
    // scenario at t = 0), not the one on screen before; the list is numbered in course order.
    void choosingALessonShowsItsMachine()
    {
        MainWindow w;
        w.show();
        QVERIFY(w.loadPreset(QStringLiteral("default")));
        QVERIFY(w.runner()->scenario().devices.size() < 128);
        auto* choice = w.lessonPanel()->findChild<QComboBox*>();
        QVERIFY(choice);
        QVERIFY(choice->itemText(1).startsWith(QStringLiteral("1. ")));
        const int i = choice->findData(QStringLiteral("restart-walk-cost"));
        QVERIFY(i > 1);
        QVERIFY(choice->itemText(i).startsWith(QStringLiteral("%1. ").arg(i)));
        choice->setCurrentIndex(i);
        emit choice->activated(i);
        QCOMPARE(w.lessonPanel()->lesson()->name(), std::string("restart-walk-cost"));
        const auto first = w.lessonPanel()->lesson()->scenarioOf(0);
        QVERIFY(first.ok());
        QCOMPARE(w.runner()->scenario().devices.size(), first->devices.size());
        QCOMPARE(w.runner()->scenario().kernel.restart, first->kernel.restart);
        QCOMPARE(w.runner()->snapshot()->events, std::uint64_t(0));
        QVERIFY(!w.runner()->isRunning());
    }

    // "In two columns" shows as many columns as fit at the plots' minimum width: a narrow panel
    // keeps one, a wide one gets two, and no plot is ever cut off at the right.
    void twoColumnPlotsNeverClipAColumn()
    {
        PlotPanel panel;
        panel.setColumns(2);
        const auto checkNothingClipped = [&] {
            for (TimePlot* p : panel.plots()) {
                const QWidget* viewport = p->parentWidget()->parentWidget();
                const QPoint right = p->mapTo(viewport, QPoint(p->width(), 0));
                QVERIFY2(right.x() <= viewport->width(), qPrintable(p->title()));
            }
        };
        panel.resize(420, 900);
        panel.show();
        QTRY_COMPARE(panel.shownColumns(), 1);
        checkNothingClipped();
        panel.resize(1200, 900);
        QTRY_COMPARE(panel.shownColumns(), 2);
        QTRY_VERIFY(panel.plots()[1]->x() > panel.plots()[0]->x()); // side by side
        checkNothingClipped();
        panel.resize(420, 900);
        QTRY_COMPARE(panel.shownColumns(), 1);
        checkNothingClipped();
        panel.setColumns(1);
        panel.resize(1200, 900);
        QTRY_COMPARE(panel.shownColumns(), 1);
    }

    // A screenshot taken in the same turn of the event loop as the samples it shows draws the plots
    // with them (--lesson NAME:STEP --screenshot takes it as soon as the step is reached): each plot
    // in the picture is the plot as it looks once every queued redraw has run.
    void screenshotShowsThePlotsAtItsTime()
    {
        MainWindow w;
        w.resize(1280, 800);
        w.show();
        QVERIFY(w.loadPreset(QStringLiteral("default")));
        QVERIFY(playTo(w, msec(1), 20000));
        QTest::qWait(100);
        // The next 2 ms arrive without the event loop running, then the screenshot at once.
        w.runner()->stepUntil(stop::at(msec(3)));
        for (int i = 0; i < 2000 && (w.runner()->busy() || w.runner()->simulatedNs() < msec(3).ns()); ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        QCOMPARE(w.runner()->simulatedNs(), msec(3).ns());
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("shot.png"));
        QCOMPARE(w.saveScreenshot(path), QString());
        QTest::qWait(200);
        const QImage shot(path);
        QVERIFY(!shot.isNull());
        int compared = 0;
        for (TimePlot* p : w.plotPanel()->plots()) {
            const QWidget* viewport = p->parentWidget()->parentWidget(); // the plot panel's scroll area
            if (!p->isVisible() || !viewport->rect().contains(QRect(p->mapTo(viewport, QPoint(0, 0)), p->size())))
                continue; // only the plots wholly in view
            const QRect r(p->mapTo(&w, QPoint(0, 0)), p->size());
            const QImage settled = p->grab().toImage().convertToFormat(QImage::Format_RGB32);
            QCOMPARE(shot.copy(r).convertToFormat(QImage::Format_RGB32), settled);
            ++compared;
        }
        QVERIFY(compared >= 2);
    }

    // Save -> open round-trips a run with a live patch switch, a bookmark, a lesson-free view and a
    // hidden plot: the opened window stands at the same time, event and fingerprint as the headless
    // replay. Step back goes to exactly one event earlier. A session that diverges changes nothing.
    // blkmqlab-cli check's shortest counterexample, as a session: the window opens it at the stall,
    // the banner's steps explaining it, the same run as headless.
    void checkCounterexampleOpensAtTheStall()
    {
        const auto scenario = ScenarioLoader::fromPreset("check-shared-hctx");
        QVERIFY(scenario.ok());
        const CheckResult r = ModelChecker(*scenario, CheckProperty::NoStall, {}).run();
        QCOMPARE(int(r.verdict), int(CheckResult::Verdict::Violated));
        const auto cx = ScenarioLoader::fromText(r.counterexampleJson, "cx");
        QVERIFY(cx.ok());
        Engine at(*cx);
        while (at.events() < r.violationEvents && at.step()) { }
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("cx.blkmqlab"));
        QFile out(path);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(QByteArray::fromStdString(Session::of(at, cx->sourceJson).toText()));
        out.close();

        MainWindow w;
        w.show();
        QSignalSpy opened(&w, &MainWindow::sessionOpened);
        QCOMPARE(w.openSession(path), QString());
        QTRY_COMPARE_WITH_TIMEOUT(opened.size(), 1, 20000);
        const auto snap = w.runner()->snapshot();
        QVERIFY(snap->stalled);
        QCOMPARE(snap->events, r.violationEvents);
        QCOMPARE(snap->fingerprint, at.fingerprint());
        QTRY_VERIFY_WITH_TIMEOUT(w.stallBanner()->isVisible(), 5000);
        QVERIFY(w.stallBanner()->text().contains(QStringLiteral("shared_hctx_restart was 0")));
        QVERIFY(w.stallSteps().size() >= 3);
    }

    // A session keeps run B beside A: opened, B runs with its kernel settings again and stands at
    // A's time; a session without it turns the comparison off.
    void sessionsKeepTheComparison()
    {
        MainWindow w;
        w.show();
        QVERIFY(w.loadPreset(QStringLiteral("default"), { "duration=\"2ms\"" }));
        QVERIFY(w.compareWith({ "kernel.patches.complete-llist=true" }).isEmpty());
        QVERIFY(playTo(w, usec(600), 20000));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("ab.blkmqlab"));
        QCOMPARE(w.saveSession(path), QString());
        auto read = Session::fromFile(path.toStdString());
        QVERIFY(read.ok());
        QVERIFY(read->view.contains("compare"));

        MainWindow other;
        other.show();
        QVERIFY(!other.runnerB());
        QSignalSpy opened(&other, &MainWindow::sessionOpened);
        QCOMPARE(other.openSession(path), QString());
        QTRY_COMPARE_WITH_TIMEOUT(opened.size(), 1, 20000);
        QVERIFY(other.runnerB());
        QVERIFY(other.runnerB()->scenario().kernel.patches.llist);
        QVERIFY(!other.runner()->scenario().kernel.patches.llist);
        QTRY_VERIFY_WITH_TIMEOUT(!other.runnerB()->isRunning() && !other.runnerB()->busy()
                && other.runnerB()->snapshot()->now == other.runner()->snapshot()->now,
            20000);
        // Run on: B follows A again at A's speed.
        other.setSpeed(0);
        other.runOrPause();
        const auto where = [&other] {
            return QStringLiteral("A at %1 ns (%2), B at %3 ns (%4)")
                .arg(other.runner()->simulatedNs())
                .arg(QLatin1String(other.runner()->isRunning() ? "running" : "paused"))
                .arg(other.runnerB()->simulatedNs())
                .arg(QLatin1String(other.runnerB()->isRunning() ? "running" : "paused"));
        };
        QTRY_VERIFY2_WITH_TIMEOUT(other.runnerB()->simulatedNs() > usec(900).ns(), qPrintable(where()), 20000);
        other.runOrPause();

        // A session that compared nothing: the comparison goes.
        w.setCompare(false);
        QCOMPARE(w.saveSession(path), QString());
        QCOMPARE(other.openSession(path), QString());
        QTRY_COMPARE_WITH_TIMEOUT(opened.size(), 2, 20000);
        QVERIFY(!other.runnerB());
    }

    void sessionsSaveOpenAndStepBack()
    {
        MainWindow w;
        w.show();
        QVERIFY(w.loadPreset(QStringLiteral("default"), { "duration=\"2ms\"" }));
        QVERIFY(playTo(w, usec(300), 20000));
        w.patchPanel()->patchBox("complete-llist")->setChecked(true);
        QVERIFY(playTo(w, usec(700), 20000));
        w.addBookmark(QStringLiteral("after the switch"));
        w.plotPanel()->plots()[2]->hide();
        QCOMPARE(w.inspect(QStringLiteral("cpu:1")), QString()); // the view: what is inspected, the zoom
        w.fitCanvas();
        w.zoomCanvas(1.5625);

        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("s.blkmqlab"));
        QCOMPARE(w.saveSession(path), QString());
        const auto saved = w.runner()->snapshot();
        auto read = Session::fromFile(path.toStdString());
        QVERIFY2(read.ok(), read.ok() ? "" : read.error().c_str());
        QCOMPARE(read->commands.size(), std::size_t(1));
        auto headless = read->replay();
        QVERIFY(headless.ok());
        QCOMPARE((*headless)->fingerprint(), saved->fingerprint);

        MainWindow other;
        other.show();
        QSignalSpy opened(&other, &MainWindow::sessionOpened);
        QCOMPARE(other.openSession(path), QString());
        QTRY_COMPARE_WITH_TIMEOUT(opened.size(), 1, 20000);
        QCOMPARE(opened.front().front().toString(), QString());
        QCOMPARE(other.runner()->snapshot()->fingerprint, saved->fingerprint);
        QCOMPARE(other.runner()->snapshot()->events, saved->events);
        QCOMPARE(other.shownTimeNs(), saved->now.ns());
        QCOMPARE(other.bookmarks().size(), std::size_t(1));
        QCOMPARE(other.bookmarks().front().note, std::string("after the switch"));
        // The switch is in force again, and the patch panel shows it.
        QCOMPARE(
            nlohmann::json::parse(other.runner()->liveScenarioJson())["kernel"]["patches"]["complete-llist"], true);
        QVERIFY(other.plotPanel()->plots()[2]->isHidden());
        QCOMPARE(int(other.selection().kind), int(ObjectRef::Kind::Cpu));
        QCOMPARE(other.selection().index, 1);
        QVERIFY(std::abs(other.canvasView()->transform().m11() - w.canvasView()->transform().m11()) < 1e-9);
        QVERIFY(nlohmann::json::parse(read->toText())["view"].contains("center"));
        QVERIFY(other.seriesRows().size() == w.seriesRows().size());

        // Step back: one event earlier, as a fresh engine with the same switch gets there.
        const std::uint64_t n = other.runner()->snapshot()->events;
        other.stepBack();
        QTRY_COMPARE_WITH_TIMEOUT(opened.size(), 2, 20000);
        QCOMPARE(other.runner()->snapshot()->events, n - 1);
        auto oneBack = read->replayToEvent(n - 1);
        QVERIFY(oneBack.ok());
        QCOMPARE(other.runner()->snapshot()->fingerprint, (*oneBack)->fingerprint());
        other.runOrPause(); // and on from there
        QTRY_VERIFY_WITH_TIMEOUT(other.runner()->snapshot()->events > n + 100, 20000);
        other.runOrPause();

        // A session whose replay does not match: refused, the window as it was.
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QByteArray text = f.readAll();
        f.close();
        text.replace("\"fingerprint\": \"", "\"fingerprint\": \"0");
        const QString bad = dir.filePath(QStringLiteral("bad.blkmqlab"));
        QFile b(bad);
        QVERIFY(b.open(QIODevice::WriteOnly));
        b.write(text);
        b.close();
        const auto before = other.runner()->snapshot();
        QCOMPARE(other.openSession(bad), QString()); // it reads; its replay fails
        QTRY_COMPARE_WITH_TIMEOUT(opened.size(), 3, 20000);
        QVERIFY(opened.back().front().toString().contains(QStringLiteral("the replay diverged")));
        QCOMPARE(other.runner()->snapshot()->fingerprint, before->fingerprint);
        QCOMPARE(other.runner()->snapshot()->events, before->events);
        QVERIFY(
            other.openSession(dir.filePath(QStringLiteral("none.blkmqlab"))).contains(QStringLiteral("none.blkmqlab")));

        // The CSV's markers column holds the bookmark in its interval (once the run has sampled it).
        QVERIFY(playTo(w, msec(2), 20000));
        QTemporaryDir csvDir;
        QCOMPARE(w.exportCsv(csvDir.filePath(u"b.csv"_qs)), QString());
        QFile bCsv(csvDir.filePath(u"b.csv"_qs));
        QVERIFY(bCsv.open(QIODevice::ReadOnly));
        QVERIFY(QString::fromUtf8(bCsv.readAll()).contains(u"★ after the switch"_qs));
    }

    // The timeline: a move back shows the run as it was then; a move forward within what the run
    // reached makes its later switches again; running on from a point gone back to is the same run;
    // a switch there starts a new branch and drops what came after. Each matches a headless replay.
    void timelineMovesAlongTheRun()
    {
        MainWindow w;
        w.show();
        QVERIFY(w.loadPreset(QStringLiteral("default"), { "duration=\"4ms\"" }));
        TimelineBar* bar = w.timelineBar();
        QCOMPARE(bar->reached(), std::int64_t(0));
        QVERIFY(playTo(w, usec(500), 20000));
        w.patchPanel()->patchBox("complete-llist")->setChecked(true);
        QVERIFY(playTo(w, usec(1200), 20000));
        w.patchPanel()->patchBox("complete-llist")->setChecked(false);
        QVERIFY(playTo(w, usec(2000), 20000));
        const std::int64_t end = w.shownTimeNs();
        QCOMPARE(bar->reached(), end);
        QCOMPARE(bar->marks(), 2);
        const Session full = w.runner()->timeline();
        QCOMPARE(full.commands.size(), std::size_t(2));
        const auto llist = [&] {
            return nlohmann::json::parse(w.runner()->liveScenarioJson())["kernel"]["patches"]["complete-llist"]
                .get<bool>();
        };
        QSignalSpy moved(&w, &MainWindow::sessionOpened);
        const auto moveTo = [&](std::int64_t ns) {
            const auto before = moved.size();
            w.seekTo(ns);
            return QTest::qWaitFor([&] { return moved.size() > before; }, 20000)
                && moved.back().front().toString().isEmpty();
        };
        const auto headless = [&](std::int64_t ns) {
            auto e = full.replayTo(SimTime(ns));
            if (!e)
                qFatal("replay: %s", e.error().c_str());
            return (*e)->fingerprint();
        };

        QVERIFY(moveTo(1000000)); // back, between the two switches
        QCOMPARE(w.shownTimeNs(), std::int64_t(1000000));
        QCOMPARE(w.runner()->snapshot()->fingerprint, headless(1000000));
        // The log and the plots show that time: the log reaches close to it (the window takes the
        // trace a bounded batch per frame) and holds nothing of the run after it (a row is stamped
        // with its action's end, which may lie a little past the clock).
        const auto lastRow
            = [&] { return w.eventLog()->rowCount() ? w.eventLog()->record(w.eventLog()->rowCount() - 1).time : -1; };
        QTRY_VERIFY_WITH_TIMEOUT((w.frame(), lastRow() > 900000), 5000);
        QVERIFY(lastRow() < 1050000);
        const auto then = full.replayTo(SimTime(1000000));
        QVERIFY(then.ok());
        QCOMPARE(w.seriesRows().size(), (*then)->series().rows().size()); // the samples up to then, no later
        QVERIFY(w.seriesRows().empty() || w.seriesRows().back().t_ns <= 1000000);
        // The plots still draw the whole run to where it reached, each sample once, with a cursor at
        // the time shown.
        TimePlot* iops = w.plotPanel()->plotOf(metricIndex("iops"));
        const auto* points = iops->plot()->graph(0)->data().data();
        QCOMPARE((points->constEnd() - 1)->key, static_cast<double>(end) / 1e6);
        QCOMPARE(points->size(), full.replay().value()->series().rows().size() + 1); // and t = 0
        QCOMPARE(iops->cursor(), 1.0);
        QCOMPARE(llist(), true);
        QCOMPARE(bar->reached(), end); // the run ahead is still there
        QCOMPARE(bar->marks(), 2);
        QCOMPARE(bar->shown(), std::int64_t(1000000));

        QVERIFY(moveTo(1500000)); // forward, past the second switch
        QCOMPARE(w.runner()->snapshot()->fingerprint, headless(1500000));
        QCOMPARE(llist(), false);

        // By the mouse, on the bar, back to about 0.5 ms.
        const auto before = moved.size();
        QTest::mouseClick(bar, Qt::LeftButton, {}, QPoint(bar->xOf(500000), bar->height() / 2));
        QVERIFY(QTest::qWaitFor([&] { return moved.size() > before; }, 20000));
        QVERIFY(std::abs(w.shownTimeNs() - 500000) < 4000000 / std::max(1, bar->width() / 2));
        QCOMPARE(w.runner()->snapshot()->fingerprint, headless(w.shownTimeNs()));

        // Run on from 1 ms: the second switch is made again where it was, the same run to the end.
        QVERIFY(moveTo(1000000));
        w.setPauseAt(SimTime(end));
        w.runOrPause();
        QTRY_VERIFY_WITH_TIMEOUT(w.shownTimeNs() == end && !w.runner()->isRunning(), 20000);
        w.setPauseAt(SimTime(-1));
        QCOMPARE(llist(), false);
        QCOMPARE(w.runner()->snapshot()->fingerprint, headless(end));
        QCOMPARE(iops->cursor(), -1.0); // at the run's end again: no cursor

        // A run to a stop condition (Next interesting, a step to a time) from a point gone back to is
        // the same run too: the switch after it is made again where it was, and no branch starts.
        const auto course = [&](std::uint64_t events) { // the run to that many events, headless
            auto e = full.replayToEvent(events);
            if (!e)
                qFatal("replay: %s", e.error().c_str());
            return (*e)->fingerprint();
        };
        QVERIFY(moveTo(1000000));
        QVERIFY(playTo(w, usec(1500), 20000));
        QCOMPARE(llist(), false);
        QVERIFY(!w.runner()->hasOtherBranch());
        QCOMPARE(w.runner()->snapshot()->fingerprint, course(w.runner()->snapshot()->events));
        QCOMPARE(bar->reached(), end);
        QVERIFY(moveTo(1000000));
        w.stepToInteresting();
        QTRY_VERIFY_WITH_TIMEOUT(!w.runner()->busy() && w.shownTimeNs() > 1000000, 20000);
        QVERIFY(!w.runner()->hasOtherBranch());
        QCOMPARE(w.runner()->snapshot()->fingerprint, course(w.runner()->snapshot()->events));

        // A switch at a point gone back to: a new branch; the mark after it and the run ahead go.
        QVERIFY(moveTo(1000000));
        QSignalSpy branched(w.runner(), &EngineRunner::branched);
        w.patchPanel()->patchBox("complete-local-bh")->setChecked(true);
        QTRY_COMPARE_WITH_TIMEOUT(branched.size(), 1, 5000);
        w.frame();
        QCOMPARE(bar->reached(), std::int64_t(1000000));
        QCOMPARE(bar->marks(), 2); // the first switch and this one
        QVERIFY((iops->plot()->graph(0)->data()->constEnd() - 1)->key <= 1.0); // the plots lose the old course
        QCOMPARE(w.runner()->timeline().commands.size(), std::size_t(2));
        QVERIFY(w.runner()->hasOtherBranch());
        QVERIFY(playTo(w, usec(1500), 20000)); // on along the new branch
        const std::string newBranch = w.runner()->snapshot()->fingerprint;

        // The course it left is kept: switching goes there where they part, and runs on as it did.
        w.switchBranch();
        QTRY_VERIFY_WITH_TIMEOUT(moved.size() > 0 && !w.runner()->busy() && w.shownTimeNs() == 1000000, 20000);
        w.frame();
        QCOMPARE(w.runner()->snapshot()->fingerprint, headless(1000000));
        QCOMPARE(bar->reached(), end);
        QCOMPARE(bar->marks(), 2); // its two switches, not the other branch's
        QCOMPARE(llist(), true);
        QVERIFY(moveTo(1500000));
        QCOMPARE(w.runner()->snapshot()->fingerprint, headless(1500000));
        // ... and back to the new branch, whose run to 1.5 ms comes back too.
        QVERIFY(w.runner()->hasOtherBranch());
        const auto before2 = moved.size();
        w.switchBranch();
        QTRY_VERIFY_WITH_TIMEOUT(moved.size() > before2 && !w.runner()->busy(), 20000);
        QCOMPARE(w.shownTimeNs(), std::int64_t(1000000));
        QVERIFY(moveTo(w.runner()->furthestNs()));
        QCOMPARE(w.runner()->snapshot()->fingerprint, newBranch);
        w.dropOtherBranch();
        QVERIFY(!w.runner()->hasOtherBranch());
    }

    // "back to it" on a stall step shows the run just before that step; a double-click on a log row
    // shows the run at the row's time (after going back, so a row of the past).
    void stallStepsAndLogRowsGoBack()
    {
        MainWindow w;
        w.show();
        QVERIFY(w.loadPreset(QStringLiteral("shared-hctx-stall")));
        w.setSpeed(0);
        w.runOrPause();
        QTRY_VERIFY_WITH_TIMEOUT(w.stalled(), 20000);
        w.frame();
        const std::int64_t stallAt = w.shownTimeNs();
        const std::int64_t step2 = w.stallSteps()[1].at.ns(); // nullb0 hctx 0 gets RESTART set
        QSignalSpy moved(&w, &MainWindow::sessionOpened);
        emit w.stallBanner()->linkActivated(u"back:1"_qs);
        QTRY_COMPARE_WITH_TIMEOUT(moved.size(), 1, 20000);
        QCOMPARE(w.shownTimeNs(), step2 - 1);
        QVERIFY(!w.stallBanner()->isVisible()); // no stall yet at that time
        QCOMPARE(w.timelineBar()->reached(), stallAt);

        w.frame();
        QVERIFY(w.eventLog()->rowCount() > 2);
        const int row = 2;
        const std::int64_t rowAt = w.eventLog()->record(row).time;
        QTableView* log = w.eventLogView();
        const QModelIndex index = w.eventLogFilter()->mapFromSource(w.eventLog()->index(row, 0));
        emit log->doubleClicked(index);
        QTRY_COMPARE_WITH_TIMEOUT(moved.size(), 2, 20000);
        QCOMPARE(w.shownTimeNs(), rowAt);
    }

    // Colour never carries a meaning alone: a request's state is also its token's shape, a CPU's
    // context its tile's hatch; the colour-blind-safe scheme keeps the canvas's meanings apart and
    // keeps the colours of cached tags off those of IPIs, RESTART and stuck requests; switching it
    // repaints a paused canvas at once.
    void coloursNeverSpeakAlone()
    {
        // Each state's token covers its own pixels.
        std::vector<QImage> masks;
        for (RqState state : { RqState::Sched, RqState::Dispatch, RqState::AtDevice, RqState::Complete }) {
            QGraphicsScene scene; // owns the layer and its arc item, as the canvas's scene does
            auto* owned = new TokenLayer(QRectF(-20, -20, 40, 40));
            scene.addItem(owned);
            scene.addItem(owned->arcs());
            TokenLayer& layer = *owned;
            TokenLayer::Token t;
            t.id = 1;
            t.state = state;
            layer.setTargets({ t }, { QPointF(0, 0) });
            layer.settle();
            QImage image(80, 80, QImage::Format_RGB32);
            image.fill(Qt::white);
            QPainter painter(&image);
            painter.translate(40, 40);
            painter.scale(8, 8);
            layer.paint(&painter, nullptr, nullptr);
            painter.end();
            masks.push_back(image);
        }
        const auto differentPixels = [](const QImage& a, const QImage& b) {
            int n = 0;
            for (int y = 0; y < a.height(); ++y)
                for (int x = 0; x < a.width(); ++x)
                    n += (a.pixel(x, y) == qRgb(255, 255, 255)) != (b.pixel(x, y) == qRgb(255, 255, 255));
            return n;
        };
        for (std::size_t i = 0; i < masks.size(); ++i)
            for (std::size_t k = i + 1; k < masks.size(); ++k)
                QVERIFY2(differentPixels(masks[i], masks[k]) > 40, qPrintable(QStringLiteral("%1 %2").arg(i).arg(k)));
        for (int c = 1; c < kExecContexts; ++c) // every kernel context has a hatch of its own
            for (int k = c + 1; k < kExecContexts; ++k)
                QVERIFY(Palette::contextHatchGlyph(static_cast<ExecContext>(c))
                    != Palette::contextHatchGlyph(static_cast<ExecContext>(k)));
        for (const bool safe : { false, true }) {
            Palette::setColourBlindSafe(safe);
            for (int cpu = 0; cpu < 64; ++cpu)
                for (Hue alarm : { Hue::Ipi, Hue::Restart, Hue::Stuck })
                    QVERIFY(Palette::cacheColour(cpu) != Palette::of(alarm));
            QVERIFY(Palette::of(Hue::Hardirq) != Palette::of(Hue::Ipi));
            // what moves on the canvas at once: the requests by state, and the IPIs between them
            const std::vector<Hue> apart { Hue::RqSched, Hue::RqDispatch, Hue::RqDevice, Hue::RqComplete, Hue::Ipi };
            for (std::size_t i = 0; i < apart.size(); ++i)
                for (std::size_t k = i + 1; k < apart.size(); ++k)
                    QVERIFY(Palette::of(apart[i]) != Palette::of(apart[k]));
        }
        Palette::setColourBlindSafe(false);

        MainWindow w;
        w.show();
        QVERIFY(w.loadPreset(QStringLiteral("default")));
        QTRY_VERIFY(!w.canvasView()->grab().isNull());
        const auto count = [&](QRgb colour) {
            const QImage image = w.canvasView()->grab().toImage().convertToFormat(QImage::Format_RGB32);
            int n = 0;
            for (int y = 0; y < image.height(); ++y)
                for (int x = 0; x < image.width(); ++x)
                    n += image.pixel(x, y) == colour;
            return n;
        };
        const QRgb idleStandard = Palette::of(Hue::Idle).rgb();
        QTRY_VERIFY(count(idleStandard) > 100); // the idle tiles, at t = 0
        QVERIFY(static_cast<CanvasView*>(w.canvasView())->legend()->text().contains(Palette::of(Hue::Ipi).name()));
        w.setColourBlindSafe(true);
        const QRgb idleSafe = Palette::of(Hue::Idle).rgb();
        QVERIFY(idleSafe != idleStandard);
        QTRY_VERIFY(count(idleSafe) > 100); // repainted, paused
        QCOMPARE(count(idleStandard), 0);
        QVERIFY(static_cast<CanvasView*>(w.canvasView())->legend()->text().contains(Palette::of(Hue::Ipi).name()));
        w.setColourBlindSafe(false);
        QTRY_VERIFY(count(idleStandard) > 100);
    }

    // What the inspector shows is marked on the canvas: a clicked CPU or hctx gets a dashed frame
    // around its tile, which moves with the selection and goes with a new scenario.
    void theSelectionIsMarkedOnTheCanvas()
    {
        MainWindow w;
        w.show();
        QVERIFY(w.loadPreset(QStringLiteral("default")));
        QVERIFY(w.scene()->selectedRect().isEmpty());
        QCOMPARE(w.inspect(QStringLiteral("cpu:3")), QString());
        const QRectF cpu3 = w.scene()->selectedRect();
        QVERIFY(!cpu3.isEmpty());
        QCOMPARE(w.inspect(QStringLiteral("cpu:4")), QString());
        QVERIFY(!w.scene()->selectedRect().isEmpty());
        QVERIFY(w.scene()->selectedRect() != cpu3);
        QCOMPARE(w.inspect(QStringLiteral("hctx:1")), QString());
        const QRectF hctx = w.scene()->selectedRect();
        QVERIFY(!hctx.isEmpty() && !hctx.intersects(cpu3));
        QVERIFY(w.loadPreset(QStringLiteral("default")));
        QVERIFY(w.scene()->selectedRect().isEmpty());
    }

    void eventLogFilterFindsIpis()
    {
        MainWindow w;
        QVERIFY(w.loadPreset(QStringLiteral("default")));
        w.runner()->setSpeed(0);
        w.runOrPause();
        QTRY_VERIFY_WITH_TIMEOUT(w.eventLog()->rowCount() > 1000, 10000);
        w.runOrPause();
        w.eventLogFilter()->setFilterFixedString(QStringLiteral("IPI"));
        QVERIFY(w.eventLogFilter()->rowCount() > 0);
        QVERIFY(w.eventLogFilter()->rowCount() < w.eventLog()->rowCount());
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
