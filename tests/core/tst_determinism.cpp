// TBB first (TOOLCHAIN.md): Qt's emit macro breaks TBB's headers otherwise.
#include <oneapi/tbb/parallel_invoke.h>

#include "TestUtil.h"

#include "experiment/BatchRunner.h"

#include <QFile>

#include <functional>
#include <map>

using namespace blkmq;
using namespace blkmq::test;

class TestDeterminism : public QObject {
    Q_OBJECT
private slots:
    void sameSeedSameRun()
    {
        const Scenario s = load("default");
        Engine a(s), b(s);
        a.run();
        b.run();
        QCOMPARE(a.fingerprint(), b.fingerprint());
        auto sa = a.summary(), sb = b.summary();
        sa.erase("engine");
        sb.erase("engine");
        QCOMPARE(sa.dump(), sb.dump());
    }

    void differentSeedDifferentRun()
    {
        Engine a(load("default")), b(load("default", { "seed=2" }));
        a.run();
        b.run();
        QVERIFY(a.fingerprint() != b.fingerprint());
    }

    void twoEnginesAtOnce()
    {
        const Scenario s = load("nvme-2s64-1q");
        Engine alone(s);
        alone.run();
        Engine x(s), y(s);
        tbb::parallel_invoke([&] { x.run(); }, [&] { y.run(); });
        QCOMPARE(x.fingerprint(), alone.fingerprint());
        QCOMPARE(y.fingerprint(), alone.fingerprint());
    }

    // A CPU keeps the stack it picked until something it decides on changes (Machine::onBoundary).
    // Picking afresh before every op must run the very same events: every preset, and a run whose
    // scheduler granularity, completion switches and threadirqs change while it runs.
    void keptPicksChangeNoEvent()
    {
        const auto both = [](const Scenario& s, const std::function<void(Engine&)>& drive) {
            Engine kept(s), fresh(s);
            fresh.setKeepPicks(false);
            drive(kept);
            drive(fresh);
            QCOMPARE(kept.fingerprint(), fresh.fingerprint());
            QCOMPARE(kept.counters().context_switches, fresh.counters().context_switches);
            for (const auto& m : kept.markers())
                QVERIFY2(m.text.rfind("rejected", 0) != 0, m.text.c_str());
        };
        for (const auto& p : ScenarioLoader::presets())
            both(load(p.name, { "duration=\"3ms\"" }), [](Engine& e) { e.run(); });
        both(load("default", { "duration=\"4ms\"" }), [](Engine& e) {
            e.runUntil(msec(1));
            e.inbox().post({ "costs.sched_granularity_ns", "1000" });
            e.runUntil(msec(2));
            e.inbox().post({ "kernel.threadirqs", "true" });
            e.inbox().post({ "costs.sched_granularity_ns", "3000000" });
            e.run();
        });
    }

    // Bitmap tags take their own-line path when every line an access touches is the CPU's own
    // (BlkMqTags::setOwnPath). The general path must run the very same events: every preset.
    void tagOwnPathChangesNoEvent()
    {
        for (const auto& p : ScenarioLoader::presets()) {
            const Scenario s = load(p.name, { "duration=\"3ms\"" });
            Engine own(s), general(s);
            general.setTagOwnPath(false);
            own.run();
            general.run();
            QCOMPARE(own.fingerprint(), general.fingerprint());
            QCOMPARE(own.counters().tag_local_hits, general.counters().tag_local_hits);
            QCOMPARE(own.summary()["tags"].dump(), general.summary()["tags"].dump());
        }
    }

    void parallelBatchEqualsSerialTwin()
    {
        std::vector<Scenario> batch;
        for (const auto& p : ScenarioLoader::presets())
            for (int seed = 1; seed <= 2; ++seed)
                batch.push_back(load(p.name, { "seed=" + std::to_string(seed), "duration=\"3ms\"" }));
        const auto serial = BatchRunner::runSerial(batch);
        const auto parallel = BatchRunner::runParallel(batch, 2);
        const auto many = BatchRunner::runParallel(batch, 8);
        QCOMPARE(parallel.size(), serial.size());
        for (std::size_t i = 0; i < serial.size(); ++i) {
            QCOMPARE(parallel[i].fingerprint, serial[i].fingerprint);
            QCOMPARE(many[i].fingerprint, serial[i].fingerprint);
            QCOMPARE(parallel[i].summary["io"].dump(), serial[i].summary["io"].dump());
        }
    }

    // OMNeT++-style fingerprint table: a behaviour change shows up here and
    // must be justified by updating data/fingerprints.json (run this test
    // with BLKMQLAB_PRINT_FINGERPRINTS=1 to print the current table).
    void presetFingerprintTable()
    {
        QFile f(QStringLiteral(BLKMQLAB_TEST_DATA "/fingerprints.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const auto table = nlohmann::json::parse(f.readAll().toStdString());
        nlohmann::json now = nlohmann::json::object();
        for (const auto& p : ScenarioLoader::presets()) {
            Engine e(load(p.name));
            e.run();
            now[p.name] = e.fingerprint();
        }
        if (qEnvironmentVariableIsSet("BLKMQLAB_PRINT_FINGERPRINTS"))
            qInfo("%s", now.dump(2).c_str());
        // No two presets run the same events: a preset that does is a twin to remove, or a mechanism
        // its difference was meant to show is missing.
        std::map<std::string, std::string> byFingerprint;
        for (auto it = now.begin(); it != now.end(); ++it) {
            const auto [at, fresh] = byFingerprint.emplace(it.value().get<std::string>(), it.key());
            QVERIFY2(fresh, (it.key() + " runs the same events as " + at->second).c_str());
        }
        QCOMPARE(now.size(), table.size());
        for (auto it = table.begin(); it != table.end(); ++it) {
            QVERIFY2(now.contains(it.key()), it.key().c_str());
            QVERIFY2(now[it.key()] == it.value(), (it.key() + " changed: " + now[it.key()].dump()).c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestDeterminism)
#include "tst_determinism.moc"
