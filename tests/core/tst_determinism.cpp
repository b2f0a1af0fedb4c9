// TBB first (TOOLCHAIN.md): Qt's emit macro breaks TBB's headers otherwise.
#include <oneapi/tbb/parallel_invoke.h>

#include "TestUtil.h"

#include "experiment/BatchRunner.h"

#include <QFile>

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
        QCOMPARE(now.size(), table.size());
        for (auto it = table.begin(); it != table.end(); ++it) {
            QVERIFY2(now.contains(it.key()), it.key().c_str());
            QVERIFY2(now[it.key()] == it.value(), (it.key() + " changed: " + now[it.key()].dump()).c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestDeterminism)
#include "tst_determinism.moc"
