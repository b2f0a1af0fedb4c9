// Stop conditions ("run until …") and trace sinks: each condition stops exactly where its event
// happens, stopping never changes the run, and a sink sees what the engine does.
#include "TestUtil.h"

#include "block/BlockLayer.h"
#include "engine/StopCondition.h"

#include <QtTest>

using namespace blkmq;
using namespace blkmq::test;

namespace {

// Keeps every record and slice (a test sink; a real file writer would stream them).
class Recorder : public TraceSink {
public:
    void record(const TraceRecord& r) override { records.push_back(r); }
    void slice(const TraceSlice& s) override { slices.push_back(s); }
    std::vector<TraceRecord> records;
    std::vector<TraceSlice> slices;
};

StopPtr parsed(const char* text)
{
    auto p = stop::parse(text);
    if (!p)
        qFatal("%s", p.error().c_str());
    return std::move(*p);
}

} // namespace

class TestStop : public QObject {
    Q_OBJECT
private slots:
    // The first IPI of a run, found by a sink over the whole run, is where "event:ipi-send" stops.
    void eventStopsAtTheFirstOfItsKind()
    {
        Engine whole(load("default", { "duration=1ms" }));
        Recorder all;
        QVERIFY(whole.addTraceSink(&all));
        whole.run();
        const auto first = std::find_if(
            all.records.begin(), all.records.end(), [](const TraceRecord& r) { return r.kind == TraceKind::IpiSend; });
        QVERIFY(first != all.records.end());

        Engine e(load("default", { "duration=1ms" }));
        const StopPtr s = parsed("event:ipi-send");
        QVERIFY(e.runUntil(*s));
        QCOMPARE(e.counters().ipis, std::uint64_t(1));
        QVERIFY(e.now().ns() <= first->time); // the IPI is stamped with its op's time within the action
    }

    void counterChangeStopsAtTheFirstChange()
    {
        Engine e(load("default"));
        const StopPtr s = parsed("counter:ipis");
        QVERIFY(e.runUntil(*s));
        QCOMPARE(e.counters().ipis, std::uint64_t(1));
        QVERIFY(e.runUntil(*s)); // armed again: the next change
        QCOMPARE(e.counters().ipis, std::uint64_t(2));
    }

    void stallStopsWhereTheDetectorFires()
    {
        Engine e(load("shared-hctx-stall"));
        const StopPtr s = stop::stall();
        QVERIFY(e.runUntil(*s));
        QVERIFY(e.stallDetected());
        QCOMPARE(e.now(), e.firstStall());
        QVERIFY(!e.runUntil(*s)); // it fires once per run
    }

    void restartSetStopsWithTheMarkSet()
    {
        Engine e(load("shared-hctx-stall"));
        const StopPtr any = parsed("restart-set");
        QVERIFY(e.runUntil(*any));
        int marked = -1;
        for (int h = 0; h < static_cast<int>(e.block().hctxs().size()); ++h)
            if (e.block().restart().marked(h))
                marked = h;
        QVERIFY(marked >= 0);
        const StopPtr same = stop::restartSet(marked);
        QVERIFY(e.runUntil(*same, 0)); // a state: it holds already
        QVERIFY(same->describe().find(std::to_string(marked)) != std::string::npos);
    }

    void timeAndEither()
    {
        Engine e(load("default"));
        const StopPtr s = parsed("time:250us|stall");
        QVERIFY(e.runUntil(*s));
        QVERIFY(e.now() >= usec(250) && e.now() < usec(251));
        QVERIFY(s->describe().find(" or ") != std::string::npos);
    }

    void notReachedRunsToTheEnd()
    {
        Engine e(load("default", { "duration=2ms" }));
        const StopPtr s = stop::stall();
        QVERIFY(!e.runUntil(*s));
        QVERIFY(e.finished() || e.now() <= msec(2));
    }

    // Stopping anywhere, any number of times, and sinks attached or not: the same events.
    void stoppingDoesNotChangeTheRun()
    {
        Engine plain(load("restart-128x64", { "duration=3ms" }));
        plain.run();
        Engine stopped(load("restart-128x64", { "duration=3ms" }));
        Recorder sink;
        QVERIFY(stopped.addTraceSink(&sink));
        const StopPtr s = stop::interesting();
        for (int i = 0; i < 200 && stopped.runUntil(*s); ++i) { }
        stopped.run();
        QCOMPARE(stopped.fingerprint(), plain.fingerprint());
        QVERIFY(!sink.records.empty());
    }

    // Every CPU action is one slice: their lengths add up to the CPUs' busy time, context by context.
    void slicesAddUpToBusyTime()
    {
        Engine e(load("default", { "duration=2ms" }));
        Recorder sink;
        QVERIFY(e.addTraceSink(&sink));
        e.run();
        std::array<std::int64_t, kExecContexts> fromSlices {};
        for (const TraceSlice& s : sink.slices) {
            QVERIFY(s.end > s.begin);
            fromSlices[static_cast<std::size_t>(s.context)] += s.end - s.begin;
        }
        for (std::size_t k = 0; k < fromSlices.size(); ++k) {
            std::int64_t busy = 0;
            for (int c = 0; c < e.machine().nrCpus(); ++c)
                busy += e.machine().cpu(c).busy[k];
            QCOMPARE(fromSlices[k], busy);
        }
        QVERIFY(fromSlices[static_cast<std::size_t>(ExecContext::Hardirq)] > 0);
    }

    void sinksAreBoundedAndRemovable()
    {
        Engine e(load("default", { "duration=1ms" }));
        Recorder r[Sim::kMaxSinks + 1];
        for (int i = 0; i < Sim::kMaxSinks; ++i)
            QVERIFY(e.addTraceSink(&r[i]));
        QVERIFY(!e.addTraceSink(&r[Sim::kMaxSinks]));
        e.removeTraceSink(&r[0]);
        e.run();
        QVERIFY(r[0].records.empty());
        QVERIFY(!r[1].records.empty());
        QCOMPARE(r[1].records.size(), r[Sim::kMaxSinks - 1].records.size());
    }

    void badConditionsNameTheValidForms_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown") << u"foo"_qs << u"valid values are: time, counter, event, stall"_qs;
        QTest::newRow("counter") << u"counter:nope"_qs << u"valid values are: submitted"_qs;
        QTest::newRow("event") << u"event:nope"_qs << u"ipi-send"_qs;
        QTest::newRow("time") << u"time:soon"_qs << u"not a duration"_qs;
        QTest::newRow("arg") << u"stall:3"_qs << u"takes no argument"_qs;
        QTest::newRow("missing") << u"counter"_qs << u"needs :NAME"_qs;
        QTest::newRow("empty") << QString() << u"empty stop condition"_qs;
        QTest::newRow("trailing bar") << u"stall|"_qs << u"not a stop condition"_qs;
        QTest::newRow("hctx") << u"restart-set:x"_qs << u"not an hctx index"_qs;
    }
    void badConditionsNameTheValidForms()
    {
        QFETCH(QString, text);
        QFETCH(QString, message);
        const auto p = stop::parse(text.toStdString());
        QVERIFY(!p);
        QVERIFY2(QString::fromStdString(p.error()).contains(message), p.error().c_str());
    }
};

QTEST_GUILESS_MAIN(TestStop)
#include "tst_stop.moc"
