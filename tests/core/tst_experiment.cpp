// Experiments: a base scenario and axes; the grid in a fixed order, the same results at any
// thread count and chunk size, seeds generated on demand.
#include "TestUtil.h"

#include "experiment/Experiment.h"
#include "experiment/Validation.h"

#include <QtTest>

using namespace blkmq;
using namespace blkmq::test;

namespace {

Experiment::Loader preset(const std::string& name, std::vector<std::string> base = {})
{
    return [name, base](const std::vector<std::string>& sets) {
        std::vector<std::string> all = base;
        all.insert(all.end(), sets.begin(), sets.end());
        return ScenarioLoader::fromPreset(name, all);
    };
}

Experiment::Options opts(int threads, bool keepSummaries, std::size_t chunk)
{
    Experiment::Options o;
    o.threads = threads;
    o.keepSummaries = keepSummaries;
    o.chunk = chunk;
    return o;
}

std::vector<RunResult> runAll(const Experiment& x, Experiment::Options o)
{
    std::vector<RunResult> out;
    const std::string err = x.run(o, [&](RunResult&& r) { out.push_back(std::move(r)); }).error;
    if (!err.empty())
        qFatal("%s", err.c_str());
    return out;
}

} // namespace

class TestExperiment : public QObject {
    Q_OBJECT
private slots:
    void gridOrderLastAxisFastest()
    {
        const Experiment x(preset("default"),
            { Axis::values("workload.jobs.0.iodepth", { "1", "8" }),
                Axis::configurations("kernel", { { "A", {} }, { "B", { "kernel.patches.complete-llist=true" } } }),
                Axis::seeds(5, 3) });
        QCOMPARE(x.size(), std::uint64_t(12));
        QCOMPARE(x.labels(0), (std::vector<std::string> { "1", "A", "5" }));
        QCOMPARE(x.labels(4), (std::vector<std::string> { "1", "B", "6" }));
        QCOMPARE(x.labels(11), (std::vector<std::string> { "8", "B", "7" }));
        const auto s = x.scenario(10);
        QVERIFY(s.ok());
        QCOMPARE(s->seed, std::uint64_t(6));
        QCOMPARE(s->jobs.front().iodepth, 8);
        QVERIFY(s->kernel.patches.llist);
        QVERIFY(!x.scenario(0)->kernel.patches.llist);
    }

    // The same results at one thread, two threads and any chunk size: same fingerprints, same metrics.
    void resultsDoNotDependOnThreadsOrChunks()
    {
        const Experiment x(preset("shared-hctx-stall-random", { "duration=2ms" }), { Axis::seeds(1, 12) });
        const auto one = runAll(x, opts(1, false, 256));
        const auto two = runAll(x, opts(2, false, 5));
        QCOMPARE(one.size(), std::size_t(12));
        QCOMPARE(two.size(), one.size());
        for (std::size_t i = 0; i < one.size(); ++i) {
            QCOMPARE(one[i].index, std::uint64_t(i));
            QCOMPARE(two[i].index, one[i].index);
            QCOMPARE(two[i].fingerprint, one[i].fingerprint);
            QCOMPARE(two[i].metrics, one[i].metrics);
            QCOMPARE(one[i].seed, std::uint64_t(1 + i));
            QVERIFY(one[i].summary.is_null()); // not kept unless asked for
        }
        QVERIFY(one[0].fingerprint != one[1].fingerprint); // the seed axis does vary the run
        // and each equals a run of that scenario on its own
        Engine e(*x.scenario(3));
        e.run();
        QCOMPARE(one[3].fingerprint, e.fingerprint());
        QCOMPARE(one[3].metrics, e.totals());
    }

    void typedResultsMatchTheSummary()
    {
        const Experiment x(
            preset("shared-hctx-stall"), { Axis::values("kernel.restart", { "rr-shared-queue-counter", "own-hctx" }) });
        const auto r = runAll(x, opts(0, true, 256));
        QCOMPARE(r.size(), std::size_t(2));
        for (const auto& one : r) {
            QCOMPARE(one.stalled, one.summary["stall"]["detected"].get<bool>());
            QCOMPARE(one.metrics[metricIndex("iops")], one.summary["metrics"]["iops"].get<double>());
        }
        QVERIFY(r[0].stalled && r[0].firstStallNs > 0 && !r[0].stallExplanation.empty());
        QVERIFY(!r[1].stalled);
    }

    // Seeds are generated, not stored: an axis of 10^12 seeds costs nothing until it runs.
    void seedAxisIsGenerated()
    {
        const Axis a = Axis::seeds(7, 1000000000000ULL);
        QCOMPARE(a.size(), std::uint64_t(1000000000000ULL));
        QCOMPARE(a.point(999999999999ULL).label, std::string("1000000000006"));
        QCOMPARE(a.point(0).sets, std::vector<std::string> { "seed=7" });
    }

    // Shards split the grid round robin; their results, put together by index, are the whole grid's.
    void shardsPartitionTheGrid()
    {
        const Experiment x(
            preset("default"), { Axis::values("duration", { "\"1ms\"", "\"2ms\"" }), Axis::seeds(1, 5) }); // 10 runs
        std::vector<std::string> whole(10);
        QCOMPARE(
            x.run(opts(2, false, 3), [&](RunResult&& r) { whole[r.index] = r.fingerprint; }).done, std::uint64_t(10));
        std::vector<std::string> joined(10);
        for (std::uint64_t i = 0; i < 3; ++i) {
            Experiment::Options o;
            o.threads = 1;
            o.chunk = 2;
            o.shard = *Experiment::Shard::parse(std::to_string(i) + "/3");
            std::vector<std::uint64_t> order;
            const auto status = x.run(o, [&](RunResult&& r) {
                QCOMPARE(r.index % 3, i);
                order.push_back(r.index);
                joined[r.index] = r.fingerprint;
            });
            QCOMPARE(status.done, o.shard.sizeOf(10));
            QVERIFY(std::is_sorted(order.begin(), order.end()));
        }
        QCOMPARE(joined, whole);
        // A stop flag set before the run: nothing runs, and it says it was interrupted.
        std::atomic<bool> stop { true };
        Experiment::Options o;
        o.stop = &stop;
        const auto status = x.run(o, [](RunResult&&) { QFAIL("a run after the stop"); });
        QVERIFY(status.interrupted);
        QCOMPARE(status.done, std::uint64_t(0));
        for (const char* bad : { "0/0", "3/2", "1", "a/b", "-1/2", "" })
            QVERIFY2(!Experiment::Shard::parse(bad), bad);
        QCOMPARE(Experiment::Shard::parse("3/4")->sizeOf(10), std::uint64_t(2)); // 3 and 7
    }

    void aPointThatDoesNotLoadStopsTheRun()
    {
        const Experiment x(preset("default"), { Axis::values("workload.jobs.0.iodepth", { "4", "zero" }) });
        int ran = 0;
        const std::string err = x.run(opts(1, false, 256), [&](RunResult&&) { ++ran; }).error;
        QVERIFY2(err.find("iodepth") != std::string::npos, err.c_str());
        QCOMPARE(ran, 0);
    }

    // A claim the preset cannot reproduce (Wagner's buffered fio) prints its figure, never "holds" or
    // "no", and says why.
    void notComparableClaimsNeitherHoldNorMiss()
    {
        std::vector<Claim> claims;
        for (const auto& c : Validation::claims("completion"))
            if (c.preset == "wagner-nvmefc-4s80")
                claims.push_back(c);
        QCOMPARE(claims.size(), std::size_t(2));
        for (auto& c : claims)
            c.duration = "5ms";
        const auto results = Validation::run(claims);
        const std::string md = Validation::markdown(results);
        for (const auto& r : results) {
            QVERIFY(!r.comparable() && !r.holds);
            QVERIFY(r.simulated > 0);
        }
        QVERIFY2(md.find("not comparable (buffered I/O") != std::string::npos, md.c_str());
        QVERIFY2(md.find("| yes") == std::string::npos && md.find("**no**") == std::string::npos, md.c_str());
    }
};

QTEST_GUILESS_MAIN(TestExperiment)
#include "tst_experiment.moc"
