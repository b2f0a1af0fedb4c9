#include "scenario/ScenarioLoader.h"

#include <nlohmann/json.hpp>

#include <QtTest>

using namespace blkmq;

class TestScenario : public QObject {
    Q_OBJECT
private slots:
    void emptyDocumentGivesDefaults()
    {
        auto s = ScenarioLoader::fromText("{}", "test");
        QVERIFY2(s.ok(), s.ok() ? "" : s.error().c_str());
        QCOMPARE(s->devices.size(), std::size_t(1));
        QCOMPARE(s->devices[0].hw_queue_depth, 64);
        QCOMPARE(s->devices[0].rq_affinity, 1);
        QCOMPARE(s->duration.ns(), 10'000'000);
        QCOMPARE(s->kernel.restart, std::string("own-hctx"));
    }

    void everyPresetLoads()
    {
        const auto presets = ScenarioLoader::presets();
        QVERIFY(presets.size() >= 4);
        for (const auto& p : presets) {
            auto s = ScenarioLoader::fromPreset(p.name);
            QVERIFY2(s.ok(), (p.name + ": " + (s.ok() ? "" : s.error())).c_str());
            QVERIFY2(!s->description.empty(), p.name.c_str());
            QVERIFY(!p.summary.empty());
        }
    }

    void setOverridesByPathIndexAndName()
    {
        auto s = ScenarioLoader::fromPreset("default",
            { "devices.nvme0.rq_affinity=2", "devices.0.submit_queues=4", "devices.0.irq_affinity=[0,1,2,3]",
                "kernel.threadirqs=true", "workload.jobs.randread.iodepth=3", "costs.cacheline_ns.remote=500",
                "duration=\"2ms\"", "seed=99" });
        QVERIFY2(s.ok(), s.ok() ? "" : s.error().c_str());
        QCOMPARE(s->devices[0].rq_affinity, 2);
        QCOMPARE(s->devices[0].submit_queues, 4);
        QVERIFY(s->kernel.threadirqs);
        QCOMPARE(s->jobs[0].iodepth, 3);
        QCOMPARE(s->costs.cacheline_ns[static_cast<int>(Distance::Remote)], std::int64_t(500));
        QCOMPARE(s->duration.ns(), 2'000'000);
        QCOMPARE(s->seed, std::uint64_t(99));
        // a patch id with dots in it is one key
        auto v313 = ScenarioLoader::fromPreset("gordeev-2n16", { "kernel.patches.ida-v3.13-steal=true" });
        QVERIFY2(v313.ok(), v313.ok() ? "" : v313.error().c_str());
        QVERIFY(v313->kernel.tag_patches.v313Steal);
    }

    void nrDevicesExpandsAndSharesTags()
    {
        auto s = ScenarioLoader::fromText(
            R"({"devices":[{"name":"nullb","nr_devices":4,"shared_tags":true,"hw_queue_depth":1,"irqmode":"softirq"}],
                "workload":{"jobs":[{"device":"nullb","numjobs":4,"iodepth":4}]}})",
            "test");
        QVERIFY2(s.ok(), s.ok() ? "" : s.error().c_str());
        QCOMPARE(s->devices.size(), std::size_t(4));
        QCOMPARE(s->devices[3].name, std::string("nullb3"));
        QCOMPARE(s->devices[0].tag_set, s->devices[3].tag_set);
    }

    void cpuListsParse()
    {
        auto s = ScenarioLoader::fromText(R"({"topology":"8c","workload":{"jobs":[{"cpus_allowed":"0-2,6"}]}})", "t");
        QVERIFY(s.ok());
        QCOMPARE(s->jobs[0].cpus_allowed, (std::vector<int> { 0, 1, 2, 6 }));
    }

    void badInput_data()
    {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("set");
        QTest::addColumn<QString>("field");
        const auto row = [](const char* name, const char* json, const char* set, const char* field) {
            QTest::newRow(name) << QString::fromUtf8(json) << QString::fromUtf8(set) << QString::fromUtf8(field);
        };
        row("malformed json", R"({"seed": )", "", "not valid JSON");
        row("unknown top key", R"({"sede": 1})", "", "sede: unknown key");
        row("unknown device key", R"({"devices":[{"queues":2}]})", "", "devices[0].queues: unknown key");
        row("wrong type", R"({"seed":"one"})", "", "seed:");
        row("zero cpus", R"({"topology":"0c"})", "", "topology:");
        row("queue depth 0", R"({"devices":[{"hw_queue_depth":0}]})", "",
            "devices[0].hw_queue_depth: must be an integer in 1..4096");
        row("zero queues", R"({"devices":[{"submit_queues":0}]})", "", "devices[0].submit_queues");
        row("negative duration", R"({"duration":"-5ms"})", "", "duration: must be a duration");
        row("zero duration", R"({"duration":0})", "", "duration:");
        row("job on missing cpu", R"({"topology":"4c","workload":{"jobs":[{"cpus_allowed":[7]}]}})", "",
            "workload.jobs[0].cpus_allowed: CPU 7 does not exist");
        row("job on missing device", R"({"workload":{"jobs":[{"device":"sda"}]}})", "", "workload.jobs[0].device");
        row("bad irqmode", R"({"devices":[{"irqmode":"msi"}]})", "", "devices[0].irqmode: must be one of");
        row("bad rq_affinity", R"({"devices":[{"rq_affinity":3}]})", "", "devices[0].rq_affinity");
        row("unknown patch", R"({"kernel":{"patches":{"complete-magic":true}}})", "",
            "kernel.patches.complete-magic: unknown patch id");
        row("unknown restart", R"({"kernel":{"restart":"sometimes"}})", "", "kernel.restart: must be one of");
        row("unknown cost", R"({"costs":{"warp_ns":1}})", "", "costs.warp_ns: unknown key");
        row("negative cost", R"({"costs":{"submit_ns":-1}})", "", "costs.submit_ns");
        row("iodepth 0", R"({"workload":{"jobs":[{"iodepth":0}]}})", "", "workload.jobs[0].iodepth");
        row("bs not sector", R"({"workload":{"jobs":[{"bs":1000}]}})", "", "workload.jobs[0].bs");
        row("format 2", R"({"format":2})", "", "format:");
        row("affinity length", R"({"devices":[{"submit_queues":2,"irq_affinity":[0]}]})", "",
            "devices[0].irq_affinity");
        row("shared tag mismatch",
            R"({"devices":[{"name":"a","tag_set":"t"},{"name":"b","tag_set":"t","hw_queue_depth":8}]})", "",
            "share tag set");
        row("script unknown id", R"({"workload":{"script":[{"op":"complete","id":"Z"}]}})", "",
            "workload.script[0].id");
        row("hold on inline device",
            R"({"devices":[{"irqmode":"none"}],"workload":{"script":[{"id":"A","hold":true}]}})", "",
            "workload.script[0].hold");
        row("set without =", "{}", "kernel.threadirqs", "--set");
        row("set bad value", R"({"devices":[{}]})", "devices.0.rq_affinity=9", "devices[0].rq_affinity");
        row("set missing element", R"({"devices":[{}]})", "devices.nvme7.rq_affinity=1", "--set devices.nvme7");
        row("set into absent array", "{}", "devices.0.rq_affinity=1", "the scenario has no devices");
        row("set unknown key", "{}", "kernel.magic=1", "kernel.magic: unknown key");
    }
    void badInput()
    {
        QFETCH(QString, json);
        QFETCH(QString, set);
        QFETCH(QString, field);
        std::vector<std::string> sets;
        if (!set.isEmpty())
            sets.push_back(set.toStdString());
        auto s = ScenarioLoader::fromText(json.toStdString(), "test", sets);
        QVERIFY(!s.ok());
        QVERIFY2(QString::fromStdString(s.error()).contains(field), s.error().c_str());
        QVERIFY(s.error().find('\n') == std::string::npos); // one line
    }

    void unknownPreset()
    {
        auto s = ScenarioLoader::fromPreset("nope");
        QVERIFY(!s.ok());
        QVERIFY(s.error().find("unknown preset 'nope'") != std::string::npos);
        QVERIFY(s.error().find("default") != std::string::npos); // lists the valid names
    }
};

QTEST_GUILESS_MAIN(TestScenario)
#include "tst_scenario.moc"
