// The oracle's pieces that need no QEMU: fio job files, the guest plan, reading the guest's
// console, the lab's counts and the figures. The cases themselves (tests/oracle) boot the guest.
#include "TestUtil.h"

#include "block/BlkMqDebugfs.h"
#include "oracle/GuestPlan.h"
#include "oracle/OracleCase.h"
#include "oracle/OracleCounts.h"
#include "oracle/OracleFigures.h"
#include "io/Text.h"
#include "scenario/FioJobFile.h"
#include "scenario/ScenarioLoader.h"
#include "topo/TopologyLoader.h"

#include <algorithm>
#include <map>
#include <sstream>

using namespace blkmq;
using namespace blkmq::test;

namespace {

const char* kMachine = R"({"topology":"2n:1p:4c:1t","duration":"1s",
    "devices":[{"name":"vda","irqmode":"virtio","submit_queues":1,"hw_queue_depth":256,"completion_nsec":"50us"}]})";

const char* kJob = "; a comment\n[global]\nfilename=/dev/vda\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\n"
                   "iodepth=4\nruntime=1\ntime_based=1\ncpus_allowed=0-7\ncpus_allowed_policy=split\n\n"
                   "[randread]\nnumjobs=8\n";

Scenario withJob(const std::string& machine, const std::string& job, std::vector<std::string> more = {})
{
    const Scenario plain = load(machine);
    std::vector<std::string> devices;
    for (const auto& d : plain.devices)
        devices.push_back(d.name);
    auto imported = FioJobFile::read(job, "job.fio", devices);
    if (!imported.ok())
        qFatal("job does not read: %s", imported.error().c_str());
    std::vector<std::string> sets = imported->sets;
    sets.insert(sets.end(), more.begin(), more.end());
    return load(machine, sets);
}

} // namespace

class TestOracle : public QObject {
    Q_OBJECT
private slots:
    void fioJobBecomesTheWorkload()
    {
        const Scenario s = withJob(kMachine, kJob);
        QCOMPARE(s.jobs.size(), std::size_t(1));
        const JobSpec& j = s.jobs.front();
        QCOMPARE(j.name, std::string("randread"));
        QCOMPARE(j.device, std::string("vda"));
        QCOMPARE(j.numjobs, 8);
        QCOMPARE(j.iodepth, 4);
        QCOMPARE(j.bs, 4096);
        QCOMPARE(j.cpus_allowed.size(), std::size_t(8));
        QVERIFY(j.cpus_allowed_policy == CpusAllowedPolicy::Split);
        QCOMPARE(s.duration, SimTime(1'000'000'000));
        // A synchronous engine has one I/O in flight whatever iodepth says.
        const Scenario sync = withJob(kMachine, "[j]\nioengine=psync\niodepth=32\n");
        QCOMPARE(sync.jobs.front().iodepth, 1);
    }

    // A scenario's own jobs, written as a fio job file, read back as the same jobs and duration:
    // every preset whose jobs fio can express (the oracle runs such a preset without --fio).
    void scenarioJobsRoundTripThroughAFioFile()
    {
        int written = 0;
        for (const auto& p : ScenarioLoader::presets()) {
            const Scenario s = load(p.name);
            const auto text = FioJobFile::write(s);
            if (!text.ok()) {
                QVERIFY2(text.error().rfind("workload", 0) == 0 || text.error().rfind("duration", 0) == 0,
                    text.error().c_str());
                continue;
            }
            ++written;
            std::vector<std::string> devices;
            for (const auto& d : s.devices)
                devices.push_back(d.name);
            const auto job = FioJobFile::read(*text, "job.fio", devices);
            QVERIFY2(job.ok(), (p.name + ": " + (job.ok() ? "" : job.error()) + "\n" + *text).c_str());
            const Scenario back = load(p.name, job->sets);
            QCOMPARE(back.duration, s.duration);
            QCOMPARE(back.jobs.size(), s.jobs.size());
            for (std::size_t i = 0; i < s.jobs.size(); ++i) {
                const JobSpec &a = s.jobs[i], &b = back.jobs[i];
                QVERIFY2(a.name == b.name && a.device == b.device && a.numjobs == b.numjobs && a.iodepth == b.iodepth
                        && a.cpus_allowed == b.cpus_allowed && a.cpus_allowed_policy == b.cpus_allowed_policy
                        && a.rw == b.rw && a.bs == b.bs && a.iodepth_batch_submit == b.iodepth_batch_submit
                        && a.thinktime_ns == b.thinktime_ns && a.number_ios == b.number_ios && a.hipri == b.hipri,
                    (p.name + ": job " + std::to_string(i) + "\n" + *text).c_str());
            }
            // The same events: the same fingerprint (over 2 ms, to keep the test short).
            Engine original(load(p.name, { "duration=\"2ms\"" }));
            std::vector<std::string> sets = job->sets;
            sets.push_back("duration=\"2ms\"");
            Engine fromFile(load(p.name, sets));
            original.run();
            fromFile.run();
            QCOMPARE(fromFile.fingerprint(), original.fingerprint());
        }
        QVERIFY(written >= 5);
        // What fio cannot say is refused, naming the field.
        const auto bypass = FioJobFile::write(load(kMachine, { R"(workload.jobs=[{"device":"vda","bypass_pct":5}])" }));
        QVERIFY(!bypass.ok());
        QVERIFY2(bypass.error().rfind("workload.jobs[0].bypass_pct: ", 0) == 0, bypass.error().c_str());
        const auto none = FioJobFile::write(load(kMachine));
        QVERIFY(!none.ok());
        QVERIFY2(none.error().rfind("workload.jobs: ", 0) == 0, none.error().c_str());
    }

    void fioErrorsNameTheLine_data()
    {
        QTest::addColumn<QString>("job");
        QTest::addColumn<QString>("message");
        QTest::newRow("unmodelled key") << u"[j]\nstonewall\n"_qs << u"job.fio:2: 'stonewall' is not modelled"_qs;
        QTest::newRow("buffered") << u"[global]\ndirect=0\n[j]\n"_qs
                                  << u"job.fio:2: direct=0: buffered I/O (direct=0) goes through the page cache"_qs;
        QTest::newRow("no such device") << u"[j]\nfilename=/dev/sdz\n"_qs
                                        << u"job.fio:2: filename=/dev/sdz: names no device of the scenario (its "
                                           "devices: /dev/vda)"_qs;
        QTest::newRow("engine") << u"[j]\nioengine=mmap\n"_qs << u"job.fio:2: ioengine=mmap: 'mmap' is not modelled"_qs;
        QTest::newRow("not a number") << u"[j]\niodepth=lots\n"_qs
                                      << u"job.fio:2: iodepth=lots: must be a whole number"_qs;
        QTest::newRow("no job") << u"[global]\nbs=4k\n"_qs << u"job.fio: no job section"_qs;
        QTest::newRow("before a section") << u"bs=4k\n[j]\n"_qs << u"job.fio:1: 'bs=4k' comes before any section"_qs;
        QTest::newRow("two runtimes") << u"[a]\nruntime=1\n[b]\nruntime=2\n"_qs
                                      << u"job.fio:4: runtime=2: differs from another job's (job.fio:2: runtime=1)"_qs;
    }
    void fioErrorsNameTheLine()
    {
        QFETCH(QString, job);
        QFETCH(QString, message);
        const auto r = FioJobFile::read(job.toStdString(), "job.fio", { "vda" });
        QVERIFY(!r.ok());
        QVERIFY2(r.error().find(message.toStdString()) != std::string::npos, r.error().c_str());
    }

    // Bytes that are not UTF-8 anywhere in a job file (a section name, a value) are refused by the
    // line, never carried into a name that a JSON writer would then throw on; a Windows line end is
    // read as one.
    void fioTextIsText()
    {
        const std::vector<std::pair<std::string, std::string>> cases { { "[glob\xe9]\nrw=randread\n", "job.fio:1: " },
            { "[j]\nrw=randr\xe9"
              "ad\n",
                "job.fio:2: " },
            { "[j]\nname=x\xe9\n", "job.fio:2: " }, { "[j]\ncpus_allowed=0\xe9\n", "job.fio:2: " },
            { "[j]\nname=\xc0\xaf\n", "job.fio:2: " }, { "[j]\nname=\xed\xa0\x80\n", "job.fio:2: " },
            { "; \xff\n[j]\n", "job.fio:1: " } };
        for (const auto& [job, line] : cases) {
            const auto r = FioJobFile::read(job, "job.fio", { "vda" });
            QVERIFY2(!r.ok() && r.error() == line + "the line is not valid UTF-8 text", printable(job).c_str());
        }
        const auto escape = FioJobFile::read("[j]\nname=a\x1b[2Jb\n", "job.fio", { "vda" });
        QVERIFY(!escape.ok());
        QCOMPARE(escape.error(), std::string("job.fio:2: the line contains a control character (U+001B)"));
        const auto windows = FioJobFile::read("[j]\r\nrw=randread\r\nname=caf\xc3\xa9\r\n", "job.fio", { "vda" });
        QVERIFY2(windows.ok(), windows.ok() ? "" : windows.error().c_str());
    }

    // A value fio reads but the loader refuses is told by the file's line too.
    void loaderErrorsAreToldByTheLine()
    {
        const auto imported = FioJobFile::read("[j]\niodepth=0\n", "job.fio", { "vda" });
        QVERIFY(imported.ok());
        const auto s = ScenarioLoader::fromText(kMachine, "t", imported->sets);
        QVERIFY(!s.ok());
        const std::string told = FioJobFile::explain(*imported, s.error());
        QVERIFY2(told.rfind("job.fio:2: iodepth=0: must be an integer in 1..65536", 0) == 0, told.c_str());
    }

    void guestPlanIsTheScenariosMachine()
    {
        const Scenario s = withJob(kMachine, kJob, { "kernel.version=v6.1", "kernel.threadirqs=true" });
        const auto plan = planGuest(s, kJob);
        QVERIFY2(plan.ok(), plan.ok() ? "" : plan.error().c_str());
        const std::string args = [&] {
            std::string a;
            for (const auto& x : plan->qemuArgs)
                a += x + " ";
            return a;
        }();
        QVERIFY2(args.find("-smp 8,sockets=2,cores=4,threads=1") != std::string::npos, args.c_str());
        QVERIFY(args.find("node,nodeid=1,cpus=4-7,memdev=m1") != std::string::npos);
        QVERIFY(args.find("dist,src=0,dst=1,val=20") != std::string::npos);
        QVERIFY(args.find("virtio-blk-pci,drive=d0,num-queues=1,queue-size=256") != std::string::npos);
        QVERIFY(args.find("latency-ns=50000") != std::string::npos);
        QCOMPARE(plan->cmdline, std::string("threadirqs"));
        QVERIFY(plan->settings.find("DEVICES=\"vda\"") != std::string::npos);
        QVERIFY(plan->settings.find("SCHED_vda=none") != std::string::npos);
        QVERIFY(plan->settings.find("RQAFF_vda=1") != std::string::npos);
        QCOMPARE(plan->fio, std::string(kJob));
        // SMT, numbered as QEMU numbers it: two threads a core, two cores a socket.
        const auto smt
            = planGuest(withJob(kMachine, kJob, { "kernel.version=v6.1", "topology=\"2n:1p:2c:2t/adjacent\"" }), kJob);
        QVERIFY2(smt.ok(), smt.ok() ? "" : smt.error().c_str());
        std::string smtArgs;
        for (const auto& x : smt->qemuArgs)
            smtArgs += x + " ";
        QVERIFY2(smtArgs.find("-smp 8,sockets=2,cores=2,threads=2") != std::string::npos, smtArgs.c_str());
        QVERIFY(smtArgs.find("node,nodeid=1,cpus=4-7,memdev=m1") != std::string::npos);
        // null_blk devices are made through configfs, on the module's one shared tag set.
        const std::string nullb = R"({"topology":"2n:1p:4c:1t","tag_sets":[{"name":"t"}],"devices":[
            {"name":"nullb0","tag_set":"t","irqmode":"timer","completion_nsec":"10us"},
            {"name":"nullb1","tag_set":"t","irqmode":"timer","completion_nsec":"1ms"}]})";
        const std::string job = "[j]\nfilename=/dev/nullb1\n";
        const auto np = planGuest(withJob(nullb, job, { "kernel.version=v6.1" }), job);
        QVERIFY2(np.ok(), np.ok() ? "" : np.error().c_str());
        QVERIFY2(np->setup.find("insmod /modules/null_blk.ko queue_mode=2 nr_devices=0 poll_queues=0 shared_tags=1 "
                                "submit_queues=1 hw_queue_depth=64")
                != std::string::npos,
            np->setup.c_str());
        QVERIFY(np->setup.find("echo 1000000 > /sys/kernel/config/nullb/nullb1/completion_nsec") != std::string::npos);
        QVERIFY(np->setup.find("echo 2 > /sys/kernel/config/nullb/nullb0/irqmode") != std::string::npos);
    }

    // What the guest cannot run the same way is refused, naming the field.
    void guestPlanRefuses_data()
    {
        QTest::addColumn<QString>("machine");
        QTest::addColumn<QStringList>("sets");
        QTest::addColumn<QString>("message");
        const QString m = QString::fromLatin1(kMachine);
        QTest::newRow("SMT numbered as x86") << m << QStringList { u"topology=\"1n:1p:4c:2t\""_qs }
                                             << u"topology: QEMU numbers a core's SMT threads one after another"_qs;
        QTest::newRow("a switch 6.1 lacks")
            << m << QStringList { u"kernel.restart=rr-shared"_qs }
            << u"kernel.restart: is rr-shared, but the guest runs Linux 6.1 (own-hctx)"_qs;
        QTest::newRow("virtio name") << m
                                     << QStringList { u"devices.vda.name=nvme0"_qs, u"workload.jobs.0.device=nvme0"_qs }
                                     << u"devices[0].name: the guest names its virtio-blk devices vda"_qs;
        QTest::newRow("pinned vector") << m << QStringList { u"devices.vda.irq_affinity=[3]"_qs }
                                       << u"devices[0].irq_affinity: virtio-blk's vectors are managed interrupts"_qs;
        QTest::newRow("queue size") << m << QStringList { u"devices.vda.hw_queue_depth=100"_qs }
                                    << u"devices[0].hw_queue_depth: is virtio-blk's queue size in the guest"_qs;
        QTest::newRow("nvme") << m << QStringList { u"devices.vda.irqmode=nvme"_qs }
                              << u"devices[0].irqmode: the oracle's guest has virtio-blk"_qs;
        QTest::newRow("a distribution")
            << m << QStringList { u"devices.vda.completion_nsec={\"dist\":\"exponential\",\"mean\":\"10us\"}"_qs }
            << u"devices[0].completion_nsec: the guest's devices take one fixed completion time"_qs;
    }
    void guestPlanRefuses()
    {
        QFETCH(QString, machine);
        QFETCH(QStringList, sets);
        QFETCH(QString, message);
        std::vector<std::string> more { "kernel.version=v6.1" };
        for (const QString& s : sets)
            more.push_back(s.toStdString());
        const std::string job = "[j]\nfilename=/dev/vda\n";
        const auto loaded = ScenarioLoader::fromText(machine.toStdString(), "t", [&] {
            std::vector<std::string> all = FioJobFile::read(job, "job.fio", { "vda" })->sets;
            all.insert(all.end(), more.begin(), more.end());
            return all;
        }());
        QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().c_str());
        const auto plan = planGuest(*loaded, job);
        QVERIFY(!plan.ok());
        QVERIFY2(plan.error().find(message.toStdString()) != std::string::npos, plan.error().c_str());
    }

    void guestPlanNeedsAFilenameInEveryJob()
    {
        const std::string job = "[j]\nnumjobs=2\n";
        const auto plan = planGuest(withJob(kMachine, job, { "kernel.version=v6.1" }), job);
        QVERIFY(!plan.ok());
        QVERIFY2(plan.error().find("workload.jobs[0]: the oracle needs filename=/dev/NAME") != std::string::npos,
            plan.error().c_str());
    }

    // The console as the guest prints it (lines end in CR LF on the serial port).
    void guestReportIsRead()
    {
        const std::string console = "SeaBIOS\r\n@oracle boot 3.5 6.1.0-57-amd64\r\n"
                                    "@oracle queue vda scheduler [none] mq-deadline  rq_affinity 1\r\n"
                                    "@oracle devno vda 254:0 virtio0\r\n"
                                    "@oracle hctx vda 0 cpus 4, 5\r\n@oracle hctx vda 1 cpus 0, 1, 2, 3, 6, 7\r\n"
                                    "@oracle vector virtio0-req.0 irq 25 affinity 4-5 effective 5\r\n"
                                    "@oracle vector virtio0-req.1 irq 26 affinity 0-3,6-7 effective 7\r\n"
                                    "@oracle start 4.0\r\n@oracle end 6.5 rc 0\r\n"
                                    "@oracle irq 25 virtio0-req.0 0 0 0 0 0 10 0 0\r\n"
                                    "@oracle irq 26 virtio0-req.1 0 0 0 0 0 0 0 30\r\n"
                                    "@oracle irq CAL interrupts 9 9 9 9 9 9 9 9\r\n"
                                    "@oracle softirq BLOCK 5 0 0 0 0 0 0 7\r\n@oracle blkipi 0 5\r\n"
                                    "@oracle pair 0 0 100\r\n@oracle pair 4 5 50\r\n@oracle devdone 254,0 150\r\n"
                                    "@oracle unpaired 2\r\n@oracle done\r\n";
        const GuestReport g = parseGuestReport(console, 8);
        QVERIFY(g.done);
        QVERIFY(g.error.empty());
        QCOMPARE(g.kernel, std::string("6.1.0-57-amd64"));
        QCOMPARE(g.devices.size(), std::size_t(1));
        QCOMPARE(g.devices[0].scheduler, std::string("none"));
        QCOMPARE(g.devices[0].rqAffinity, 1);
        QCOMPARE(g.devices[0].hctxCpus, (std::vector<std::string> { "4,5", "0,1,2,3,6,7" }));
        QCOMPARE(g.devices[0].vectorCpu, (std::vector<int> { 5, 7 }));
        QCOMPARE(g.counts.deviceIrqs[5], std::uint64_t(10)); // the vectors' rows, not CAL's
        QCOMPARE(g.counts.deviceIrqs[7], std::uint64_t(30));
        QCOMPARE(g.counts.deviceIrqs[0], std::uint64_t(0));
        QCOMPARE(g.counts.blockSoftirqs[7], std::uint64_t(7));
        QCOMPARE(g.counts.blkIpis[0], std::uint64_t(5));
        QCOMPARE(g.counts.pair(4, 5), std::uint64_t(50));
        QCOMPARE(g.counts.completed(), std::uint64_t(150));
        QCOMPARE(g.counts.completedByDevice.at("vda"), std::uint64_t(150));
        QCOMPARE(g.counts.unpaired, std::uint64_t(2));
        QCOMPARE(g.jobSeconds, 2.5);
        // The placement goes to the lab as the kernel made it.
        const Scenario s = withJob(kMachine, kJob, { "devices.vda.submit_queues=2" });
        const auto sets = placementSettings(s, g);
        QCOMPARE(sets,
            (std::vector<std::string> {
                R"(devices.vda.queue_map=["4,5","0,1,2,3,6,7"])", R"(devices.vda.irq_affinity=[5,7])" }));
        // The guest's machine is checked CPU by CPU against the scenario's.
        std::string cpus;
        for (int c = 0; c < 8; ++c)
            cpus += "@oracle cpu " + std::to_string(c) + " siblings " + std::to_string(c) + " llc "
                + (c < 4 ? "0-3" : "4-7") + "\r\n";
        const GuestReport machine = parseGuestReport(cpus, 8);
        QCOMPARE(machineDifference(s.topology, machine), std::string());
        QCOMPARE(machineDifference(s.topology, g), std::string("the guest listed 0 CPUs, the scenario has 8"));
        const auto smtTopology = *TopologyLoader::fromSpec("2n:1p:2c:2t");
        QCOMPARE(machineDifference(smtTopology, machine),
            std::string("CPU 0's SMT siblings are 0 in the guest, 0,4 in the scenario"));
        const auto oneLlc = *TopologyLoader::fromSpec("1n:1p:8c:1t");
        QCOMPARE(machineDifference(oneLlc, machine),
            std::string("CPU 0 shares its last-level cache with 0-3 in the guest, 0-7 in the scenario"));
        const GuestReport failed = parseGuestReport("@oracle error fio: no such file\r\n", 8);
        QCOMPARE(failed.error, std::string("fio: no such file"));
        QVERIFY(!failed.done);
    }

    // The lab's counts come from its trace: one queue on CPU 7, rq_affinity 1 on two sockets.
    void labCountsRouteAsTheKernelDoes()
    {
        Engine e(withJob(kMachine, kJob,
            { "kernel.version=v6.1", "duration=\"2ms\"", R"(devices.vda.queue_map=["0-7"])",
                "devices.vda.irq_affinity=[7]" }));
        LabCounter counter(e);
        QVERIFY(e.addTraceSink(&counter));
        e.run();
        const OracleCounts& c = counter.counts();
        QVERIFY(c.completed() > 1000);
        QCOMPARE(c.completed(), e.counters().completed);
        for (int s = 0; s < 8; ++s)
            for (int k = 0; k < 8; ++k) {
                const bool expected = s < 4 ? k == s : k == 7; // the far socket's go back, the near one's stay on 7
                QVERIFY2((c.pair(s, k) > 0) == expected, qPrintable(u"%1 -> %2"_qs.arg(s).arg(k)));
            }
        for (int cpu = 0; cpu < 8; ++cpu) {
            QCOMPARE(c.deviceIrqs[static_cast<std::size_t>(cpu)] > 0, cpu == 7);
            QCOMPARE(c.blkIpis[static_cast<std::size_t>(cpu)] > 0, cpu < 4);
        }
        const auto rows = OracleFigures::compare(c, c, e.scenario().topology, "vda", {});
        const auto row = [&](const char* id) {
            return *std::find_if(
                rows.begin(), rows.end(), [&](const FigureRow& r) { return std::string(r.figure->id) == id; });
        };
        QCOMPARE(row("routes").lab.text(), std::string("0-3,7>self 4-6>7"));
        QCOMPARE(*row("off_submitter_pct").lab.number, 37.5);
        QCOMPARE(row("device_irq_cpus").lab.text(), std::string("7"));
        QCOMPARE(row("blk_ipi_cpus").lab.text(), std::string("0-3"));
    }

    // The lab's debugfs files: Linux 6.1's names and formats, and each file true to the others.
    void labDebugfsIsLinux61s()
    {
        Engine e(withJob(kMachine, kJob,
            { "kernel.version=v6.1", "duration=\"1ms\"", "devices.vda.submit_queues=2",
                "devices.vda.hw_queue_depth=64" }));
        e.run();
        const auto files = blkMqDebugfs(e.block());
        QVERIFY2(files.ok(), files.ok() ? "" : files.error().c_str());
        std::map<std::string, std::string> tree(files->begin(), files->end());
        for (const char* f : { "state", "flags", "type", "active", "run", "dispatch", "busy", "tags", "tags_bitmap" })
            for (const char* h : { "vda/hctx0/", "vda/hctx1/" })
                QVERIFY2(tree.count(std::string(h) + f), f);
        QCOMPARE(tree.size(), std::size_t(18));
        QCOMPARE(tree["vda/hctx0/flags"], std::string("alloc_policy=FIFO SHOULD_MERGE\n"));
        QCOMPARE(tree["vda/hctx0/type"], std::string("default\n"));
        // sbitmap_calculate_shift(64): 16 bits a word, so that the 64 tags spread over 4 words.
        const std::string& tags = tree["vda/hctx1/tags"];
        QVERIFY2(tags.rfind("nr_tags=64\nnr_reserved_tags=0\nactive_queues=0\n\nbitmap_tags:\ndepth=64\nbusy=", 0) == 0,
            tags.c_str());
        QVERIFY2(tags.find("\nbits_per_word=16\nmap_nr=4\nwake_batch=8\n") != std::string::npos, tags.c_str());
        QVERIFY(tags.find("ws={\n\t{.wait=inactive},\n") != std::string::npos);
        QVERIFY(tags.find("}\nround_robin=0\nmin_shallow_depth=4294967295\n") != std::string::npos);
        // busy= counts the busy file's requests, and the bitmap has exactly their tags set.
        for (const char* h : { "vda/hctx0/", "vda/hctx1/" }) {
            const std::string& t = tree[std::string(h) + "tags"];
            const int busy = std::stoi(t.substr(t.find("\nbusy=") + 6));
            std::istringstream lines(tree[std::string(h) + "busy"]);
            std::vector<int> busyTags;
            for (std::string line; std::getline(lines, line);) {
                QVERIFY2(line.find(" {.state=in_flight, .tag=") != std::string::npos, line.c_str());
                busyTags.push_back(std::stoi(line.substr(line.find(".tag=") + 5)));
            }
            QVERIFY(busy > 0);
            QCOMPARE(static_cast<int>(busyTags.size()), busy);
            // sbitmap_bitmap_show(): "00000000: 0000 0000 ...", a byte's bit b is tag 8 * byte + b.
            std::vector<int> setTags;
            std::istringstream bitmap(tree[std::string(h) + "tags_bitmap"]);
            int byteIndex = 0;
            for (std::string line; std::getline(bitmap, line);) {
                QCOMPARE(line.substr(0, 10), (byteIndex ? std::string("00000010: ") : std::string("00000000: ")));
                std::string hex;
                for (char c : line.substr(10))
                    if (c != ' ')
                        hex += c;
                for (std::size_t i = 0; i + 1 < hex.size(); i += 2, ++byteIndex)
                    for (int b = 0; b < 8; ++b)
                        if (std::stoi(hex.substr(i, 2), nullptr, 16) & (1 << b))
                            setTags.push_back(byteIndex * 8 + b);
            }
            QCOMPARE(byteIndex, 8); // 64 tags
            std::sort(busyTags.begin(), busyTags.end());
            QCOMPARE(setTags, busyTags);
        }
        // Roman Pen's shared-hctx stall: the stalled hctx is marked for a restart that never comes.
        Engine stall(load("shared-hctx-stall"));
        stall.run();
        const auto stalled = blkMqDebugfs(stall.block());
        QVERIFY(stalled.ok());
        std::map<std::string, std::string> st(stalled->begin(), stalled->end());
        QCOMPARE(st["nullb0/hctx0/state"], std::string("TAG_ACTIVE|SCHED_RESTART\n"));
        QCOMPARE(st["nullb0/hctx0/flags"], std::string("alloc_policy=FIFO SHOULD_MERGE|TAG_QUEUE_SHARED\n"));
        // percpu_ida had left blk-mq long before its debugfs came.
        const auto ida = blkMqDebugfs(Engine(load("axboe-4s64-near-low")).block());
        QVERIFY(!ida.ok());
        QVERIFY2(ida.error().find("its tags are not an sbitmap") != std::string::npos, ida.error().c_str());
    }

    // The guest's debugfs lines become its files, those before the job apart; the layouts of both
    // sides' tags as built are compared, whatever the job did to them.
    void debugfsFilesAreReadAndCompared()
    {
        const GuestReport g = parseGuestReport("@oracle built vda/hctx0/tags wake_batch=8\r\n"
                                               "@oracle dfs vda/hctx0/tags nr_tags=4\r\n"
                                               "@oracle dfs vda/hctx0/tags \t{.wait=inactive},\r\n"
                                               "@oracle dfs vda/hctx0/dispatch\r\n@oracle dfs vda/hctx0/state \r\n"
                                               "@oracle dfs\r\n", // cut short: ignored
            8);
        QCOMPARE(g.counts.built.at("vda/hctx0/tags"), std::string("wake_batch=8\n"));
        QCOMPARE(g.counts.built.size(), std::size_t(1));
        QCOMPARE(g.counts.debugfs.at("vda/hctx0/tags"), std::string("nr_tags=4\n\t{.wait=inactive},\n"));
        QCOMPARE(g.counts.debugfs.at("vda/hctx0/dispatch"), std::string());
        QCOMPARE(g.counts.debugfs.at("vda/hctx0/state"), std::string("\n"));
        OracleCounts kernel(2), lab(2);
        const std::string layout = "nr_tags=64\nbusy=3\nbits_per_word=16\nmap_nr=4\nwake_batch=8\n";
        for (OracleCounts* side : { &kernel, &lab })
            for (const char* h : { "a/hctx0", "a/hctx1", "a/hctx2" }) {
                side->built[std::string(h) + "/tags"] = layout;
                side->built[std::string(h) + "/flags"] = "alloc_policy=FIFO SHOULD_MERGE\n";
            }
        lab.built["a/hctx0/tags"]
            = "nr_tags=64\nbusy=9\nbits_per_word=16\nmap_nr=4\nwake_batch=8\n"; // busy: not compared
        kernel.built["a/hctx2/tags"] = "nr_tags=64\nbits_per_word=64\nmap_nr=1\nwake_batch=8\n";
        // After the job: two shared-tag queues went active and 6.1 halved wake_batch. Not the layout.
        kernel.debugfs["a/hctx0/tags"] = "nr_tags=64\nbits_per_word=16\nmap_nr=4\nwake_batch=4\n";
        FigureBand same;
        same.same = true;
        const Topology topo = load(R"({"topology":"2c"})").topology;
        for (const FigureRow& r : OracleFigures::compare(kernel, lab, topo, "a", { { "tags_layout", same } }))
            if (std::string(r.figure->id) == "tags_layout") {
                QCOMPARE(r.lab.text(),
                    std::string("a/hctx0-2: nr_tags=64 bits_per_word=16 map_nr=4 wake_batch=8 flags=SHOULD_MERGE"));
                QCOMPARE(r.kernel.text(),
                    std::string("a/hctx0-1: nr_tags=64 bits_per_word=16 map_nr=4 wake_batch=8 flags=SHOULD_MERGE; "
                                "a/hctx2: nr_tags=64 bits_per_word=64 map_nr=1 wake_batch=8 flags=SHOULD_MERGE"));
                QVERIFY(!r.holds);
                QCOMPARE(r.bandText(), std::string("the same"));
            }
    }

    void figuresAreJudgedByTheirBands()
    {
        OracleCounts kernel(2), lab(2);
        kernel.pairs = { 90, 10, 0, 100 }; // CPU 0: 10% off; CPU 1: none
        lab.pairs = { 80, 20, 0, 100 }; // CPU 0: 20% off
        kernel.completedByDevice = { { "a", 150 }, { "b", 50 } };
        lab.completedByDevice = { { "a", 90 }, { "b", 110 } };
        const Topology topo = load(R"({"topology":"2c"})").topology;
        FigureBand within;
        within.within = 5;
        FigureBand same;
        same.same = true;
        FigureBand half;
        half.atLeast = 50;
        const auto rows = OracleFigures::compare(kernel, lab, topo, "a",
            { { "off_submitter_pct", within }, { "routes", same }, { "first_device_pct", half } });
        for (const FigureRow& r : rows) {
            const std::string id = r.figure->id;
            if (id == "off_submitter_pct") { // 5 vs 10 points: 5 apart, not more
                QCOMPARE(*r.kernel.number, 5.0);
                QCOMPARE(*r.lab.number, 10.0);
                QVERIFY(r.holds);
            } else if (id == "routes") {
                QCOMPARE(r.kernel.text(), std::string("0>0-1 1>self"));
                QVERIFY(r.holds);
            } else if (id == "first_device_pct") { // the lab's 45% breaks the bound
                QVERIFY(!r.holds);
            } else {
                QVERIFY(r.holds); // not judged
            }
        }
    }

    void caseFilesAreChecked_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("message");
        const QString head = uR"({"name":"c","scenario":"m.json","fio":"j.fio",)"_qs;
        QTest::newRow("no figures") << head + uR"("figures":{}})"_qs << u"figures: must name at least one figure"_qs;
        QTest::newRow("unknown figure") << head + uR"("figures":{"speed":{"within":1,"why":"x"}}})"_qs
                                        << u"figures.speed: no such figure"_qs;
        QTest::newRow("no reason") << head + uR"("figures":{"routes":{"same":true}}})"_qs
                                   << u"figures.routes.why: missing"_qs;
        QTest::newRow("a set with a number") << head + uR"("figures":{"routes":{"within":3,"why":"x"}}})"_qs
                                             << u"figures.routes: a set of CPUs is compared with \"same\": true"_qs;
        QTest::newRow("no band") << head + uR"("figures":{"off_submitter_pct":{"why":"x"}}})"_qs
                                 << u"figures.off_submitter_pct: give a band"_qs;
        QTest::newRow("unknown key") << head + uR"("figures":{"routes":{"same":true,"why":"x"}},"speed":1})"_qs
                                     << u"speed: unknown key"_qs;
        QTest::newRow("timeout") << head + uR"("timeout":"1s","figures":{"routes":{"same":true,"why":"x"}}})"_qs
                                 << u"timeout: must be a duration from 10s to 3600s"_qs;
    }
    void caseFilesAreChecked()
    {
        QFETCH(QString, text);
        QFETCH(QString, message);
        const auto c = OracleCase::fromText(text.toStdString(), "cases");
        QVERIFY(!c.ok());
        QVERIFY2(c.error().find(message.toStdString()) != std::string::npos, c.error().c_str());
    }

    void caseFilesResolveTheirPaths()
    {
        const auto c = OracleCase::fromText(
            R"({"name":"c","scenario":"machines/m.json","fio":"/abs/j.fio","set":["seed=2"],"timeout":"60s",
                "figures":{"routes":{"same":true,"why":"routing"}}})",
            "tests/oracle");
        QVERIFY2(c.ok(), c.ok() ? "" : c.error().c_str());
        QCOMPARE(c->scenario, std::string("tests/oracle/machines/m.json"));
        QCOMPARE(c->fio, std::string("/abs/j.fio"));
        QCOMPARE(c->sets, std::vector<std::string> { "seed=2" });
        QCOMPARE(c->timeoutNs, std::int64_t(60'000'000'000));
        QCOMPARE(c->bands.size(), std::size_t(1));
    }
};

QTEST_GUILESS_MAIN(TestOracle)
#include "tst_oracle.moc"
