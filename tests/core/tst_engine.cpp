#include "TestUtil.h"

#include "block/BlockLayer.h"
#include "workload/Workload.h"

#include <cmath>
#include <functional>
#include <map>

using namespace blkmq;
using namespace blkmq::test;

namespace {
const char* kTwoNodes = R"({"topology":"2n:1p:2c:1t","duration":"4ms",
    "devices":[{"name":"nvme0","irqmode":"nvme","submit_queues":1,"completion_nsec":"10us"}],
    "workload":{"jobs":[{"iodepth":8,"numjobs":2,"cpus_allowed":"1-2","cpus_allowed_policy":"split"}]}})";
}

class TestEngine : public QObject {
    Q_OBJECT
private slots:
    void stepProcessesExactlyOneEvent()
    {
        Engine e(load("default"));
        SimTime last;
        for (int i = 1; i <= 500; ++i) {
            QVERIFY(e.step());
            QCOMPARE(e.events(), std::uint64_t(i));
            QVERIFY(e.now() >= last);
            last = e.now();
        }
    }

    void runUntilStopsAtTheBoundary()
    {
        Engine e(load("default"));
        e.runUntil(usec(100));
        QCOMPARE(e.now(), usec(100));
        const auto before = e.events();
        e.runUntil(usec(100)); // nothing left at or before t
        QCOMPARE(e.events(), before);
        e.runFor(usec(50));
        QCOMPARE(e.now(), usec(150));
        QVERIFY(e.events() > before);
        e.run();
        QCOMPARE(e.now(), e.duration());
        QVERIFY(!e.step());
    }

    void conservationOnEveryPreset()
    {
        for (const auto& p : ScenarioLoader::presets()) {
            const auto s = run(p.name);
            const auto& io = s["io"];
            QVERIFY2(u(io["completed"]) > 0, p.name.c_str());
            QCOMPARE(u(io["submitted"]), u(io["completed"]) + io["in_flight"].get<std::uint64_t>());
            QVERIFY(u(io["reaped"]) <= u(io["completed"]));
        }
    }

    // Closed loop: iodepth requests always outstanding, so IOPS x mean latency = iodepth.
    void littlesLaw()
    {
        const auto s = run(R"({"topology":"2c","duration":"20ms",
            "devices":[{"irqmode":"nvme","submit_queues":2,"completion_nsec":{"dist":"exponential","mean":"30us"}}],
            "workload":{"jobs":[{"iodepth":16,"cpus_allowed":[0]}]}})");
        const double iops = s["metrics"]["iops"].get<double>();
        const double lat = s["latency_ns"]["mean"].get<double>() * 1e-9;
        QVERIFY2(std::abs(iops * lat - 16.0) < 16.0 * 0.03, qPrintable(QString::number(iops * lat)));
    }

    void rqAffinity_data()
    {
        QTest::addColumn<int>("rqAffinity");
        QTest::addColumn<int>("cpu");
        QTest::addColumn<double>("remotePct");
        // The vector is on CPU 0; CPU 1 shares its LLC, CPU 2 is on the other node.
        QTest::newRow("0, same LLC") << 0 << 1 << 0.0;
        QTest::newRow("0, other node") << 0 << 2 << 0.0;
        QTest::newRow("1, same LLC") << 1 << 1 << 0.0;
        QTest::newRow("1, other node") << 1 << 2 << 100.0;
        QTest::newRow("2, same LLC") << 2 << 1 << 100.0;
        QTest::newRow("2, other node") << 2 << 2 << 100.0;
        QTest::newRow("2, on the vector's CPU") << 2 << 0 << 0.0;
    }
    void rqAffinity()
    {
        QFETCH(int, rqAffinity);
        QFETCH(int, cpu);
        QFETCH(double, remotePct);
        const auto s = run(kTwoNodes,
            { "devices.nvme0.rq_affinity=" + std::to_string(rqAffinity), "workload.jobs.0.numjobs=1",
                "workload.jobs.0.cpus_allowed=[" + std::to_string(cpu) + "]" });
        QVERIFY(u(s["io"]["completed"]) > 100);
        const double got = s["metrics"]["remote_pct"].get<double>();
        // remote is counted when redirected: a few may still be on their way at the end
        QVERIFY2(std::abs(got - remotePct) < 0.5, qPrintable(QString::number(got)));
        if (remotePct == 0.0) {
            QCOMPARE(u(s["completion"]["ipis"]), std::uint64_t(0));
            // one hw queue: a local completion goes through BLOCK_SOFTIRQ (v5.10)
            QCOMPARE(u(s["completion"]["by_context"]["softirq"]), u(s["io"]["completed"]));
        }
    }

    void wagnerPresetsRemoteShare()
    {
        const auto mq = run("nvme-2s64-mq");
        const auto one = run("nvme-2s64-1q");
        QCOMPARE(u(mq["completion"]["remote"]), std::uint64_t(0));
        QVERIFY(u(mq["io"]["completed"]) > 1000);
        const double pct = one["metrics"]["remote_pct"].get<double>();
        QVERIFY2(pct > 40.0 && pct < 60.0, qPrintable(QString::number(pct)));
    }

    void commandsApplyAtEventBoundaryWithMarker()
    {
        Engine e(load(kTwoNodes));
        e.runUntil(msec(2));
        const auto remoteBefore = e.counters().remote;
        QVERIFY(remoteBefore > 0);
        e.inbox().post({ "devices.nvme0.rq_affinity", "0" });
        e.inbox().post({ "topology", "8c" }); // not live: rejected, still marked
        e.run();
        QCOMPARE(e.counters().remote, remoteBefore);
        QCOMPARE(e.markers().size(), std::size_t(2));
        QCOMPARE(e.markers()[0].t_ns, msec(2).ns());
        QCOMPARE(e.markers()[0].text, std::string("devices.nvme0.rq_affinity=0"));
        QVERIFY(e.markers()[1].text.rfind("rejected topology=8c", 0) == 0);
        QCOMPARE(e.summary()["markers"].size(), std::size_t(2));
    }

    // A command is read against the switch table when it is posted, and the engine only sets the typed
    // value: what a value cannot be is known before the run sees it; what the run decides (the device a
    // name picks, the switches beside it) is checked when it applies, and a refused change leaves the
    // scenario as it was.
    void liveChangesAreReadWhenPosted()
    {
        const auto refused = [](const std::string& path, const std::string& value) {
            return LiveChange::read({ path, value }).refused();
        };
        QCOMPARE(refused("kernel.threadirqs", "true"), std::string());
        QCOMPARE(refused("kernel.restart", "\"rr-shared\""), std::string());
        QCOMPARE(refused("kernel.tag_idle", "5ms"), std::string());
        QCOMPARE(refused("costs.ipi_latency_ns.node", "900"), std::string());
        QCOMPARE(refused("kernel.threadirqs", "1"), std::string("kernel.threadirqs: must be true or false (got 1)"));
        QVERIFY(refused("kernel.restart", "fifo").rfind("kernel.restart: must be one of own-hctx, ", 0) == 0);
        QCOMPARE(refused("kernel.tags", "percpu_ida"), std::string("kernel.tags cannot change during a run"));
        QVERIFY(refused("kernel.tag_idle", "soon").rfind("kernel.tag_idle: must be a duration", 0) == 0);
        QVERIFY(refused("costs.ipi_latency_ns", "5").find("given whole") != std::string::npos);
        QVERIFY(refused("costs.submit_ns", "-1").rfind("costs.submit_ns: must be an integer in 0..", 0) == 0);
        QVERIFY(
            refused("devices.0.rq_affinity", "3").rfind("devices.0.rq_affinity: must be an integer in 0..2", 0) == 0);

        Scenario s = load(kTwoNodes);
        const Scenario before = s;
        QVERIFY(LiveChange::read({ "kernel.patches.complete-llist", "true" }).applyTo(s));
        QVERIFY(s.kernel.patches.llist);
        QVERIFY(LiveChange::read({ "costs.ipi_latency_ns.node", "900" }).applyTo(s));
        QCOMPARE(s.costs.ipi_latency_ns[static_cast<std::size_t>(Distance::Node)], std::int64_t(900));
        // Which device a name picks, and whether a cost fits the others, is the run's to say.
        auto noDevice = LiveChange::read({ "devices.sda.rq_affinity", "2" }).applyTo(s);
        QVERIFY(!noDevice);
        QCOMPARE(noDevice.error(), std::string("devices.sda.rq_affinity: the scenario has no device sda"));
        const Scenario kept = s;
        auto tooMuch = LiveChange::read({ "costs.fio_user_ns", std::to_string(s.costs.submit_ns + 1) }).applyTo(s);
        QVERIFY(!tooMuch);
        QVERIFY(tooMuch.error().rfind("costs.fio_user_ns: must be at most costs.submit_ns", 0) == 0);
        QCOMPARE(s.costs.fio_user_ns, kept.costs.fio_user_ns);
        QVERIFY(LiveChange::read({ "devices.0.rq_affinity", "2" }).applyTo(s));
        QCOMPARE(s.devices[0].rq_affinity, 2);
        QCOMPARE(before.devices[0].rq_affinity, 1);

        // In a run: a refused value is marked at the next event boundary, like any command, and changes nothing.
        Engine e(load(kTwoNodes));
        e.runUntil(msec(1));
        e.inbox().post({ "kernel.threadirqs", "yes" });
        e.inbox().post({ "devices.nvme0.rq_affinity", "2" });
        e.run();
        QCOMPARE(e.markers().size(), std::size_t(2));
        QCOMPARE(e.markers()[0].text,
            std::string("rejected kernel.threadirqs=yes: kernel.threadirqs: must be true or false (got yes)"));
        QCOMPARE(e.scenario().kernel.threadirqs, false);
        QCOMPARE(e.scenario().devices[0].rq_affinity, 2);
        // The scenario as it runs now: the loaded one with the applied changes, not the refused one.
        e.publishSnapshot();
        const auto snap = e.snapshot();
        QCOMPARE(snap->liveChanges->size(), std::size_t(1));
        auto now
            = ScenarioLoader::fromText(ScenarioLoader::withChanges(*snap->scenarioJson, *snap->liveChanges), "now");
        QVERIFY2(now, now ? "" : now.error().c_str());
        QCOMPARE(now->devices[0].rq_affinity, 2);
        QCOMPARE(now->kernel.threadirqs, false);
    }

    void threadirqsSwitchLive()
    {
        Engine e(load(kTwoNodes));
        e.runUntil(msec(2));
        QCOMPARE(e.counters().ksoftirqd_wakeups, std::uint64_t(0));
        e.inbox().post({ "kernel.threadirqs", "true" });
        e.run();
        QVERIFY(e.counters().ksoftirqd_wakeups > 0);
    }

    void tagExhaustionSleepsSubmitters()
    {
        const auto s = run(R"({"topology":"2c","duration":"3ms",
            "devices":[{"irqmode":"nvme","hw_queue_depth":4,"completion_nsec":"10us"}],
            "workload":{"jobs":[{"iodepth":16,"numjobs":2,"cpus_allowed_policy":"split"}]}})");
        QVERIFY(u(s["tags"]["sleeps"]) > 0);
        QVERIFY(s["io"]["in_flight"].get<int>() <= 4);
        // four tags, 10 us each: at most 400k IOPS
        QVERIFY(s["metrics"]["iops"].get<double>() <= 400000 * 1.01);
        QVERIFY(s["metrics"]["iops"].get<double>() > 300000);
    }

    void busyDeviceRequeuesAndRestarts()
    {
        const auto s = run(R"({"topology":"2c","duration":"3ms",
            "devices":[{"irqmode":"nvme","scheduler":"mq-deadline","queue_limit":2,"completion_nsec":"10us"}],
            "workload":{"jobs":[{"iodepth":8,"numjobs":2,"cpus_allowed_policy":"split"}]}})");
        QVERIFY(u(s["dispatch"]["busy"]) > 0);
        QVERIFY(u(s["dispatch"]["requeued"]) > 0);
        QVERIFY(u(s["restart"]["restarts"]) > 0);
        QVERIFY(s["metrics"]["iops"].get<double>() > 120000); // ~2 in flight at 10 us (200k at most) keeps flowing
        QVERIFY(s["metrics"]["busy_kworker_pct"].get<double>() > 0); // restarts run from kblockd
    }

    // kblockd is WQ_HIGHPRI (nice -20): a hw queue run queued by a submission preempts the submitting
    // job at once, so each request is dispatched right after it was submitted. At nice 0 the job
    // would go on submitting its whole queue depth first. (In the first ~10 us the job's vruntime is
    // still within kblockd's scaled wake-up granularity, as in CFS, so the test looks after 100 us.)
    void kblockdRunsBeforeNormalTasks()
    {
        struct Waits : TraceSink {
            std::map<int, std::int64_t> submitted;
            std::int64_t longest = 0;
            int dispatched = 0;
            void record(const TraceRecord& r) override
            {
                if (r.kind == TraceKind::Submit && r.time > 100000) // once vruntimes have drifted apart
                    submitted[r.rq] = r.time;
                else if (r.kind == TraceKind::Dispatch && submitted.count(r.rq)) {
                    longest = std::max(longest, r.time - submitted[r.rq]);
                    ++dispatched;
                    submitted.erase(r.rq);
                }
            }
        } waits;
        Engine e(load(R"({"topology":"1c","duration":"1ms",
            "devices":[{"irqmode":"nvme","scheduler":"mq-deadline","completion_nsec":"50us"}],
            "workload":{"jobs":[{"iodepth":32}]}})"));
        e.addTraceSink(&waits);
        e.run();
        QVERIFY(waits.dispatched > 100);
        // submit -> kblockd wake-up -> context switch -> dispatch: a few microseconds, never 32 submissions
        QVERIFY2(waits.longest < 5000, qPrintable(QString::number(waits.longest)));
    }

    void scriptHoldsRequestsUntilCompleted()
    {
        Engine e(load(R"({"topology":"2c","duration":"1ms",
            "devices":[{"name":"d0","irqmode":"nvme","completion_nsec":"1us"}],
            "workload":{"script":[
                {"at":"10us","op":"submit","id":"A","cpu":1,"device":"d0","hold":true},
                {"at":"20us","op":"submit","id":"B","cpu":0,"device":"d0"},
                {"at":"500us","op":"complete","id":"A"}]}})"));
        e.runUntil(usec(400));
        QCOMPARE(e.block().inFlight(), 1); // B done, A held
        const int a = e.workload().scriptRequest("A");
        QVERIFY(a >= 0);
        QCOMPARE(e.block().request(a).state, RqState::AtDevice);
        QCOMPARE(int(e.block().request(a).cpu), 1);
        e.run();
        QCOMPARE(e.block().inFlight(), 0);
        QCOMPARE(e.counters().completed, std::uint64_t(2));
        // A waited from 10 us to at least 500 us
        QVERIFY(e.workload().latency().max() >= 490000);
    }

    // What the latency plot and the CSV show was recorded: a script's request is never reaped, its
    // latency ends at its completion, so every interval of a scripted preset that completed a
    // request has a latency, one that completed none has no value, and the run's mean is the
    // completion-weighted mean of its intervals'.
    // A live switch ends the interval in progress: the row before it holds the old kernel's rates,
    // the same as a run without the switch, and no rate of the new kernel is dated before it.
    void aSwitchEndsTheIntervalInProgress()
    {
        constexpr int raises = metricIndex("softirq_raises_per_s"), iops = metricIndex("iops");
        const Scenario s = load("default");
        Engine a(s), b(s);
        a.runUntil(usec(390));
        b.runUntil(usec(390));
        b.inbox().post({ "kernel.patches.complete-llist", "true" });
        a.runUntil(msec(2));
        b.runUntil(msec(2));
        QVERIFY(!b.series().rows().empty());
        const SeriesRow& cut = b.series().rows().front();
        QCOMPARE(cut.t_ns, usec(390).ns());
        // Over 0..390 µs both runs are one run: the same rates.
        Engine c(s); // cut by a switch that changes nothing
        c.runUntil(usec(390));
        c.inbox().post({ "kernel.patches.complete-llist", "false" });
        c.runUntil(msec(2));
        QCOMPARE(c.series().rows().front().t_ns, usec(390).ns());
        QCOMPARE(cut[raises], c.series().rows().front()[raises]);
        QCOMPARE(cut[iops], c.series().rows().front()[iops]);
        // After it, the llist's softirq raises: more than the run without it in the same interval.
        const SeriesRow& after = b.series().rows()[1];
        QCOMPARE(after.t_ns, msec(1).ns());
        QVERIFY2(after[raises] > c.series().rows()[1][raises],
            (std::to_string(after[raises]) + " vs " + std::to_string(c.series().rows()[1][raises])).c_str());
        QCOMPARE(a.series().rows().front().t_ns, msec(1).ns()); // no switch: whole intervals
    }

    void scriptedLatencyIsInEveryInterval()
    {
        constexpr int iops = metricIndex("iops"), latMean = metricIndex("lat_mean_ns");
        int scripted = 0;
        for (const auto& p : ScenarioLoader::presets()) {
            const Scenario s = load(p.name);
            if (!s.jobs.empty())
                continue;
            ++scripted;
            Engine e(s);
            e.run();
            double weighted = 0, completions = 0;
            std::int64_t before = 0;
            for (const SeriesRow& r : e.series().rows()) {
                const double n = std::round(r[iops] * static_cast<double>(r.t_ns - before) * 1e-9);
                before = r.t_ns;
                // Nothing completed, nothing recorded: no value (a gap in the plot), never a 0.
                QVERIFY2(n == 0 ? std::isnan(r[latMean]) : r[latMean] > 0,
                    (p.name + " at " + std::to_string(r.t_ns) + " ns").c_str());
                if (n > 0) {
                    weighted += n * r[latMean];
                    completions += n;
                }
            }
            QVERIFY2(completions > 0, p.name.c_str());
            const double run = e.totals()[static_cast<std::size_t>(latMean)];
            QVERIFY2(std::abs(weighted / completions - run) <= 1e-9 * run,
                (p.name + ": " + std::to_string(weighted / completions) + " vs " + std::to_string(run)).c_str());
        }
        QVERIFY(scripted >= 1); // shared-hctx-stall, at least
    }

    void snapshotAndTrace()
    {
        Engine e(load("default"));
        TraceRing& ring = e.enableTrace(1 << 12);
        QVERIFY(!e.snapshot());
        e.setSnapshotInterval(usec(100));
        e.runUntil(msec(1));
        const auto snap = e.snapshot();
        QVERIFY(snap);
        QCOMPARE(snap->cpus.size(), std::size_t(8));
        QCOMPARE(snap->hctxs.size(), std::size_t(2));
        QVERIFY(snap->now <= e.now());
        QVERIFY(!snap->requests.empty());
        QVERIFY(snap->counters.completed > 0);
        std::vector<TraceRecord> out;
        const auto dropped = ring.read(out);
        QVERIFY(!out.empty());
        QVERIFY(dropped > 0); // 1 ms of this scenario writes more than 4096 records
        bool sawIpi = false;
        for (const auto& r : out)
            sawIpi |= r.kind == TraceKind::IpiSend;
        QVERIFY(sawIpi);
    }

    // nvme-2s64-1q keeps thousands of completions queued for IPIs to 63 CPUs: a share must count one
    // event population (counting the redirect decisions of an interval against its completions read
    // up to ~500% on the 2017 shape of restart-128x64).
    void sharesStayWithinOneHundredPercent()
    {
        Scenario sc = load("nvme-2s64-1q");
        sc.duration = msec(20);
        Engine e(sc);
        e.run();
        QVERIFY(e.counters().remote > 0);
        for (const auto& r : e.series().rows())
            for (std::size_t i = 0; i < kMetrics.size(); ++i)
                if (kMetrics[i].unit == Unit::Percent)
                    QVERIFY2(r.values[i] >= 0 && r.values[i] <= 100.0 + 1e-9,
                        qPrintable(QString::fromUtf8(kMetrics[i].id.data(), kMetrics[i].id.size())
                            + QStringLiteral(" at ") + QString::number(r.t_ns) + QStringLiteral(": ")
                            + QString::number(r.values[i])));
    }

    // A rate, share or mean of the metric table is in the summary once, as metrics.<id>: no section
    // carries it again under its id or a shortened name (io.iops, completion.remote_pct,
    // tags.local_hit_pct, jobs.sys_pct, cpu.busy.hardirq_pct). Counts may stand in their sections
    // (io.in_flight beside the submitted and completed it adds up with); per-CPU rows use the id.
    void summaryNamesEachMetricOnce()
    {
        Scenario sc = load("axboe-4s64-far-high");
        sc.duration = msec(2);
        Engine e(sc);
        e.run();
        const nlohmann::json s = e.summary();
        std::vector<std::string> outside; // "section.key" of every key outside metrics and per_cpu
        const std::function<void(const nlohmann::json&, const std::string&)> walk
            = [&](const nlohmann::json& j, const std::string& at) {
                  if (!j.is_object())
                      return;
                  for (const auto& [key, value] : j.items()) {
                      const std::string path = at.empty() ? key : at + "." + key;
                      if (path == "metrics" || path == "cpu.per_cpu")
                          continue;
                      outside.push_back(key);
                      walk(value, path);
                  }
              };
        walk(s, "");
        int checked = 0;
        for (const Metric& m : kMetrics) {
            QVERIFY2(s["metrics"].contains(std::string(m.id)), std::string(m.id).c_str());
            if (m.unit == Unit::Count)
                continue;
            std::vector<std::string> names = { std::string(m.id) };
            for (const std::string prefix : { "tag_", "job_", "busy_" })
                if (m.id.starts_with(prefix))
                    names.push_back(std::string(m.id.substr(prefix.size())));
            for (const std::string& name : names)
                QVERIFY2(std::find(outside.begin(), outside.end(), name) == outside.end(),
                    (name + " is in a section besides metrics." + std::string(m.id)).c_str());
            ++checked;
        }
        QVERIFY(checked > 30);
    }

    void timeSeriesCoversTheRun()
    {
        Engine e(load("default"));
        e.run();
        const auto& rows = e.series().rows();
        QCOMPARE(rows.size(), std::size_t(20)); // 20 ms at the default 1 ms interval
        double completions = 0;
        for (const auto& r : rows)
            completions += r[metricIndex("iops")] * 1e-3;
        QVERIFY(std::abs(completions - static_cast<double>(e.counters().completed)) < 1.0);
        QVERIFY(rows.back()[metricIndex("busy_hardirq_pct")] > 0);
    }
};

QTEST_GUILESS_MAIN(TestEngine)
#include "tst_engine.moc"
