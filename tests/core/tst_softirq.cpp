// The softirq / IPI machinery of KERNEL_NOTES §2, observed through whole runs.
#include "TestUtil.h"
#include "cpu/Machine.h"

using namespace blkmq;
using namespace blkmq::test;

class TestSoftirq : public QObject {
    Q_OBJECT
private slots:
    // null_blk irqmode=softirq with one hw queue: blk_mq_complete_request()
    // runs in the submitter's task context and raises BLOCK_SOFTIRQ with
    // raise_softirq_irqoff() outside interrupt context: ksoftirqd is woken
    // and every ->complete runs there.
    void raiseFromTaskContextWakesKsoftirqd()
    {
        const auto s = run(R"({"topology":"1c","duration":"2ms",
            "devices":[{"name":"nullb0","irqmode":"softirq","submit_queues":1}],
            "workload":{"jobs":[{"iodepth":4}]}})");
        const auto& c = s["completion"];
        QVERIFY(u(s["io"]["completed"]) > 100);
        QVERIFY(u(c["ksoftirqd_wakeups"]) > 0);
        QCOMPARE(u(c["by_context"]["ksoftirqd"]), u(s["io"]["completed"]));
        QCOMPARE(u(c["by_context"]["hardirq"]), std::uint64_t(0));
        QVERIFY(s["metrics"]["busy_ksoftirqd_pct"].get<double>() > 0);
    }

    // The same device with two hw queues completes inline: no softirq at all.
    void multiQueueInlineCompletionRaisesNothing()
    {
        const auto s = run(R"({"topology":"1c","duration":"2ms",
            "devices":[{"name":"nullb0","irqmode":"softirq","submit_queues":2}],
            "workload":{"jobs":[{"iodepth":4}]}})");
        QCOMPARE(u(s["completion"]["softirq_raises"]), std::uint64_t(0));
        QCOMPARE(u(s["completion"]["by_context"]["process"]), u(s["io"]["completed"]));
    }

    // One hw queue, NVMe-like interrupts on the submitting CPU: the raise
    // happens in hardirq and the softirq runs at irq_exit, never in ksoftirqd.
    void raiseInHardirqRunsAtIrqExit()
    {
        const auto s = run(R"({"topology":"1c","duration":"2ms",
            "devices":[{"name":"nvme0","irqmode":"nvme","submit_queues":1,"completion_nsec":"5us"}],
            "workload":{"jobs":[{"iodepth":4}]}})");
        const auto& c = s["completion"];
        QVERIFY(u(s["io"]["completed"]) > 100);
        QVERIFY(u(c["softirq_raises"]) > 0);
        QCOMPARE(u(c["ksoftirqd_wakeups"]), std::uint64_t(0));
        QCOMPARE(u(c["by_context"]["softirq"]), u(s["io"]["completed"]));
    }

    // Under threadirqs an IPI is still a hardirq; the softirq it raises is
    // pending at irq_exit, which then wakes ksoftirqd instead of running it.
    void threadirqsIpiRaisedSoftirqWakesKsoftirqd()
    {
        const std::string scenario = R"({"topology":"2n:1p:2c:1t","duration":"3ms",
            "devices":[{"name":"nvme0","irqmode":"nvme","submit_queues":1,"completion_nsec":"20us"}],
            "workload":{"jobs":[{"iodepth":8,"cpus_allowed":[2]}]}})";
        const auto plain = run(scenario);
        const auto threaded = run(scenario, { "kernel.threadirqs=true" });
        // CPU 2 is on the other node: every completion goes back by IPI.
        QVERIFY(allRemote(plain));
        QCOMPARE(u(plain["completion"]["ksoftirqd_wakeups"]), std::uint64_t(0));
        QCOMPARE(u(plain["completion"]["by_context"]["softirq"]), u(plain["io"]["completed"]));
        QVERIFY(u(threaded["completion"]["ksoftirqd_wakeups"]) > 0);
        QCOMPARE(u(threaded["completion"]["by_context"]["ksoftirqd"]), u(threaded["io"]["completed"]));
    }

    // Under threadirqs the device handler runs in its irq thread with bh
    // disabled; the softirq it raises runs at local_bh_enable in the thread.
    void threadirqsDeviceHandlerRunsSoftirqAtBhEnable()
    {
        const auto s = run(R"({"topology":"1c","duration":"2ms","kernel":{"threadirqs":true},
            "devices":[{"name":"nvme0","irqmode":"nvme","submit_queues":1,"completion_nsec":"5us"}],
            "workload":{"jobs":[{"iodepth":4}]}})");
        QVERIFY(u(s["io"]["completed"]) > 100);
        QCOMPARE(u(s["completion"]["by_context"]["softirq"]), u(s["io"]["completed"]));
        QCOMPARE(u(s["completion"]["ksoftirqd_wakeups"]), std::uint64_t(0));
        QVERIFY(s["metrics"]["busy_irq_thread_pct"].get<double>() > 0);
    }

    // Multi-queue remote completion: ->complete runs in the IPI's hardirq,
    // and IPIs are batched by the call-single queue (sent only when empty).
    void ipiBatchingNeverExceedsRemoteCompletions()
    {
        const auto s = run(R"({"topology":"2n:1p:2c:1t","duration":"3ms",
            "devices":[{"name":"nvme0","irqmode":"nvme","submit_queues":2,"irq_affinity":[0,0],
                        "completion_nsec":{"dist":"uniform","min":"1us","max":"3us"}}],
            "workload":{"jobs":[{"iodepth":16,"numjobs":2,"cpus_allowed":"2-3","cpus_allowed_policy":"split"}]}})");
        const auto& c = s["completion"];
        QVERIFY(allRemote(s));
        QVERIFY(u(c["ipis"]) < u(c["remote"]));
        QCOMPARE(u(c["ipis_saved"]), u(c["remote"]) - u(c["ipis"]));
        QCOMPARE(u(c["by_context"]["hardirq"]), u(s["io"]["completed"]));
    }

    // The kernel-path strip's data: what a CPU executes, level by level, in the kernel's words.
    void kernelPathNamesEveryLevel()
    {
        const std::string nvme = R"({"topology":"1c","duration":"2ms",
            "devices":[{"name":"nvme0","irqmode":"nvme","submit_queues":1,"completion_nsec":"5us"}],
            "workload":{"jobs":[{"iodepth":4}]}})";
        // The softirq that irq_exit runs, above the task the interrupt came in on.
        const auto frames = findPath(nvme, {}, [](const KernelPath& p, int n) {
            return n == 2 && p[1].level == KernelFrame::Level::Softirq && p[1].running
                && std::string(p[1].path ? p[1].path : "") == "__do_softirq → blk_done_softirq → ->complete";
        });
        QVERIFY(!frames.empty());
        QVERIFY(frames[0].task && !frames[0].running); // fio, or the idle task, interrupted
        QCOMPARE(std::string(frames[1].via), std::string("irq_exit"));
        QCOMPARE(frames[1].context, ExecContext::Softirq);
        // The device's hardirq while fio was submitting.
        const auto irq = findPath(nvme, {}, [](const KernelPath& p, int n) {
            return n == 2 && p[1].level == KernelFrame::Level::Hardirq && p[1].running && p[1].path
                && std::string(p[1].path).starts_with("nvme_irq") && p[0].task && std::string(p[0].task) == "fio";
        });
        QVERIFY(!irq.empty());
        QVERIFY(std::string(irq[0].path).starts_with("io_submit") || std::string(irq[0].path).starts_with("fio"));
        // threadirqs: the handler runs in its irq thread, and the softirq at its local_bh_enable.
        const auto threaded = findPath(nvme, { "kernel.threadirqs=true" }, [](const KernelPath& p, int n) {
            return n == 1 && p[0].running && p[0].path
                && std::string(p[0].path) == "__do_softirq → blk_done_softirq → ->complete";
        });
        QVERIFY(!threaded.empty());
        QCOMPARE(std::string(threaded[0].task), std::string("irq thread"));
        QCOMPARE(std::string(threaded[0].via), std::string("local_bh_enable"));
        QCOMPARE(threaded[0].context, ExecContext::Softirq);
    }

    // A batch of blk_mq_sched_restart()'s walk is named inside the completion that freed the request.
    void kernelPathNestsTheRestartWalk()
    {
        const auto frames = findPreset("restart-128x64", [](const KernelPath& p, int n) {
            return n > 0 && p[static_cast<std::size_t>(n - 1)].running && p[static_cast<std::size_t>(n - 1)].caller;
        });
        QVERIFY(!frames.empty());
        const KernelFrame& f = frames.back();
        QCOMPARE(std::string(f.path), std::string("blk_mq_free_request → blk_mq_sched_restart"));
        QVERIFY2(std::string(f.caller).ends_with("->done"), f.caller); // rdma: ib_poll_handler's ->done
    }

private:
    // Steps a run and returns the first CPU path `match` accepts (the levels in use), or none.
    template<class Match>
    static std::vector<KernelFrame> firstPath(Engine& e, Match match, int maxEvents = 200000)
    {
        for (int i = 0; i < maxEvents && e.step(); ++i)
            for (int c = 0; c < e.machine().nrCpus(); ++c) {
                KernelPath p;
                const int n = e.machine().kernelPath(c, p);
                if (match(p, n))
                    return { p.begin(), p.begin() + n };
            }
        return {};
    }
    template<class Match>
    static std::vector<KernelFrame> findPath(const std::string& json, std::vector<std::string> sets, Match match)
    {
        Engine e(load(json, sets));
        return firstPath(e, match);
    }
    template<class Match>
    static std::vector<KernelFrame> findPreset(const char* preset, Match match)
    {
        Engine e(load(preset));
        return firstPath(e, match, 2000000);
    }
};

QTEST_GUILESS_MAIN(TestSoftirq)
#include "tst_softirq.moc"
