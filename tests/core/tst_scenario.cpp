#include "scenario/ScenarioLoader.h"
#include "io/Text.h"

#include "HostileJson.h"

#include "sim/Duration.h"

#include <nlohmann/json.hpp>

#include <optional>

#include <QtTest>

using namespace blkmq;

class TestScenario : public QObject {
    Q_OBJECT
private slots:
    // One rule for text: what textProblem() takes, a JSON writer writes, and what it refuses a JSON
    // writer would throw on (every lead byte with every second byte, the rest continuation bytes).
    void textRuleIsTheJsonWritersRule()
    {
        int taken = 0;
        for (int lead = 0x80; lead <= 0xff; ++lead)
            for (int second = 0; second <= 0xff; ++second) {
                std::string t { 'a', char(lead), char(second), '\x80', '\x80', 'z' };
                // As many bytes as the lead byte announces (one to three continuation bytes).
                t.erase(2 + (lead >= 0xf0 ? 3 : lead >= 0xe0 ? 2 : 1), 3 - (lead >= 0xf0 ? 3 : lead >= 0xe0 ? 2 : 1));
                bool writes = true;
                try {
                    (void)nlohmann::json(t).dump();
                } catch (const nlohmann::json::exception&) {
                    writes = false;
                }
                const bool text = textProblem(t, false).empty();
                QVERIFY2(text == writes, printable(t).c_str());
                taken += text;
            }
        // C2..DF with 80..BF, E0 A0..BF, E1..EC and EE..EF 80..BF, ED 80..9F, F0 90..BF, F1..F3, F4 80..8F.
        QCOMPARE(taken, 30 * 64 + 32 + 14 * 64 + 32 + 48 + 3 * 64 + 16);
    }

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

    // The field inventory is the loader's own: every field of the full document, with a rule.
    void everyFieldIsInTheInventory()
    {
        const auto fields = ScenarioLoader::fields();
        QVERIFY(fields.size() > 60);
        QVERIFY2(fields.front().kind != "error", fields.front().rule.c_str());
        const auto has = [&](const char* path) {
            return std::any_of(fields.begin(), fields.end(), [&](const FieldInfo& f) { return f.path == path; });
        };
        for (const char* path : { "devices[].hw_queue_depth", "workload.jobs[].cpus_allowed", "workload.script[].hold",
                 "kernel.patches.complete-llist", "kernel.version", "costs.cacheline_ns", "workload.net_rx[].pps" })
            QVERIFY2(has(path), path);
        QVERIFY(ScenarioLoader::fromJson(ScenarioLoader::fullDocument()).ok());
    }

    // Every field of the inventory fed the hostile values of JSON: each is refused with one line that
    // names the field, or accepted only where the field's rule takes it (no integer from 0.5, no
    // control character or broken UTF-8 in any string). Never a crash or a hang.
    void everyFieldRefusesHostileValues()
    {
        using json = nlohmann::json;
        const json base = ScenarioLoader::fullDocument();
        const auto& hostile = test::hostileJson();
        int tried = 0;
        for (const FieldInfo& f : ScenarioLoader::fields()) {
            const std::string at = test::firstElement(f.path);
            for (const auto& [name, value] : hostile) {
                json doc = base;
                test::at(doc, at) = value;
                ++tried;
                const auto r = ScenarioLoader::fromJson(doc);
                const std::string what = f.path + " = " + name;
                if (!r.ok()) {
                    const std::string& e = r.error();
                    QVERIFY2(e.find('\n') == std::string::npos && e.size() < 700, (what + ": " + e).c_str());
                    QVERIFY2(e.find('\x1b') == std::string::npos, (what + ": an escape reached the message").c_str());
                    // The message starts with the field, or (an emptied or renamed declaration) names it
                    // where the field that referred to it is reported.
                    const std::string last = f.path.substr(f.path.find_last_of('.') + 1);
                    const std::string bare = last.substr(0, last.find('['));
                    QVERIFY2(e.rfind(at, 0) == 0 || e.find(bare) != std::string::npos || f.kind == "string",
                        (what + ": " + e).c_str());
                    continue;
                }
                // Accepted: only what the field's rule takes.
                QVERIFY2(!(value.is_string()
                             && (name == "control character" || name == "terminal escape" || name == "broken UTF-8"
                                 || (name == "newline" && f.path != "description"))),
                    (what + ": accepted").c_str());
                if (f.kind == "integer") {
                    const auto dots = f.rule.find("..");
                    QVERIFY2(value.is_number_integer(), (what + ": accepted as an integer").c_str());
                    if (value.is_number_unsigned() && f.path != "seed")
                        QVERIFY2(value.get<std::uint64_t>() <= std::stoull(f.rule.substr(dots + 2)), what.c_str());
                    else if (value.is_number_integer() && !value.is_number_unsigned())
                        QVERIFY2(value.get<std::int64_t>() >= std::stoll(f.rule.substr(0, dots)), what.c_str());
                } else if (f.kind == "boolean") {
                    QVERIFY2(value.is_boolean(), (what + ": accepted as a boolean").c_str());
                } else if (f.kind == "choice") {
                    QVERIFY2(value.is_string() && f.rule.find(value.get<std::string>()) != std::string::npos,
                        (what + ": accepted as a choice").c_str());
                } else if (f.kind == "duration") {
                    QVERIFY2((value.is_number_integer() && value.get<std::int64_t>() >= 0)
                            || (value.is_string() && parseDuration(value.get<std::string>())),
                        (what + ": accepted as a duration").c_str());
                }
            }
        }
        QVERIFY(tried > 60 * static_cast<int>(hostile.size()));
    }

    // --set PATH=VALUE on every field of the inventory, the value written as a user types it (JSON
    // when it parses, else a string), and hostile paths: each is refused with one line naming the
    // path, or accepted only where the field's kind takes the value. Never a crash or a hang.
    void everySetPathRefusesHostileValues()
    {
        using json = nlohmann::json;
        const std::vector<std::string> texts { "nan", "inf", "-inf", "-0", "1e300", "-1", "0.5", "9223372036854775808",
            "18446744073709551616", "", "a\x01b", "\x1b[31mred", "a\nb", "a\xff", std::string(100000, '7'), "../x/y",
            "[]", "[1,1]", "{}", "{\"zz\":1}", "null", "true", std::string(200, '[') };
        int tried = 0;
        for (const FieldInfo& f : ScenarioLoader::fields()) {
            std::string path; // "devices[].x" as --set writes it: "devices.0.x"
            for (char c : f.path)
                path += c == '[' ? std::string(".0") : c == ']' ? std::string() : std::string(1, c);
            for (const std::string& text : texts) {
                ++tried;
                const auto r = ScenarioLoader::fromPreset("default", { path + "=" + text });
                const std::string what = path + "=" + printable(text, 40);
                if (!r.ok()) {
                    const std::string& e = r.error();
                    QVERIFY2(
                        e.find('\n') == std::string::npos && e.size() < 700, (what + ": " + e.substr(0, 300)).c_str());
                    QVERIFY2(e.find('\x1b') == std::string::npos, (what + ": an escape reached the message").c_str());
                    const std::string bare = path.substr(path.find_last_of('.') + 1);
                    QVERIFY2(
                        e.find(path) != std::string::npos || e.find(bare) != std::string::npos || f.kind == "string",
                        (what + ": " + e).c_str());
                    continue;
                }
                json value = json::parse(text, nullptr, false);
                if (value.is_discarded())
                    value = text;
                const std::string name = text == "a\x01b" ? "control character"
                    : text.rfind("\x1b", 0) == 0          ? "terminal escape"
                    : text == "a\nb"                      ? "newline"
                    : text == "a\xff"                     ? "broken UTF-8"
                                                          : text;
                FieldInfo asTyped = f;
                if (f.kind != "integer" && f.kind != "boolean")
                    asTyped.kind = "any"; // durations, cpulists, choices: their own tests
                if (f.path == "description")
                    asTyped.kind = "text";
                const std::string why = test::badAcceptance(asTyped, name, value);
                QVERIFY2(why.empty(), (what + ": accepted, " + why).c_str());
            }
        }
        // Paths that name nothing, or that would reach the terminal: refused, one line, no escape.
        for (const std::string& path : std::vector<std::string> { "", ".", "a..b", "devices.99.rq_affinity",
                 "devices.-1.rq_affinity", "devices.0.\x1b[2J", "kernel.patches.\x01", std::string(100000, 'k'),
                 "workload.jobs.0.0.0", "costs.__proto__", "seed.x" }) {
            const auto r = ScenarioLoader::fromPreset("default", { path + "=1" });
            QVERIFY2(!r.ok(), printable(path).c_str());
            QVERIFY2(
                r.error().find('\n') == std::string::npos && r.error().size() < 700, r.error().substr(0, 300).c_str());
            QVERIFY2(r.error().find('\x1b') == std::string::npos && r.error().find('\x01') == std::string::npos,
                printable(r.error()).c_str());
        }
        QVERIFY(tried > 60 * static_cast<int>(texts.size()));
    }
};

QTEST_GUILESS_MAIN(TestScenario)
#include "tst_scenario.moc"
