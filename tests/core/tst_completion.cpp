// The completion patches of the 2020 completion thread and the contexts a completion runs in (hardirq, softirq,
// ksoftirqd, threaded irq, process context).
#include "TestUtil.h"

#include "block/BlockLayer.h"
#include "scenario/KernelSwitches.h"

#include <map>

using namespace blkmq;
using namespace blkmq::test;

namespace {
// Multi-queue drive, all vectors on CPU 0; jobs on the other node: every completion is remote.
const char* kRemoteMq = R"({"topology":"2n:1p:2c:1t","duration":"3ms",
    "devices":[{"name":"nvme0","irqmode":"nvme","submit_queues":2,"irq_affinity":[0,0],
                "completion_nsec":{"dist":"uniform","min":"1us","max":"4us"}}],
    "workload":{"jobs":[{"iodepth":16,"numjobs":2,"cpus_allowed":"2-3","cpus_allowed_policy":"split"}]}})";

std::string patch(const char* id, bool on = true)
{
    return std::string("kernel.patches.") + id + "=" + (on ? "true" : "false");
}
}

class TestCompletion : public QObject {
    Q_OBJECT
private slots:
    void registryDescribesEveryPatch()
    {
        int patches = 0;
        for (const auto& sw : KernelSwitches::all()) {
            if (sw.key.rfind("patches.", 0) != 0 || sw.family != "completion")
                continue;
            ++patches;
            const Provenance& p = sw.from;
            QVERIFY(!p.subject.empty() && !p.author.empty() && !p.version.empty() && !p.effect.empty());
            QVERIFY(ScenarioLoader::fromText("{}", "t", { patch(sw.key.substr(8).c_str()) }).ok());
        }
        QCOMPARE(patches, 6);
        const auto bad = ScenarioLoader::fromText("{}", "t", { "kernel.patches.complete-fast=true" });
        QVERIFY(!bad.ok());
        QVERIFY(bad.error().find("complete-llist") != std::string::npos); // names the valid ids
    }

    // Liu Song's v6.1 rule: a request whose hctx has one CPU completes where the interrupt lands, even
    // across caches. Each CPU has its own queue here, its vector on the other node.
    void singleCtxHctxCompletesLocally()
    {
        const char* oneCpuEach = R"({"topology":"2n:1p:2c:1t","duration":"2ms",
            "devices":[{"name":"vda","irqmode":"virtio","submit_queues":4,"queue_map":["0","1","2","3"],
                        "irq_affinity":[2,3,0,1],"completion_nsec":"3us"}],
            "workload":{"jobs":[{"iodepth":4,"numjobs":4,"cpus_allowed":"0-3","cpus_allowed_policy":"split"}]}})";
        const auto base = run(oneCpuEach);
        const auto patched = run(oneCpuEach, { patch("complete-single-ctx-local") });
        QVERIFY(allRemote(base)); // the vector's CPU is on the other node: sent back to the submitter
        QVERIFY(u(base["completion"]["ipis"]) > 0);
        QCOMPARE(u(patched["completion"]["remote"]), std::uint64_t(0));
        QCOMPARE(u(patched["completion"]["ipis"]), std::uint64_t(0));
        QVERIFY(u(patched["io"]["completed"]) > 1000);
        // With two CPUs on a queue the rule does not apply.
        const auto shared = run(R"({"topology":"2n:1p:2c:1t","duration":"2ms",
            "devices":[{"name":"vda","irqmode":"virtio","submit_queues":2,"queue_map":["0,2","1,3"],
                        "irq_affinity":[2,3],"completion_nsec":"3us"}],
            "workload":{"jobs":[{"iodepth":4,"numjobs":4,"cpus_allowed":"0-3","cpus_allowed_policy":"split"}]}})",
            { patch("complete-single-ctx-local") });
        QVERIFY(u(shared["completion"]["remote"]) > 0);
    }

    // kernel.version sets a kernel's switches; a switch set beside it wins.
    void versionSetsItsKernelsSwitches()
    {
        const Scenario v61 = load("{}", { "kernel.version=v6.1" });
        QVERIFY(v61.kernel.patches.llist && v61.kernel.patches.remoteSoftirq && v61.kernel.patches.noRemoteThreaded
            && v61.kernel.patches.singleCtxLocal);
        QCOMPARE(v61.kernel.dispatch, DispatchMode::V4_15);
        QCOMPARE(v61.kernel.restart, std::string("own-hctx"));
        const Scenario custom = load("{}");
        QVERIFY(!custom.kernel.patches.llist && !custom.kernel.patches.singleCtxLocal);
        QCOMPARE(custom.kernel.dispatch, DispatchMode::V4_11);
        const Scenario overridden
            = load(R"({"kernel":{"version":"v6.1","patches":{"complete-llist":false},"dispatch":"v4.11"}})");
        QVERIFY(!overridden.kernel.patches.llist && overridden.kernel.patches.remoteSoftirq);
        QCOMPARE(overridden.kernel.dispatch, DispatchMode::V4_11);
        const auto bad = ScenarioLoader::fromText("{}", "t", { "kernel.version=v9.9" });
        QVERIFY(!bad.ok());
        QVERIFY2(
            bad.error().find("kernel.version") != std::string::npos && bad.error().find("v6.1") != std::string::npos,
            bad.error().c_str());
    }

    // queue_map as the kernel printed it: one cpulist per hw queue, every CPU once.
    void explicitQueueMapIsChecked_data()
    {
        QTest::addColumn<QString>("map");
        QTest::addColumn<QString>("message");
        QTest::newRow("a CPU twice") << u"[\"0,1\",\"1\"]"_qs
                                     << u"devices[0].queue_map[1]: CPU 1 is already mapped to hw queue 0"_qs;
        QTest::newRow("a CPU left out") << u"[\"0\",\"1\"]"_qs << u"devices[0].queue_map: maps no hw queue to CPU 2"_qs;
        QTest::newRow("too few lists") << u"[\"0-3\"]"_qs
                                       << u"devices[0].queue_map: must list one cpulist per hw queue (2), got 1"_qs;
        QTest::newRow("no such CPU") << u"[\"0-1\",\"2-4\"]"_qs << u"devices[0].queue_map[1]: CPU 4 does not exist"_qs;
    }
    void explicitQueueMapIsChecked()
    {
        QFETCH(QString, map);
        QFETCH(QString, message);
        const std::string text
            = R"({"topology":"4c","devices":[{"submit_queues":2,"queue_map":)" + map.toStdString() + "}]}";
        const auto r = ScenarioLoader::fromText(text, "t", {});
        QVERIFY(!r.ok());
        QVERIFY2(r.error().find(message.toStdString()) != std::string::npos, r.error().c_str());
    }

    void noRemoteThreadedStopsIpis()
    {
        const auto base = run(kRemoteMq, { "kernel.threadirqs=true" });
        const auto patched = run(kRemoteMq, { "kernel.threadirqs=true", patch("complete-no-remote-threaded") });
        const auto unthreaded = run(kRemoteMq, { patch("complete-no-remote-threaded") });
        QVERIFY(u(base["completion"]["ipis"]) > 0);
        QCOMPARE(u(patched["completion"]["ipis"]), std::uint64_t(0));
        QCOMPARE(u(patched["completion"]["remote"]), std::uint64_t(0));
        QVERIFY(u(patched["io"]["completed"]) > 1000);
        QVERIFY(u(unthreaded["completion"]["ipis"]) > 0); // only matters with threadirqs
    }

    void remoteSoftirqNeverCompletesInHardirq()
    {
        const auto base = run(kRemoteMq);
        const auto patched = run(kRemoteMq, { patch("complete-remote-softirq") });
        QVERIFY(allRemote(base) && allRemote(patched));
        QCOMPARE(u(base["completion"]["by_context"]["hardirq"]), u(base["io"]["completed"]));
        QCOMPARE(u(patched["completion"]["by_context"]["hardirq"]), std::uint64_t(0));
        QCOMPARE(u(patched["completion"]["by_context"]["softirq"]), u(patched["io"]["completed"]));
        QVERIFY(u(patched["completion"]["softirq_raises"]) > 0);
        QCOMPARE(u(base["completion"]["softirq_raises"]), std::uint64_t(0));
        // the extra hop costs time on the way to ->complete
        QVERIFY(patched["completion"]["delay_ns"]["mean"].get<double>()
            > base["completion"]["delay_ns"]["mean"].get<double>());
    }

    void llistSendsFewerIpisAndKeepsFifo()
    {
        Engine base(load(kRemoteMq));
        base.run();
        Engine e(load(kRemoteMq, { patch("complete-llist") }));
        TraceRing& ring = e.enableTrace(1 << 20);
        e.run();
        const auto s = e.summary();
        const auto b = base.summary();
        QVERIFY(allRemote(s));
        QVERIFY(u(s["completion"]["ipis"]) < u(s["completion"]["remote"]));
        // back-to-back completions for one CPU join its list: fewer IPIs than one csd per request
        QVERIFY(u(s["completion"]["ipis"]) < u(b["completion"]["ipis"]));
        QVERIFY(u(s["completion"]["ipis_saved"]) > u(b["completion"]["ipis_saved"]));
        // nothing lost
        QCOMPARE(u(s["io"]["submitted"]), u(s["io"]["completed"]) + u(s["io"]["in_flight"]));
        QVERIFY(
            std::abs(static_cast<double>(u(s["io"]["completed"])) / static_cast<double>(u(b["io"]["completed"])) - 1.0)
            < 0.05);
        // FIFO: each CPU completes its blk_cpu_done in the order requests were added.
        std::vector<TraceRecord> out;
        QCOMPARE(ring.read(out), std::uint64_t(0));
        std::map<int, std::vector<int>> added, completed;
        for (const auto& r : out) {
            if (r.kind == TraceKind::DoneListAdd)
                added[r.arg].push_back(r.rq);
            else if (r.kind == TraceKind::Complete && r.arg == static_cast<int>(ExecContext::Softirq))
                completed[r.cpu].push_back(r.rq);
        }
        QVERIFY(!added.empty());
        QVERIFY(!completed.empty());
        for (auto& [cpu, order] : completed) {
            const auto& in = added[cpu];
            QVERIFY(order.size() <= in.size());
            QVERIFY2(std::equal(order.begin(), order.end(), in.begin()), qPrintable(QString::number(cpu)));
        }
    }

    void usbStorage_data()
    {
        QTest::addColumn<QString>("patches");
        QTest::addColumn<QString>("context"); // where ->complete runs
        QTest::addColumn<bool>("wakesKsoftirqd");
        QTest::newRow("baseline") << QString() << u"ksoftirqd"_qs << true;
        QTest::newRow("llist (preempt_disable)") << u"complete-llist"_qs << u"ksoftirqd"_qs << true;
        QTest::newRow("local-bh") << u"complete-local-bh"_qs << u"softirq"_qs << false;
        QTest::newRow("llist + local-bh") << u"complete-llist,complete-local-bh"_qs << u"softirq"_qs << false;
        QTest::newRow("process-direct") << u"complete-process-direct"_qs << u"process"_qs << false;
    }
    void usbStorage()
    {
        QFETCH(QString, patches);
        QFETCH(QString, context);
        QFETCH(bool, wakesKsoftirqd);
        std::vector<std::string> sets;
        for (const auto& id : patches.split(u',', Qt::SkipEmptyParts))
            sets.push_back(patch(id.toStdString().c_str()));
        const auto s = run("usb-storage", sets);
        const auto completed = u(s["io"]["completed"]);
        QVERIFY(completed > 100);
        QCOMPARE(u(s["completion"]["by_context"][context.toStdString()]), completed);
        const auto wakeups = u(s["completion"]["ksoftirqd_wakeups"]);
        if (wakesKsoftirqd)
            QVERIFY2(wakeups >= completed, qPrintable(QString::number(wakeups))); // one per request
        else
            QCOMPARE(wakeups, std::uint64_t(0));
        if (context == u"process"_qs)
            QCOMPARE(u(s["completion"]["softirq_raises"]), std::uint64_t(0));
    }

    void threadirqsRtPreset()
    {
        const auto base = run("threadirqs-rt");
        const auto p2 = run("threadirqs-rt", { patch("complete-remote-softirq") });
        const auto p1 = run("threadirqs-rt", { patch("complete-no-remote-threaded") });
        QVERIFY(u(base["completion"]["ipis"]) > 0);
        QCOMPARE(u(base["completion"]["ksoftirqd_wakeups"]), std::uint64_t(0)); // multi-queue: ->complete in the IPI
        QVERIFY(u(p2["completion"]["ksoftirqd_wakeups"]) > 0); // the IPI-raised softirq goes to ksoftirqd
        QVERIFY(u(p2["completion"]["by_context"]["ksoftirqd"]) > 0);
        QCOMPARE(u(p1["completion"]["ipis"]), std::uint64_t(0));
        QCOMPARE(u(p1["completion"]["ksoftirqd_wakeups"]), std::uint64_t(0));
    }

    void napiCompletesInNetRxAndSendsIpis()
    {
        const auto base = run("nvme-tcp-napi");
        const auto p2 = run("nvme-tcp-napi", { patch("complete-remote-softirq") });
        const auto& c = base["completion"];
        QVERIFY(u(c["remote"]) > 0);
        QVERIFY(u(c["by_context"]["softirq"]) + u(c["by_context"]["ksoftirqd"]) > 0); // local ones, in NET_RX
        QVERIFY(u(c["by_context"]["hardirq"]) > 0); // remote ones, in the IPI
        QCOMPARE(u(p2["completion"]["by_context"]["hardirq"]), std::uint64_t(0));
        QVERIFY(u(p2["completion"]["softirq_raises"]) > u(c["softirq_raises"]));
    }

    // IBNBD-like RDMA: the completion lands on the CQ of the submitting CPU's connection and is
    // completed in the IRQ_POLL softirq there; one interrupt starts a poll that reaps many entries.
    void rdmaCompletesOnTheSubmitterInIrqPoll()
    {
        const std::string s = R"({"topology":"2n:1p:2c:1t","duration":"3ms",
            "devices":[{"irqmode":"rdma","submit_queues":4,"irq_affinity":[0,0,0,0],"completion_nsec":"5us"}],
            "workload":{"jobs":[{"iodepth":16,"numjobs":2,"cpus_allowed":"2-3","cpus_allowed_policy":"split"}]}})";
        const auto r = run(s);
        const auto& c = r["completion"];
        const auto completed = u(r["io"]["completed"]);
        QVERIFY(completed > 1000);
        QCOMPARE(u(c["remote"]), std::uint64_t(0)); // the vectors' CPU 0 plays no part
        QCOMPARE(u(c["ipis"]), std::uint64_t(0));
        QCOMPARE(u(c["by_context"]["softirq"]) + u(c["by_context"]["ksoftirqd"]), completed);
        QVERIFY(u(r["cpu"]["hardirqs"]) < completed); // irq_poll reaps several entries per interrupt
        for (const auto& [context, ns] : r["cpu"]["per_cpu"][0].items())
            QVERIFY2(ns.get<std::int64_t>() == 0, context.c_str()); // CPU 0 stays idle
    }

    // v3.15's mtip32xx: one interrupt takes every slot group's completed register; group 0 is completed
    // in the handler, the others in work items bound to the card node's CPUs (0, 1, 2 here), and the
    // interrupt stays off until the last of them is done. Every request ends where it was found: no
    // IPI although rq_affinity 2 asks for one, so percpu_ida's tags go back to the caches of CPUs 0-2
    // and the submitters on the other node seldom find one in their own.
    void mtip32xxCompletesInBatchesOnTheCardsNode()
    {
        const std::string s = R"({"topology":"2n:1p:4c:1t","duration":"4ms","kernel":{"tags":"percpu_ida"},
            "devices":[{"name":"rssda","irqmode":"mtip32xx","hw_queue_depth":255,"irq_affinity":[0],
                        "rq_affinity":2,"completion_nsec":{"dist":"uniform","min":"20us","max":"40us"}}],
            "workload":{"jobs":[{"iodepth":32,"numjobs":4,"cpus_allowed":"4-7","cpus_allowed_policy":"split"}]}})";
        const auto r = run(s);
        const auto completed = u(r["io"]["completed"]);
        QVERIFY(completed > 2000);
        QCOMPARE(u(r["completion"]["remote"]), std::uint64_t(0));
        QCOMPARE(u(r["completion"]["ipis"]), std::uint64_t(0));
        const auto& by = r["completion"]["by_context"];
        QVERIFY(u(by["hardirq"]) > 0 && u(by["process"]) > 0); // group 0 in the handler, the rest in kworkers
        QCOMPARE(u(by["hardirq"]) + u(by["process"]), completed);
        // Completions wait in the registers while the interrupt is off: one interrupt serves many.
        QVERIFY2(u(r["cpu"]["hardirqs"]) * 8 < completed, r["cpu"]["hardirqs"].dump().c_str());
        const auto& cpus = r["cpu"]["per_cpu"];
        QVERIFY(cpus[0]["hardirq_ns"].get<std::int64_t>() > 0);
        for (int c : { 0, 1, 2 })
            QVERIFY(cpus[c]["kworker_ns"].get<std::int64_t>() > 0); // groups 3, 1/4/7, 2/5/6
        for (int c = 1; c < 8; ++c)
            QCOMPARE(cpus[c]["hardirq_ns"].get<std::int64_t>(), std::int64_t(0));
        for (int c = 3; c < 8; ++c)
            QCOMPARE(cpus[c]["kworker_ns"].get<std::int64_t>(), std::int64_t(0));
        // Under the nvme model the same rq_affinity sends each request back to its submitter, whose
        // cache then gets the tag. Here the tags reach the submitters only through the global freelist
        // (percpu_ida_free spills full caches of CPUs 0-2 into it), so each cache serves less.
        const auto nvme = run(s, { "devices.rssda.irqmode=\"nvme\"" });
        QVERIFY(u(nvme["completion"]["remote"]) > 0);
        QVERIFY(u(r["tags"]["global_moves"]) > 20 * u(nvme["tags"]["global_moves"]));
        for (int c = 4; c < 8; ++c)
            QVERIFY2(cpus[c]["tag_local_hit_pct"].get<double>()
                    < nvme["cpu"]["per_cpu"][c]["tag_local_hit_pct"].get<double>(),
                std::to_string(c).c_str());
        // One hw queue of at most 255 tags, as the driver has.
        const auto two = ScenarioLoader::fromText(s, "t", { "devices.rssda.submit_queues=2" });
        QVERIFY(!two.ok());
        QVERIFY2(two.error().find("devices[0].irqmode") != std::string::npos, two.error().c_str());
    }

    void netRxLoadDelaysBlockSoftirq()
    {
        const std::string s = R"({"topology":"2c","duration":"5ms",
            "devices":[{"irqmode":"nvme","submit_queues":1,"irq_affinity":[0],"completion_nsec":"10us"}],
            "workload":{"jobs":[{"iodepth":4,"cpus_allowed":[1]}]}})";
        const auto quiet = run(s);
        const auto busy = run(s, { R"(workload.net_rx=[{"cpus":[0],"pps":300000,"cost":"2us"}])" });
        // NET_RX runs before BLOCK in __do_softirq and eats CPU 0: completions wait longer
        QVERIFY(
            busy["completion"]["delay_ns"]["p99"].get<double>() > quiet["completion"]["delay_ns"]["p99"].get<double>());
        QVERIFY(busy["metrics"]["busy_softirq_pct"].get<double>() + busy["metrics"]["busy_ksoftirqd_pct"].get<double>()
            > 20.0);
    }

    void polledRequestsCompleteWhereFound()
    {
        const auto s = run(kRemoteMq, { "workload.jobs.0.hipri=true", "devices.nvme0.rq_affinity=2" });
        QVERIFY(u(s["io"]["completed"]) > 1000);
        QCOMPARE(u(s["completion"]["remote"]), std::uint64_t(0));
        QCOMPARE(u(s["completion"]["by_context"]["process"]), u(s["io"]["completed"]));
        QCOMPARE(u(s["cpu"]["hardirqs"]), std::uint64_t(0));
        QVERIFY(s["cpu"]["per_cpu"][2]["task_ns"].get<double>() > 0.99 * s["sim_time_ns"].get<double>()); // spinning
    }

    void togglingMidRunTakesEffectAtTheMarker()
    {
        Engine e(load(kRemoteMq));
        e.setSnapshotInterval(usec(10));
        e.runUntil(msec(1));
        const auto raisesBefore = e.counters().softirq_raises;
        QCOMPARE(raisesBefore, std::uint64_t(0));
        e.inbox().post({ "kernel.patches.complete-remote-softirq", "true" });
        e.runUntil(msec(2));
        QVERIFY(e.counters().softirq_raises > 0);
        QCOMPARE(e.markers().size(), std::size_t(1));
        QCOMPARE(e.markers()[0].t_ns, msec(1).ns());
        const auto hardirqBefore = e.counters().complete_by_context[static_cast<int>(ExecContext::Hardirq)];
        e.inbox().post({ "kernel.patches.complete-remote-softirq", "false" });
        e.run();
        QVERIFY(e.counters().complete_by_context[static_cast<int>(ExecContext::Hardirq)] > hardirqBefore);
        QCOMPARE(e.markers().size(), std::size_t(2));
        QCOMPARE(e.markers()[1].text, std::string("kernel.patches.complete-remote-softirq=false"));
    }

    void seriesLeavesSingleCoreAlone()
    {
        const auto base = run("single-core-null");
        const auto all = run("single-core-null",
            { patch("complete-no-remote-threaded"), patch("complete-remote-softirq"), patch("complete-llist") });
        QCOMPARE(u(all["completion"]["ipis"]), std::uint64_t(0));
        QCOMPARE(base["metrics"]["iops"].get<double>(), all["metrics"]["iops"].get<double>());
    }

    void managedSpreadKeepsVectorsOnTheirNode()
    {
        Engine e(load(R"({"topology":"2n:1p:4c:2t","devices":[{"submit_queues":4}]})"));
        const auto& hctxs = e.block().hctxs();
        QCOMPARE(hctxs.size(), std::size_t(4));
        const auto& topo = e.scenario().topology;
        for (const auto& h : hctxs) {
            QVERIFY(!h.cpus.empty());
            for (int cpu : h.cpus)
                QCOMPARE(topo.cpu(cpu).node, topo.cpu(h.vectorCpu).node);
        }
        // siblings share a queue
        QCOMPARE(e.block().queues()[0].cpuToHctx[0], e.block().queues()[0].cpuToHctx[8]);
    }
};

QTEST_GUILESS_MAIN(TestCompletion)
#include "tst_completion.moc"
