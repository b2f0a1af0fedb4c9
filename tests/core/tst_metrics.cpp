#include "metrics/LatencyHistogram.h"
#include "metrics/Format.h"
#include "metrics/Metrics.h"
#include "metrics/TimeSeries.h"
#include "engine/CommandInbox.h"
#include "sim/TraceRing.h"
#include "TestUtil.h"

#include <QtTest>

#include <thread>

using namespace blkmq;

class TestMetrics : public QObject {
    Q_OBJECT
private slots:
    void negativeQuantitiesKeepTheirPrefix()
    {
        QCOMPARE(formatQuantity(-50000), std::string("-50.0k"));
        QCOMPARE(formatQuantity(-2.5e6), std::string("-2.500M"));
        QCOMPARE(formatQuantity(50000), std::string("50.0k"));
    }

    void histogramPercentilesWithinBucketError()
    {
        LatencyHistogram h;
        for (int v = 1; v <= 100000; ++v)
            h.record(v);
        QCOMPARE(h.count(), std::uint64_t(100000));
        QCOMPARE(h.max(), std::int64_t(100000));
        QVERIFY(std::abs(h.mean() - 50000.5) < 1e-6);
        const auto near
            = [](std::int64_t got, double want) { return std::abs(static_cast<double>(got) - want) <= want / 32 + 1; };
        QVERIFY2(near(h.percentile(0.5), 50000), qPrintable(QString::number(h.percentile(0.5))));
        QVERIFY(near(h.percentile(0.99), 99000));
        QVERIFY(near(h.percentile(0.999), 99900));
        QCOMPARE(h.percentile(1.0), std::int64_t(100000));
    }

    void histogramSmallValuesExact()
    {
        LatencyHistogram h;
        for (int i = 0; i < 10; ++i)
            h.record(7);
        h.record(20);
        QCOMPARE(h.percentile(0.5), std::int64_t(7));
        QCOMPARE(h.percentile(1.0), std::int64_t(20));
        h.reset();
        QCOMPARE(h.count(), std::uint64_t(0));
        QCOMPARE(h.percentile(0.5), std::int64_t(0));
    }

    // The whole run's latency is the closed intervals merged with the open one (Workload): merging
    // must give exactly what recording every value into one histogram gives.
    void histogramMergeEqualsRecordingAll()
    {
        LatencyHistogram all;
        LatencyHistogram first;
        LatencyHistogram second;
        std::uint64_t x = 12345;
        for (int i = 0; i < 5000; ++i) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            const auto v = static_cast<std::int64_t>(x >> 44); // up to ~1M ns
            all.record(v);
            (i % 3 == 0 ? first : second).record(v);
        }
        const LatencyHistogram merged = first.merged(second);
        QCOMPARE(merged.count(), all.count());
        QCOMPARE(merged.sum(), all.sum());
        QCOMPARE(merged.max(), all.max());
        QCOMPARE(merged.min(), all.min());
        for (double q : { 0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0 })
            QCOMPARE(merged.percentile(q), all.percentile(q));
        QVERIFY(first.count() < all.count()); // merged() leaves its operands alone
        LatencyHistogram none;
        QCOMPARE(none.merged(LatencyHistogram {}).min(), std::int64_t(0));
        QCOMPARE(LatencyHistogram {}.merged(first).min(), first.min());
    }

    void traceRingKeepsNewestAndCountsDrops()
    {
        TraceRing ring(8);
        for (int i = 0; i < 20; ++i)
            ring.push(TraceRecord { i, i, 0, 0, TraceKind::Submit });
        std::vector<TraceRecord> out;
        const auto dropped = ring.read(out);
        QCOMPARE(dropped, std::uint64_t(12));
        QCOMPARE(out.size(), std::size_t(8));
        QCOMPARE(out.front().time, std::int64_t(12));
        QCOMPARE(out.back().time, std::int64_t(19));
        out.clear();
        QCOMPARE(ring.read(out), std::uint64_t(0));
        QVERIFY(out.empty());
    }

    void traceRingConcurrentReaderSeesOrderedRecords()
    {
        TraceRing ring(1 << 10);
        constexpr int n = 200000;
        std::thread producer([&] {
            for (int i = 0; i < n; ++i)
                ring.push(TraceRecord { i, i, i, 1, TraceKind::Complete });
        });
        std::uint64_t seen = 0, dropped = 0;
        std::int64_t last = -1;
        std::vector<TraceRecord> out;
        while (seen + dropped < static_cast<std::uint64_t>(n)) {
            out.clear();
            dropped += ring.read(out);
            for (const auto& r : out) {
                QVERIFY(r.time > last); // never a torn or stale record
                QCOMPARE(r.rq, static_cast<std::int32_t>(r.time));
                last = r.time;
            }
            seen += out.size();
        }
        producer.join();
        QCOMPARE(seen + dropped, static_cast<std::uint64_t>(n));
    }

    void inboxDrainsInOrder()
    {
        CommandInbox inbox;
        QVERIFY(!inbox.pending());
        inbox.post({ "a", "1" });
        inbox.post({ "b", "2" });
        QVERIFY(inbox.pending());
        const auto cmds = inbox.drain();
        QCOMPARE(cmds.size(), std::size_t(2));
        QCOMPARE(cmds[1].command().path, std::string("b"));
        QVERIFY(!inbox.pending());
    }

    void csvHeaderMatchesRow()
    {
        const auto header = QString::fromStdString(TimeSeries::csvHeader());
        const auto row = QString::fromStdString(TimeSeries::csvRow(SeriesRow {}));
        QCOMPARE(header.count(u','), row.count(u','));
        QCOMPARE(header.count(u','), kMetricCount);
    }

    // The metric table: ids are unique and found by name; the metrics of one plot share a unit (one axis).
    void metricTableIsConsistent()
    {
        for (int i = 0; i < kMetricCount; ++i) {
            const Metric& m = kMetrics[static_cast<std::size_t>(i)];
            QCOMPARE(findMetric(m.id), i);
            QVERIFY(!m.label.empty() && !m.how.empty());
            for (const Metric& other : kMetrics)
                if (!m.group.empty() && other.group == m.group)
                    QVERIFY2(other.unit == m.unit, qPrintable(QString::fromUtf8(m.group.data(), m.group.size())));
        }
        QCOMPARE(findMetric("no such metric"), -1);
    }

    // A share divides two counts of one event population in the same interval.
    void sharesDivideOnePopulation()
    {
        Counters before;
        Counters now;
        now.completed = 10;
        now.completed_redirected = 4;
        now.remote = 50; // decisions whose completions are still on their way do not count
        MetricSample a { before, {} };
        MetricSample b { now, {} };
        LatencyHistogram lat;
        const MetricValues v = computeMetrics({ b, a, 1e-3, 2, lat, lat, 46 });
        QCOMPARE(v[metricIndex("remote_pct")], 40.0);
        QCOMPARE(v[metricIndex("iops")], 10000.0);
        QCOMPARE(v[metricIndex("in_flight")], 46.0);
    }

    // The interval in progress (a live plot's last point): the metrics of the counters since the last
    // sample over the time since it, taken without a sample, so the run goes on exactly as without it.
    void intervalSoFarIsTheSampleInProgress()
    {
        const Scenario scenario = test::load("default", { "duration=3ms" });
        Engine plain(scenario);
        plain.run();
        Engine e(scenario);
        e.runUntil(usec(40)); // under a twentieth of sample_interval (1 ms): mostly noise, none
        QVERIFY(!e.intervalSoFar());
        e.runUntil(usec(1500));
        const auto row = e.intervalSoFar();
        QVERIFY(row);
        QCOMPARE(row->t_ns, usec(1500).ns());
        QCOMPARE(e.series().rows().size(), std::size_t(1)); // the sample at 1 ms, none taken since
        const std::uint64_t before = static_cast<std::uint64_t>(
            std::llround(e.series().rows().back()[metricIndex("iops")] * 1e-3)); // completions of the first interval
        const double since = static_cast<double>(e.counters().completed - before);
        QCOMPARE((*row)[metricIndex("iops")], since / 500e-6);
        for (int i = 0; i < 50; ++i) { // asked as often as the window asks: the run does not change
            e.runFor(usec(29));
            (void)e.intervalSoFar();
        }
        e.run();
        QCOMPARE(e.fingerprint(), plain.fingerprint());
        QCOMPARE(e.series().rows().size(), plain.series().rows().size());
    }
};

QTEST_GUILESS_MAIN(TestMetrics)
#include "tst_metrics.moc"
