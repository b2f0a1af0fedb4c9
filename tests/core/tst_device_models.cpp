#include "TestUtil.h"

#include "block/BlockLayer.h"
#include "block/DeviceModel.h"

#include <set>

using namespace blkmq;
using namespace blkmq::test;

namespace {

// One device of `model` on four CPUs, two fio jobs of depth 8, for 2 ms.
nlohmann::json scenarioFor(const DeviceModel& model, int queues)
{
    nlohmann::json device = { { "name", "d" }, { "irqmode", model.name() }, { "submit_queues", queues },
        { "hw_queue_depth", 32 }, { "completion_nsec", "20us" } };
    nlohmann::json job = { { "iodepth", 8 }, { "numjobs", 2 }, { "cpus_allowed", "0-3" } };
    return { { "topology", "1n:1p:4c:1t" }, { "duration", "2ms" }, { "devices", { device } },
        { "workload", { { "jobs", { job } } } } };
}

} // namespace

// The device models (block/DeviceModel.h): the registry in IrqMode order, names as scenario files
// use them, and every model serving I/O through blk-mq's ops.
class TestDeviceModels : public QObject {
    Q_OBJECT

private slots:
    void registryIsInModeOrderWithUniqueNames()
    {
        std::set<std::string> names;
        for (std::size_t i = 0; i < DeviceModel::all().size(); ++i) {
            const DeviceModel* m = DeviceModel::all()[i];
            QCOMPARE(static_cast<std::size_t>(m->mode()), i);
            QVERIFY2(names.insert(m->name()).second, m->name());
            QCOMPARE(DeviceModel::find(m->name()), m);
            QCOMPARE(&DeviceModel::of(m->mode()), m);
            QVERIFY2(std::string(m->summary()).size() > 20, m->name());
        }
        // null_blk's irqmode numbers name its three models, and nothing else does.
        QCOMPARE(DeviceModel::find("0")->mode(), IrqMode::None);
        QCOMPARE(DeviceModel::find("1")->mode(), IrqMode::Softirq);
        QCOMPARE(DeviceModel::find("2")->mode(), IrqMode::Timer);
        QCOMPARE(DeviceModel::find("3"), nullptr);
        QCOMPARE(DeviceModel::find("nvme-tcp"), nullptr);
    }

    // Every model, loaded by its name, serves I/O: requests complete, none is lost, and the device
    // gets back every request it took.
    void everyModelServesIo()
    {
        for (const DeviceModel* m : DeviceModel::all()) {
            const int queues = m->mode() == IrqMode::Mtip32xx ? 1 : 2;
            const Scenario s = load(scenarioFor(*m, queues).dump());
            QCOMPARE(s.devices[0].irqmode, m->mode());
            Engine e(s);
            e.run();
            const auto sum = e.summary();
            const std::uint64_t done = u(sum["io"]["completed"]);
            QVERIFY2(done > 50, m->name()); // kthread's one command at a time: at most 100
            QCOMPARE(u(sum["io"]["submitted"]), done + u(sum["io"]["in_flight"]));
            int atDevice = 0;
            for (const Hctx& h : e.block().hctxs())
                atDevice += h.atDevice;
            QVERIFY2(atDevice <= sum["io"]["in_flight"].get<int>(), m->name());
        }
    }

    // channels: the device serves at most that many commands at once, each channel its commands one
    // after another, so throughput tops out at channels / service time and a queue deeper than the
    // channels waits at the device instead of finishing sooner; 0 = every command at once.
    void channelsLimitWhatTheDeviceServesAtOnce()
    {
        const auto run = [](int channels, int iodepth) {
            nlohmann::json doc = scenarioFor(*DeviceModel::find("nvme"), 1);
            doc["devices"][0]["channels"] = channels;
            doc["workload"]["jobs"][0]["iodepth"] = iodepth;
            Engine e(load(doc.dump()));
            e.run();
            const auto sum = e.summary();
            return std::pair(sum["metrics"]["iops"].get<double>(), sum["clat_ns"]["mean"].get<double>());
        };
        const double perChannel = 1e9 / 20000; // 20 us a command
        const auto [unlimited, unlimitedLat] = run(0, 8);
        const auto [one, oneLat] = run(1, 8);
        const auto [four, fourLat] = run(4, 8);
        const auto [fourDeep, fourDeepLat] = run(4, 16);
        // 16 in flight on an unlimited device: 16 / 20 us, less the CPUs' time around each I/O
        QVERIFY2(unlimited > 8 * perChannel, qPrintable(QString::number(unlimited)));
        QVERIFY2(one <= perChannel * 1.01 && one > perChannel * 0.9, qPrintable(QString::number(one)));
        // four channels: at most four commands a 20 us, and fewer when two land on one channel
        QVERIFY2(four <= 4 * perChannel * 1.01 && four > 2 * perChannel, qPrintable(QString::number(four)));
        // twice the queue at a saturated device: about the same throughput, about twice the latency
        QVERIFY2(std::abs(fourDeep - four) < 0.15 * four, qPrintable(QStringLiteral("%1 %2").arg(four).arg(fourDeep)));
        QVERIFY2(fourDeepLat > 1.6 * fourLat && oneLat > 10 * unlimitedLat,
            qPrintable(QStringLiteral("%1 %2 %3 %4").arg(fourLat).arg(fourDeepLat).arg(oneLat).arg(unlimitedLat)));
    }

    // What a model allows is what the loader checks: a held script request needs a device that
    // does not finish it inside ->queue_rq; mtip32xx has one hw queue of at most 255 tags.
    void theLoaderAsksTheModel()
    {
        for (const DeviceModel* m : DeviceModel::all()) {
            nlohmann::json doc = scenarioFor(*m, 1);
            doc["workload"] = { { "script",
                { { { "op", "submit" }, { "at", "0" }, { "id", "A" }, { "cpu", 0 }, { "device", "d" },
                    { "hold", true } } } } };
            const std::string text = doc.dump();
            auto r = ScenarioLoader::fromText(text, "t");
            QVERIFY2(static_cast<bool>(r) == m->holds(), m->name());
            if (!r)
                QVERIFY2(r.error().find("workload.script[0].hold") != std::string::npos, r.error().c_str());
        }
        auto mtip = ScenarioLoader::fromText(scenarioFor(DeviceModel::of(IrqMode::Mtip32xx), 2).dump(), "t");
        QVERIFY(!mtip);
        QVERIFY2(mtip.error().find("devices[0].irqmode: mtip32xx has one hw queue") != std::string::npos,
            mtip.error().c_str());
    }

    // A device that completes a batch per notification: nvme raises its vector once for every
    // completion its handler will find, mtip32xx once for every batch of slot groups. Under load both
    // take fewer interrupts than they complete requests; a one-request-per-interrupt device would not.
    void aNotificationCompletesABatch()
    {
        for (IrqMode mode : { IrqMode::Nvme, IrqMode::Mtip32xx }) {
            const DeviceModel& m = DeviceModel::of(mode);
            nlohmann::json doc = scenarioFor(m, 1);
            doc["devices"][0]["irq_affinity"] = { 0 };
            Engine e(load(doc.dump()));
            e.run();
            const std::uint64_t done = e.counters().completed;
            QVERIFY2(e.counters().hardirqs < done, m.name());
        }
    }

    // Polled I/O is the model's: a hipri job polls (and its device raises no interrupt) only on a
    // model with poll queues; elsewhere it is served as any job is.
    void onlyPollableModelsPoll()
    {
        QVERIFY(DeviceModel::of(IrqMode::Nvme).pollable()); // nvme's poll queues
        for (IrqMode mode : { IrqMode::Nvme, IrqMode::Virtio }) {
            const DeviceModel& m = DeviceModel::of(mode);
            nlohmann::json doc = scenarioFor(m, 1);
            doc["workload"]["jobs"][0]["hipri"] = true;
            const std::string text = doc.dump();
            Engine e(load(text));
            e.run();
            QVERIFY2(e.counters().completed > 10, m.name());
            QCOMPARE(e.counters().hardirqs == 0, m.pollable());
        }
    }
};

QTEST_GUILESS_MAIN(TestDeviceModels)
#include "tst_device_models.moc"
