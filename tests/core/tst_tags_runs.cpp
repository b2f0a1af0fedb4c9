// Whole runs with each allocator: fio's user and system time, the lock profile by caller, the
// latency of tag allocation, and the tags in use against the requests that hold them.
#include "TagTestUtil.h"

#include "block/BlockLayer.h"
#include "scenario/ScenarioLoader.h"

#include <map>

using namespace blkmq;
using namespace blkmq::test;

class TestTagRuns : public QObject {
    Q_OBJECT
private slots:
    // fio's usr= and sys=: each submission charges fio_user_ns of user time, and everything else on a
    // CPU while a job thread is current (its system calls, the interrupts that land on it) is system time.
    void jobTimeSplitsIntoUserAndSystem()
    {
        Engine e(load("single-core-null", { "duration=\"1ms\"", "costs.fio_user_ns=50" }));
        e.run();
        const Counters& c = e.counters();
        QVERIFY(c.submitted > 1000);
        QCOMPARE(c.job_user_ns, 50 * c.submitted);
        std::int64_t busy = 0;
        for (int cpu = 0; cpu < e.machine().nrCpus(); ++cpu)
            for (const auto ns : e.machine().cpu(cpu).busy)
                busy += ns;
        // one job on one busy CPU: nearly all of it is the job's, and never more than all
        QVERIFY(c.job_user_ns + c.job_sys_ns <= static_cast<std::uint64_t>(busy));
        QVERIFY(c.job_user_ns + c.job_sys_ns > static_cast<std::uint64_t>(busy) * 9 / 10);
        const auto s = e.summary();
        QCOMPARE(s["metrics"]["job_usr_pct"].get<double>(), 100.0 * 50 * c.submitted / 1e6); // 1 thread over 1 ms
        const auto bad = ScenarioLoader::fromText("{}", "t", { "costs.fio_user_ns=999999" });
        QVERIFY(!bad.ok());
        QVERIFY(bad.error().rfind("costs.fio_user_ns: must be at most costs.submit_ns", 0) == 0);
    }

    // v3.14's blk_mq_map_swqueue() gives hctx 0 a ctx for every offline possible CPU, so with the cache
    // sized by hctx->nr_ctx the boot CPU's hw queue keeps a small cache and the others a large one
    // (Ming Lei's 4-CPU VM); with no CPU offline every hw queue has one ctx and the same cache.
    void offlineCpusCountInTheFirstHctx()
    {
        const auto localPct = [](int possible) {
            Engine e(load("ming-vm4-4q",
                { "kernel.patches.ida-cache-per-ctx=true", "possible_cpus=" + std::to_string(possible),
                    "duration=\"5ms\"" }));
            e.run();
            const auto s = e.summary();
            return std::pair(s["cpu"]["per_cpu"][0]["tag_local_hit_pct"].get<double>(),
                s["cpu"]["per_cpu"][1]["tag_local_hit_pct"].get<double>());
        };
        const auto [boot16, other16] = localPct(16); // hctx 0: 1 + 12 ctxs, a cache of 64 / 13 = 4
        QVERIFY2(other16 > 90 && boot16 < other16 - 20, qPrintable(QStringLiteral("%1 %2").arg(boot16).arg(other16)));
        const auto [boot4, other4] = localPct(4); // every hctx: one ctx, a cache of 64
        QVERIFY2(boot4 > 90 && other4 > 90, qPrintable(QStringLiteral("%1 %2").arg(boot4).arg(other4)));
    }

    // perf's _raw_spin_lock by caller: mtip32xx's cmd_issue_lock costs nothing to one submitting CPU
    // and is fought over by several; percpu_ida's locks appear under alloc and free.
    void lockProfileNamesTheCaller()
    {
        const auto queueRqNs = [](const char* cpus, int numjobs) {
            nlohmann::json doc = {
                { "topology", "axboe-4s64" },
                { "duration", "1ms" },
                { "devices",
                    { { { "name", "rssda" }, { "hw_queue_depth", 255 }, { "irq_affinity", { 0 } },
                        { "cmd_issue_lock", true },
                        { "completion_nsec", { { "dist", "fixed" }, { "value", "20us" } } } } } },
                { "workload",
                    { { "jobs",
                        { { { "name", "j" }, { "device", "rssda" }, { "numjobs", numjobs }, { "iodepth", 8 },
                            { "cpus_allowed", cpus }, { "cpus_allowed_policy", "split" } } } } } },
                { "kernel", { { "tags", "percpu_ida" } } },
            };
            Engine e(load(doc.dump()));
            e.run();
            [&] { QVERIFY(e.counters().completed > 100); }();
            return std::pair(e.counters().lock_ns, e.counters().job_lock_ns);
        };
        const auto [one, oneJob] = queueRqNs("0", 1);
        QCOMPARE(one[static_cast<std::size_t>(LockCaller::QueueRq)], std::uint64_t(0));
        const auto [many, manyJob] = queueRqNs("0-3,8-11", 8);
        QVERIFY(many[static_cast<std::size_t>(LockCaller::QueueRq)] > 0);
        QVERIFY(many[static_cast<std::size_t>(LockCaller::PercpuIdaAlloc)] > 0);
        QVERIFY(many[static_cast<std::size_t>(LockCaller::PercpuIdaFree)] > 0);
        for (std::size_t k = 0; k < many.size(); ++k)
            QVERIFY(manyJob[k] <= many[k]);
        QVERIFY(manyJob[static_cast<std::size_t>(LockCaller::PercpuIdaAlloc)] > 0);
    }

    // Allocation latency, first blk_mq_get_tag() to the tag: on a sparse tag space nobody sleeps and it
    // is the allocator's own cost; on a full one submitters sleep until a completion frees a tag, so
    // it grows to device-service scale. Every submission is one sample.
    void tagAllocationLatencyCountsTheSleeps()
    {
        const auto run = [](const char* preset) {
            Engine e(load(preset, { "duration=\"2ms\"" }));
            e.run();
            const auto t = e.summary()["tags"];
            [&] { QCOMPARE(t["alloc_latency_ns"]["samples"].get<std::uint64_t>(), e.counters().submitted); }();
            return t;
        };
        const auto sparse = run("overstreet-sparse-tagspace");
        const auto full = run("overstreet-full-tagspace");
        QCOMPARE(sparse["sleeps"].get<std::uint64_t>(), std::uint64_t(0));
        QVERIFY(sparse["alloc_latency_ns"]["mean"].get<double>() < 1000); // below a microsecond
        QVERIFY(full["sleeps"].get<std::uint64_t>() > 0);
        QVERIFY(full["wakeups"].get<std::uint64_t>() > 0);
        QVERIFY(full["alloc_latency_ns"]["mean"].get<double>() > 10 * sparse["alloc_latency_ns"]["mean"].get<double>());
        QVERIFY(full["alloc_latency_ns"]["p99"].get<double>() > 10'000); // slept across completions
    }

    // Whole runs with every allocator: at the end the tags in use are the ones requests hold.
    void runsWithEveryAllocatorBalance()
    {
        for (const auto& a : TagRegistry::all()) {
            for (const char* preset : { "nvme-2s64-mq", "restart-128x64", "shared-hctx-stall" }) {
                Engine e(load(preset, { "kernel.tags=\"" + a.name + "\"", "duration=\"2ms\"" }));
                e.run();
                const BlockLayer& b = e.block();
                std::map<int, int> byTags;
                for (std::size_t i = 0; i < b.poolSize(); ++i) {
                    const Request& r = b.request(static_cast<int>(i));
                    if (r.state != RqState::Free && r.tag >= 0)
                        ++byTags[b.hctxs()[static_cast<std::size_t>(r.hctx)].tags];
                }
                int total = 0;
                for (const TagSet& set : b.tagSets())
                    for (int t = 0; t < set.nrHwQueues; ++t) {
                        const TagAllocator& alloc = b.tags(set.firstTags + t).alloc();
                        QCOMPARE(alloc.inUse(), byTags[set.firstTags + t]);
                        QVERIFY(alloc.inUse() <= alloc.depth());
                        total += alloc.inUse();
                    }
                if (std::string(preset) != "shared-hctx-stall") // its stuck requests hold no driver tag
                    QVERIFY2(total > 0, preset); // the check saw requests in flight
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestTagRuns)
#include "tst_tags_runs.moc"
