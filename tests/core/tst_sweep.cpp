// Sweeps (experiment/Sweep.h): reading a sweep file, the CSV and its quoting, merging the shards of
// one grid into what one unsharded sweep writes, the chart of one metric against one axis, and the
// chart's JSON that blkmqlab-chart reads. The command line around them is tests/cli's.
#include "TestUtil.h"

#include "experiment/Sweep.h"
#include "metrics/Metrics.h"

#include <nlohmann/json.hpp>

using namespace blkmq;
using namespace blkmq::test;

namespace {

Sweep sweepOf(const char* json)
{
    auto s = parseSweepFile("grid.json", nlohmann::json::parse(json), {});
    if (!s.ok())
        qFatal("%s", s.error().c_str());
    finishIdentity(*s);
    return std::move(*s);
}

// Two axes (the seed varying fastest) on a short default run.
const char* kGrid = R"({"base": {"preset": "default", "set": ["duration=200us"]},
    "axes": [{"path": "kernel.patches.complete-llist", "values": [false, true]}, {"path": "seed", "from": 1, "to": 3}],
    "metrics": ["iops", "ipis_per_s"]})";

// The CSV of `shard` of the grid, as blkmqlab-cli sweep --shard writes it.
std::string csvOf(const Sweep& s, Experiment::Shard shard)
{
    const Experiment e(s.load, s.axes);
    std::string csv = csvHeader(s);
    const std::string identity = csvIdentity(gridHash(s), e.size(), shard.index, shard.count, "0123456789abcdef");
    Experiment::Options o;
    o.shard = shard;
    const auto status = e.run(o, [&](RunResult&& r) { csv += csvRow(s, r, identity); });
    if (!status.error.empty())
        qFatal("%s", status.error.c_str());
    return csv;
}

} // namespace

class TestSweep : public QObject {
    Q_OBJECT
private slots:
    void readsASweepFile()
    {
        const Sweep s = sweepOf(kGrid);
        QCOMPARE(s.axes.size(), std::size_t(2));
        QCOMPARE(s.axes[0].name(), std::string("kernel.patches.complete-llist"));
        QCOMPARE(s.axes[1].size(), std::uint64_t(3)); // 1, 2, 3
        QCOMPARE(s.axes[1].point(2).label, std::string("3"));
        QCOMPARE(s.metrics, (std::vector<int> { findMetric("iops"), findMetric("ipis_per_s") }));
        QVERIFY(checkAxes(s).empty());
        // The grid's name changes with anything that changes its runs or columns.
        const Sweep other = sweepOf(R"({"base": {"preset": "default", "set": ["duration=200us"]},
            "axes": [{"path": "kernel.patches.complete-llist", "values": [false, true]}, {"path": "seed", "from": 1, "to": 4}],
            "metrics": ["iops", "ipis_per_s"]})");
        QVERIFY(gridHash(s) != gridHash(other));
        QCOMPARE(gridHash(s), gridHash(sweepOf(kGrid)));
        // No metrics named: the default columns.
        QCOMPARE(sweepOf(R"({"axes": [{"path": "seed", "values": [1]}]})").metrics, sweepDefaultMetrics());
    }

    void badSweepFilesNameTheField_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QByteArray>("names");
        QTest::newRow("no axes") << QByteArray("{}") << QByteArray("grid.json: axes");
        QTest::newRow("unknown key") << QByteArray(R"({"axes": [{"path": "seed", "values": [1]}], "axis": 1})")
                                     << QByteArray("axis");
        QTest::newRow("repeated value") << QByteArray(R"({"axes": [{"path": "seed", "values": [1, 1]}]})")
                                        << QByteArray("axes[0].values[1]: repeats values[0]");
        QTest::newRow("empty range") << QByteArray(R"({"axes": [{"path": "seed", "from": 3, "to": 1}]})")
                                     << QByteArray("axes[0].to: the range 3 to 1 is empty");
        QTest::newRow("step below precision")
            << QByteArray(R"({"axes": [{"path": "x", "from": 1e17, "to": 1.00000000000001e17, "step": 1}]})")
            << QByteArray("axes[0].step");
        QTest::newRow("too many values") << QByteArray(R"({"axes": [{"path": "seed", "from": 0, "to": 1e9}]})")
                                         << QByteArray("axes[0].to: the range gives more than 10000 values");
        QTest::newRow("comma in path") << QByteArray(R"({"axes": [{"path": "a,b", "values": [1]}]})")
                                       << QByteArray("axes[0].path: a dotted path has no commas");
        QTest::newRow("unknown metric") << QByteArray(
            R"({"axes": [{"path": "seed", "values": [1]}], "metrics": ["speed"]})")
                                        << QByteArray("metrics: 'speed' is not a metric id");
        QTest::newRow("two bases") << QByteArray(R"({"base": {"preset": "default", "file": "x.json"}, "axes": []})")
                                   << QByteArray("grid.json: base: a preset name");
    }
    void badSweepFilesNameTheField()
    {
        QFETCH(QByteArray, json);
        QFETCH(QByteArray, names);
        const auto s = parseSweepFile("grid.json", nlohmann::json::parse(json.toStdString()), {});
        QVERIFY(!s.ok());
        QVERIFY2(s.error().find(names.toStdString()) != std::string::npos, s.error().c_str());
    }

    // An axis value the scenario refuses is named by its axis before anything runs.
    void checkAxesNamesTheRefusedValue()
    {
        const Sweep bad = sweepOf(R"({"axes": [{"path": "workload.jobs.0.iodepth", "values": [32, -5]}]})");
        const std::string e = checkAxes(bad);
        QVERIFY2(e.find("grid.json: axes[0].values (workload.jobs.0.iodepth = -5)") == 0, e.c_str());
        const Sweep unknown = sweepOf(R"({"axes": [{"path": "workload.jobs.0.colour", "values": [1]}]})");
        QVERIFY2(checkAxes(unknown).find("grid.json: axes[0].path: ") == 0, checkAxes(unknown).c_str());
    }

    void csvQuotesWhatWouldSplitAField()
    {
        // (an ordinary string: moc reads a raw one with \" in it as unbalanced)
        const Sweep s = sweepOf("{\"axes\": [{\"path\": \"name\", \"values\": [\"a,b\", \"say \\\"hi\\\"\", "
                                "\"plain\"]}], \"metrics\": [\"iops\"]}");
        const std::string header = csvHeader(s);
        QCOMPARE(
            header, std::string("index,name,iops,stalled,first_stuck_ns,fingerprint,grid,grid_runs,shard,model\n"));
        RunResult r;
        r.index = 1;
        r.labels = { "say \"hi\"" };
        r.metrics[static_cast<std::size_t>(findMetric("iops"))] = 0.1 + 0.2; // the shortest text that reads back
        r.fingerprint = "00ff";
        const std::string row = csvRow(s, r, csvIdentity("abc", 3, 0, 1, "m"));
        QCOMPARE(row, std::string("1,\"say \"\"hi\"\"\",0.30000000000000004,0,-1,00ff,abc,3,0/1,m\n"));
        QCOMPARE(csvFieldCount(row.substr(0, row.size() - 1)), csvFieldCount(header.substr(0, header.size() - 1)));
        r.labels = { "a,b" };
        const std::string quoted = csvRow(s, r, csvIdentity("abc", 3, 0, 1, "m"));
        QCOMPARE(csvFieldCount(quoted.substr(0, quoted.size() - 1)), std::size_t(10));
    }

    // The shards of a grid, merged in any order, are byte for byte the unsharded CSV.
    void shardsMergeIntoTheUnshardedCsv()
    {
        const Sweep s = sweepOf(kGrid);
        const std::string whole = csvOf(s, { 0, 1 });
        const std::string a = csvOf(s, { 0, 3 }), b = csvOf(s, { 1, 3 }), c = csvOf(s, { 2, 3 });
        ShardMerge merge;
        QCOMPARE(merge.add("c.csv", c), std::string());
        QCOMPARE(merge.add("a.csv", a), std::string());
        std::string bCrLf; // a shard that went through Windows
        for (const char ch : b)
            bCrLf += ch == '\n' ? std::string("\r\n") : std::string(1, ch);
        QCOMPARE(merge.add("b.csv", bCrLf), std::string());
        const auto merged = merge.finish();
        QVERIFY2(merged.ok(), merged.ok() ? "" : merged.error().c_str());
        QCOMPARE(*merged, whole);
    }

    void mergeRefusesWhatIsNotOneGrid()
    {
        const Sweep s = sweepOf(kGrid);
        const std::string a = csvOf(s, { 0, 2 }), b = csvOf(s, { 1, 2 });
        const auto refused = [](std::vector<std::pair<std::string, std::string>> files, const std::string& why) {
            ShardMerge m;
            std::string e;
            for (auto& [name, text] : files)
                if (e.empty())
                    e = m.add(name, text);
            if (e.empty())
                e = m.finish().ok() ? std::string() : m.finish().error();
            if (e.find(why) == std::string::npos)
                qWarning("'%s' lacks '%s'", e.c_str(), why.c_str());
            return e.find(why) != std::string::npos;
        };
        QVERIFY(refused({ { "a.csv", a } }, "shard(s) 1/2 missing"));
        QVERIFY(refused({ { "a.csv", a }, { "again.csv", a } }, "again.csv: shard 0/2 is given twice (also a.csv)"));
        QVERIFY(
            refused({ { "a.csv", a }, { "b.csv", b.substr(0, b.size() - 3) } }, "b.csv: its last row is cut short"));
        const Sweep other = sweepOf(R"({"base": {"preset": "default", "set": ["duration=200us"]},
            "axes": [{"path": "seed", "from": 1, "to": 4}], "metrics": ["iops", "ipis_per_s"]})");
        QVERIFY(refused({ { "a.csv", a }, { "o.csv", csvOf(other, { 1, 2 }) } }, "o.csv: its column header differs"));
        std::string otherModel = b;
        for (std::size_t at; (at = otherModel.find("0123456789abcdef")) != std::string::npos;)
            otherModel.replace(at, 16, "fedcba9876543210");
        QVERIFY(refused({ { "a.csv", a }, { "b.csv", otherModel } }, "b.csv: computed by another build of the lab"));
        QVERIFY(refused({ { "x.csv", "index,a\n1,2\n" } }, "x.csv: not the CSV of blkmqlab-cli sweep"));
        QVERIFY(refused({}, "give the CSV files of a sharded sweep"));
    }

    // The chart: a line per value of the other axis, each point the mean over the seeds with its range.
    void chartAveragesTheSeeds()
    {
        const Sweep s = sweepOf(kGrid);
        const int iops = findMetric("iops");
        std::vector<ChartPoint> points;
        // llist false: 10, 20, 30 over the seeds; true: 40 for each
        for (const char* llist : { "false", "true" })
            for (int seed = 1; seed <= 3; ++seed)
                points.push_back(
                    { { llist, std::to_string(seed) }, std::string(llist) == "true" ? 40.0 : 10.0 * seed });
        const SweepChart one = chartOf(s, 0, iops, points); // against the patch: one line, 3 seeds
        QCOMPARE(one.seeds, 3);
        QCOMPARE(one.lines.size(), std::size_t(1));
        QCOMPARE(one.xTicks, (std::vector<std::string> { "false", "true" })); // not numeric: named ticks
        const double scale = unitInfo(kMetrics[static_cast<std::size_t>(iops)].unit).plotScale;
        QCOMPARE(one.lines[0].mean, (std::vector<double> { 20 * scale, 40 * scale }));
        QCOMPARE(one.lines[0].min, (std::vector<double> { 10 * scale, 40 * scale }));
        QCOMPARE(one.lines[0].max, (std::vector<double> { 30 * scale, 40 * scale }));
        const SweepChart bySeed = chartOf(s, 1, iops, points); // against the seed: a line per patch value
        QCOMPARE(bySeed.lines.size(), std::size_t(2));
        QVERIFY(bySeed.xTicks.empty()); // seeds are numbers
        QCOMPARE(bySeed.lines[0].label, std::string("kernel.patches.complete-llist=false"));
        QCOMPARE(bySeed.lines[0].x, (std::vector<double> { 1, 2, 3 }));
    }

    void chartJsonRoundTripsAndRefusesBadInput()
    {
        SweepChart c;
        c.title = "IOPS";
        c.xLabel = "jobs";
        c.yLabel = "IOPS (M/s)";
        c.seeds = 2;
        c.lines.push_back({ "a", { 1, 2 }, { 3, 4 }, { 2, 3 }, { 4, 5 } });
        const auto back = sweepChartFromJson(toJson(c));
        QVERIFY(back.ok());
        QCOMPARE(toJson(*back), toJson(c));
        const auto refused = [&](const std::function<void(nlohmann::json&)>& spoil, const std::string& why) {
            nlohmann::json j = toJson(c);
            spoil(j);
            const auto r = sweepChartFromJson(j);
            return !r.ok() && r.error().find(why) != std::string::npos;
        };
        QVERIFY(refused([](auto& j) { j.erase("title"); }, "title: a string is required"));
        QVERIFY(refused([](auto& j) { j["seeds"] = 0; }, "seeds: a whole number"));
        QVERIFY(refused([](auto& j) { j["lines"][0]["mean"].push_back(1); }, "lines[0]: x, mean, min and max"));
        QVERIFY(refused([](auto& j) { j["lines"] = nlohmann::json::array(); }, "lines: a list of 1 to"));
        QVERIFY(refused([](auto& j) { j["lines"][0]["x"][0] = "one"; }, "lines[0].x: finite numbers only"));
        QVERIFY(refused([](auto& j) { j["title"] = std::string("a\x1b[2Jb"); }, "control character"));
    }
};

QTEST_GUILESS_MAIN(TestSweep)
#include "tst_sweep.moc"
