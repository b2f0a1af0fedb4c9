// blkmqlab-cli as a user runs it: exit codes, messages, output files.
#include <QDir>
#include <QFileInfo>
#include <QFile>
#include <QJsonDocument>
#include <QJsonArray>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "HostileJson.h"

#include <nlohmann/json.hpp>

#include <csignal>
#include <cstdio>
#include <tuple>
#include <vector>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

class TestCli : public QObject {
    Q_OBJECT

    struct Result {
        int code = -1;
        QString out;
        QString err;
    };
    static Result cli(const QStringList& args)
    {
        QProcess p;
        p.start(QStringLiteral(BLKMQLAB_CLI), args);
        if (!p.waitForFinished(600000)) // sanitizer builds of validate all take minutes on a busy machine
            return {};
        return { p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2,
            QString::fromUtf8(p.readAllStandardOutput()), QString::fromUtf8(p.readAllStandardError()) };
    }

    static bool writeFile(const QString& path, const QByteArray& content)
    {
        QFile f(path);
        return f.open(QIODevice::WriteOnly) && f.write(content) == content.size();
    }
    static QByteArray head(const QString& path)
    {
        QFile f(path);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }

private slots:
    void lessonsCheckHeadless()
    {
        const auto list = cli({ u"lessons"_qs });
        QCOMPARE(list.code, 0);
        QStringList names;
        for (const QString& line : list.out.split(u'\n'))
            if (line.startsWith(u"  "_qs) && !line.contains(u"  a "_qs) && line.trimmed().contains(u' '))
                names << line.trimmed().section(u' ', 0, 0);
        QVERIFY(names.contains(u"shared-hctx-stall"_qs));
        QVERIFY(names.contains(u"where-requests-complete"_qs));
        for (const QString& name : { u"shared-hctx-stall"_qs, u"where-requests-complete"_qs, u"softirq-threadirqs"_qs,
                 u"restart-walk-cost"_qs, u"percpu-ida-vs-bitmap"_qs }) {
            const auto r = cli({ u"lesson"_qs, name, u"--check"_qs });
            QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
            QVERIFY(r.out.contains(u"every expectation holds"_qs));
        }
        // Played without --check, a lesson tells its steps and each expectation's values.
        const auto told = cli({ u"lesson"_qs, u"shared-hctx-stall"_qs });
        QCOMPARE(told.code, 0);
        QVERIFY(told.out.contains(u"8. D completes: queue B's counter is 0, so the walk is skipped  [t = "_qs));
        QVERIFY(told.out.contains(u"ok      restart_skips == 1   (restart_skips = 1)"_qs));
    }

    void lessonThatDoesNotHoldExits4()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(u"wrong.json"_qs);
        QVERIFY(writeFile(path,
            R"({"format": 1, "name": "wrong", "title": "A wrong claim", "steps": [ { "title": "The stall preset with the fix", "text": "It cannot stall.", "scenario": { "preset": "shared-hctx-stall", "set": ["kernel.restart=rr-shared-tags-counter"] }, "until": "time:1ms", "expect": ["stalled == 1"] } ] })"));
        const auto r = cli({ u"lesson"_qs, path, u"--check"_qs });
        QCOMPARE(r.code, 4);
        QVERIFY2(
            r.out.contains(u"wrong step 1 (The stall preset with the fix): FAILED  stalled == 1   (stalled = 0)"_qs),
            qPrintable(r.out));
        const auto unknown = cli({ u"lesson"_qs, u"nope"_qs });
        QCOMPARE(unknown.code, 2);
        QVERIFY(unknown.err.contains(u"unknown lesson 'nope'"_qs));
        QCOMPARE(cli({ u"lesson"_qs }).code, 2);
    }

    // Every command answers --help (or -h) with its usage and its options from the option table;
    // --opt=value is --opt value.
    // One table of commands drives the dispatch, help, each command's --help and the message about an
    // unknown command; every option row names only commands of it.
    void oneCommandTable()
    {
        const auto unknown = cli({ u"frobnicate"_qs });
        QCOMPARE(unknown.code, 2);
        const auto at = unknown.err.indexOf(u"(commands: "_qs);
        QVERIFY2(at > 0, qPrintable(unknown.err));
        const QStringList names = unknown.err.mid(at + 11).section(u')', 0, 0).split(u", "_qs);
        QVERIFY2(names.size() >= 20, qPrintable(names.join(u' ')));
        const auto help = cli({ u"help"_qs });
        const auto block = cli({ u"help"_qs, u"commands"_qs });
        QCOMPARE(help.code, 0);
        QCOMPARE(block.code, 0);
        for (const QString& name : names) {
            const QString head = u"blkmqlab-cli "_qs + name;
            QVERIFY2(help.out.contains(u"\n  "_qs + head), qPrintable(name));
            QVERIFY2(block.out.startsWith(head) || block.out.contains(u"\n"_qs + head), qPrintable(name));
            if (name == u"help"_qs)
                continue;
            const auto own = cli({ name, u"--help"_qs });
            QCOMPARE(own.code, 0);
            QVERIFY2(own.out.startsWith(u"  "_qs + head), qPrintable(own.out));
        }
        QCOMPARE(cli({ u"help"_qs, u"frobnicate"_qs }).code, 2);
        const auto opts = cli({ u"fields"_qs, u"options"_qs });
        QCOMPARE(opts.code, 0);
        static const QRegularExpression row(
            uR"(^\| `--[a-z-]+ \(([a-z -]+)\)`)"_qs, QRegularExpression::MultilineOption);
        int rows = 0;
        for (auto m = row.globalMatch(opts.out); m.hasNext(); ++rows)
            for (const QString& command : m.next().captured(1).split(u' '))
                QVERIFY2(names.contains(command), qPrintable(command));
        QVERIFY(rows > 20);
    }

    void commandsHaveHelpAndTakeOptEqualsValue()
    {
        const auto run = cli({ u"run"_qs, u"--help"_qs });
        QCOMPARE(run.code, 0);
        QVERIFY2(run.out.startsWith(u"  blkmqlab-cli run [FILE|JOB.fio]"_qs), qPrintable(run.out));
        QVERIFY(run.out.contains(u"  blkmqlab-cli run --session FILE.blkmqlab"_qs));
        QVERIFY(!run.out.contains(u"blkmqlab-cli explore"_qs));
        QVERIFY2(run.out.contains(u"\n  --debugfs folder  "_qs), qPrintable(run.out));
        QVERIFY(run.out.contains(u"\n  --quiet  "_qs));
        QVERIFY(!run.out.contains(u"--case"_qs)); // oracle's, not run's
        const auto oracle = cli({ u"oracle"_qs, u"--preset"_qs, u"default"_qs, u"-h"_qs });
        QCOMPARE(oracle.code, 0);
        QVERIFY(oracle.out.contains(u"  --case file  "_qs));
        const auto presets = cli({ u"presets"_qs, u"--help"_qs });
        QCOMPARE(presets.code, 0);
        QVERIFY2(presets.out.startsWith(u"  blkmqlab-cli presets\n"_qs), qPrintable(presets.out));
        QVERIFY(!presets.out.contains(u"options"_qs)); // it takes none
        // A value that reads "--help" is a value, not a request for help.
        QCOMPARE(cli({ u"run"_qs, u"--set"_qs, u"--help"_qs }).code, 2);
        // --opt=value runs the same run as --opt value; a flag takes no value.
        const auto spaced = cli({ u"run"_qs, u"--preset"_qs, u"default"_qs, u"--duration"_qs, u"1ms"_qs, u"--seed"_qs,
            u"2"_qs, u"--json"_qs, u"-"_qs });
        const auto joined = cli({ u"run"_qs, u"--preset=default"_qs, u"--duration=1ms"_qs, u"--seed=2"_qs,
            u"--set=kernel.threadirqs=false"_qs, u"--json=-"_qs });
        QCOMPARE(joined.code, 0);
        const auto fingerprint = [](const QString& json) {
            return QJsonDocument::fromJson(json.toUtf8()).object()[u"fingerprint"_qs].toString();
        };
        QVERIFY(!fingerprint(spaced.out).isEmpty());
        QCOMPARE(fingerprint(joined.out), fingerprint(spaced.out));
        const auto flag = cli({ u"run"_qs, u"--quiet=1"_qs });
        QCOMPARE(flag.code, 2);
        QVERIFY2(flag.err.contains(u"unknown option '--quiet=1'"_qs), qPrintable(flag.err));
    }

    void runDefaultPrintsReport()
    {
        const auto r = cli({ u"run"_qs, u"--duration"_qs, u"2ms"_qs });
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains(u"default: seed 1"_qs));
        QVERIFY(r.out.contains(u"IOPS="_qs));
        QVERIFY(r.out.contains(u"fingerprint"_qs));
    }

    void jsonAndCsvOutputs()
    {
        QTemporaryDir dir;
        const QString json = dir.filePath(u"s.json"_qs), csv = dir.filePath(u"s.csv"_qs);
        const auto r = cli({ u"run"_qs, u"--preset"_qs, u"single-core-null"_qs, u"--duration"_qs, u"3ms"_qs,
            u"--json"_qs, json, u"--csv"_qs, csv, u"--quiet"_qs });
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.isEmpty());
        QFile jf(json);
        QVERIFY(jf.open(QIODevice::ReadOnly));
        const QJsonObject s = QJsonDocument::fromJson(jf.readAll()).object();
        for (const auto& key :
            { u"scenario"_qs, u"seed"_qs, u"sim_time_ns"_qs, u"io"_qs, u"latency_ns"_qs, u"clat_ns"_qs,
                u"completion"_qs, u"restart"_qs, u"stall"_qs, u"tags"_qs, u"engine"_qs, u"fingerprint"_qs })
            QVERIFY2(s.contains(key), qPrintable(key));
        QCOMPARE(s[u"sim_time_ns"_qs].toDouble(), 3e6);
        QVERIFY(s[u"metrics"_qs].toObject()[u"iops"_qs].toDouble() > 1e6);
        QFile cf(csv);
        QVERIFY(cf.open(QIODevice::ReadOnly));
        const auto lines = QString::fromUtf8(cf.readAll()).trimmed().split(u'\n');
        QCOMPARE(lines.size(), 4); // header + 3 one-millisecond rows
        QVERIFY(lines[0].startsWith(u"t_ns,iops"_qs));
        QVERIFY(QDir(dir.path()).entryList(QDir::Files).size() == 2); // no temporary files left
    }

    void jsonToStdout()
    {
        const auto r = cli(
            { u"run"_qs, u"--preset"_qs, u"single-core-null"_qs, u"--duration"_qs, u"1ms"_qs, u"--json"_qs, u"-"_qs });
        QCOMPARE(r.code, 0);
        QVERIFY(QJsonDocument::fromJson(r.out.toUtf8()).isObject());
    }

    void sameSeedSameFingerprint()
    {
        const QStringList args { u"run"_qs, u"--preset"_qs, u"default"_qs, u"--duration"_qs, u"2ms"_qs, u"--json"_qs,
            u"-"_qs };
        const auto a = cli(args), b = cli(args);
        const auto fp = [](const Result& r) {
            return QJsonDocument::fromJson(r.out.toUtf8()).object()[u"fingerprint"_qs].toString();
        };
        QVERIFY(!fp(a).isEmpty());
        QCOMPARE(fp(a), fp(b));
        const auto c = cli(args + QStringList { u"--seed"_qs, u"7"_qs });
        QVERIFY(fp(c) != fp(a));
    }

    void badInput_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("unknown preset") << QStringList { u"run"_qs, u"--preset"_qs, u"nope"_qs }
                                        << u"unknown preset 'nope'"_qs;
        QTest::newRow("malformed set") << QStringList { u"run"_qs, u"--set"_qs, u"kernel.threadirqs"_qs }
                                       << u"--set"_qs;
        QTest::newRow("bad set value") << QStringList { u"run"_qs, u"--set"_qs, u"devices.0.hw_queue_depth=0"_qs }
                                       << u"devices[0].hw_queue_depth"_qs;
        QTest::newRow("negative duration")
            << QStringList { u"run"_qs, u"--duration"_qs, u"-1ms"_qs } << u"--duration"_qs;
        QTest::newRow("bad seed") << QStringList { u"run"_qs, u"--seed"_qs, u"x"_qs } << u"--seed"_qs;
        QTest::newRow("unknown option") << QStringList { u"run"_qs, u"--fast"_qs } << u"--fast"_qs;
        QTest::newRow("missing file") << QStringList { u"run"_qs, u"/nonexistent.json"_qs } << u"cannot open"_qs;
        QTest::newRow("job on missing cpu")
            << QStringList { u"run"_qs, u"--set"_qs, u"workload.jobs.0.cpus_allowed=[99]"_qs }
            << u"workload.jobs[0].cpus_allowed"_qs;
        QTest::newRow("unknown patch") << QStringList {
            u"run"_qs, u"--set"_qs, u"kernel.patches.complete-magic=true"_qs
        } << u"known: complete-no-remote-threaded, complete-remote-softirq, complete-llist"_qs;
        QTest::newRow("unknown restart variant") << QStringList {
            u"run"_qs, u"--set"_qs, u"kernel.restart=never"_qs
        } << u"kernel.restart: must be one of own-hctx, rr-shared, rr-shared-queue-counter, rr-shared-tags-counter, queue-flag"_qs;
        QTest::newRow("undeclared tag set") << QStringList { u"run"_qs, u"--preset"_qs, u"shared-hctx-stall"_qs,
            u"--set"_qs, u"devices.nullb1.tag_set=other"_qs }
                                            << u"devices[1].tag_set: names tag set 'other'"_qs;
        QTest::newRow("unknown command") << QStringList { u"fly"_qs } << u"unknown command"_qs;
        QTest::newRow("bad topology") << QStringList { u"topology"_qs, u"0c"_qs } << u"topology"_qs;
        QTest::newRow("broken xml") << QStringList { u"topology"_qs, QStringLiteral(BLKMQLAB_TEST_DATA "/broken.xml") }
                                    << u"not a valid hwloc XML"_qs;
    }
    void badInput()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, mentions);
        const auto r = cli(args);
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(mentions), qPrintable(r.err));
        QCOMPARE(r.err.trimmed().count(u'\n'), 0); // one line
    }

    // The reproducers of the hostile-input review: each a clean exit code and one line naming the cause.
    // FILE in the arguments is replaced by a file holding `content`.
    void hostileInput_data()
    {
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("mentions");
        const QStringList runFile { u"run"_qs, u"FILE"_qs };
        QTest::newRow("number beyond a double")
            << QByteArray(R"({"seed":1e400})") << runFile << 2 << u"number overflow parsing '1e400'"_qs;
        QTest::newRow("duration beyond a double")
            << QByteArray(R"({"duration":1e999})") << runFile << 2 << u"not valid JSON"_qs;
        QTest::newRow("deep nesting") << QByteArray(100000, '[') + QByteArray(100000, ']') << runFile << 2
                                      << u"nests deeper than 64 levels"_qs;
        QTest::newRow("deep --set value")
            << QByteArray() << QStringList { u"run"_qs, u"--set"_qs, u"seed="_qs + QString(5000, u'[') } << 2
            << u"--set seed: the value nests deeper than 64 levels"_qs;
        QTest::newRow("set index overflow")
            << QByteArray() << QStringList { u"run"_qs, u"--set"_qs, u"devices.99999999999999999999999.x=1"_qs } << 2
            << u"--set devices.99999999999999999999999: no element"_qs;
        QTest::newRow("sweep index overflow")
            << QByteArray()
            << QStringList { u"sweep"_qs, u"--vary"_qs, u"devices.99999999999999999999999.rq_affinity=1"_qs } << 2
            << u"no element with that index or name"_qs;
        QTest::newRow("sweep empty list")
            << QByteArray() << QStringList { u"sweep"_qs, u"--vary"_qs, u"devices.nvme0.rq_affinity="_qs } << 2
            << u"names no values"_qs;
        // Bytes that are not UTF-8 in a job file: refused by the line, never thrown at the JSON writer.
        const QStringList runFio { u"run"_qs, u"--preset"_qs, u"single-core-null"_qs, u"--duration"_qs, u"1ms"_qs,
            u"--fio"_qs, u"FILE"_qs, u"--json"_qs, u"-"_qs };
        for (const auto& [name, job, line] : std::vector<std::tuple<const char*, QByteArray, QString>> {
                 { "fio section name not UTF-8", "[glob\xe9]\nrw=randread\n", u":1: "_qs },
                 { "fio rw not UTF-8",
                     "[j]\nrw=randr\xe9"
                     "ad\n",
                     u":2: "_qs },
                 { "fio name not UTF-8", "[j]\nname=x\xe9\n", u":2: "_qs },
                 { "fio cpus_allowed not UTF-8", "[j]\ncpus_allowed=0\xe9\n", u":2: "_qs } })
            QTest::newRow(name) << job << runFio << 2 << line + u"the line is not valid UTF-8 text"_qs;
        QTest::newRow("device file") << QByteArray() << QStringList { u"run"_qs, u"/dev/zero"_qs } << 2
                                     << u"'/dev/zero' is not a regular file"_qs;
        QTest::newRow("directory") << QByteArray() << QStringList { u"run"_qs, u"/"_qs } << 2
                                   << u"'/' is a directory"_qs;
        QTest::newRow("empty file name") << QByteArray() << QStringList { u"run"_qs, QString() } << 2
                                         << u"the name is empty"_qs;
        QTest::newRow("empty document") << QByteArray(" \n") << runFile << 2 << u"the file is empty"_qs;
        QTest::newRow("in-flight total")
            << QByteArray(R"({"duration":"1ms","workload":{"jobs":[{"numjobs":4096,"iodepth":65536}]}})") << runFile
            << 2 << u"workload.jobs: I/Os in flight (numjobs x iodepth summed over the jobs) come to 268435456"_qs;
        QTest::newRow("too many samples") << QByteArray(R"({"duration":"10s","sample_interval":"1us"})") << runFile << 2
                                          << u"sample_interval: 1us over a duration of 10s gives 10000000"_qs;
        QTest::newRow("duration limit") << QByteArray(R"({"duration":9223372036854775807})") << runFile << 2
                                        << u"duration: must be at most 3600s"_qs;
        QTest::newRow("device total") << QByteArray(
            R"({"devices":[{"nr_devices":1024},{"nr_devices":1024},{"nr_devices":1024},)"
            R"({"nr_devices":1024},{"name":"x","nr_devices":1}]})")
                                      << runFile << 2
                                      << u"devices[4].nr_devices: brings the devices to more than the limit of 4096"_qs;
        QTest::newRow("top-level array with --seed")
            << QByteArray("[]") << QStringList { u"run"_qs, u"FILE"_qs, u"--seed"_qs, u"3"_qs } << 2
            << u"(top level): must be an object, got array []"_qs;
        QTest::newRow("long unknown key") << QByteArray("{\"") + QByteArray(100000, 'k') + QByteArray("\":1}")
                                          << runFile << 2 << u"...: unknown key"_qs;
        QTest::newRow("cpu cap") << QByteArray() << QStringList { u"topology"_qs, u"99999n:1p:8c:2t"_qs } << 2
                                 << u"more than 4096 CPUs"_qs;
        QTest::newRow("topology said once") << QByteArray() << QStringList { u"run"_qs, u"--set"_qs, u"topology=0c"_qs }
                                            << 2 << u"blkmqlab-cli: topology: bad spec '0c'"_qs;
        QTest::newRow("threads limit") << QByteArray() << QStringList { u"explore"_qs, u"--threads"_qs, u"100000"_qs }
                                       << 2 << u"--threads: 100000 is more than the limit of 1024"_qs;
        QTest::newRow("seeds limit") << QByteArray() << QStringList { u"explore"_qs, u"--seeds"_qs, u"999999999"_qs }
                                     << 2 << u"--seeds: 999999999 is more than the limit of 100000"_qs;
        QTest::newRow("empty --json") << QByteArray() << QStringList { u"run"_qs, u"--json"_qs, QString() } << 2
                                      << u"--json needs a file name"_qs;
        QTest::newRow("two outputs on stdout")
            << QByteArray() << QStringList { u"run"_qs, u"--json"_qs, u"-"_qs, u"--csv"_qs, u"-"_qs } << 2
            << u"would mix two formats on standard output"_qs;
        QTest::newRow("output is a directory")
            << QByteArray() << QStringList { u"run"_qs, u"--duration"_qs, u"1ms"_qs, u"--json"_qs, u"/"_qs } << 1
            << u"cannot write '/': it is a directory"_qs;
        QTest::newRow("full device") << QByteArray()
                                     << QStringList { u"run"_qs, u"--duration"_qs, u"1ms"_qs, u"-q"_qs, u"--json"_qs,
                                            u"/dev/full"_qs }
                                     << 1 << u"cannot write '/dev/full': No space left on device"_qs;
        QTest::newRow("no arguments") << QByteArray() << QStringList {} << 2 << u"usage:"_qs;
        // A hostile pass's reproducers: each used to abort, wrap, or grow memory without bound.
        const QStringList sweepFile { u"sweep"_qs, u"FILE"_qs };
        QTest::newRow("sweep base preset of a wrong type")
            << QByteArray(R"({"base":{"preset":5},"axes":[{"path":"seed","values":[1]}]})") << sweepFile << 2
            << u"base: a preset name, {\"preset\": NAME}"_qs;
        QTest::newRow("sweep step of a wrong type")
            << QByteArray(R"({"axes":[{"path":"seed","from":1,"to":3,"step":"x"}]})") << sweepFile << 2
            << u"axes[0].step: a positive number is required"_qs;
        QTest::newRow("sweep unknown base field")
            << QByteArray(R"({"base":{"preset":"default","bogus":1},"axes":[{"path":"seed","values":[1]}]})")
            << sweepFile << 2 << u"base.bogus: unknown field"_qs;
        QTest::newRow("sweep range past a double's precision")
            << QByteArray(R"({"axes":[{"path":"costs.submit_ns","from":1e300,"to":1e301}]})") << sweepFile << 2
            << u"the range gives more than 10000 values"_qs;
        QTest::newRow("sweep range of one huge value") // one value, which the field's range then refuses
            << QByteArray(R"({"axes":[{"path":"costs.submit_ns","from":1e300,"to":1e300,"step":1e-300}]})") << sweepFile
            << 2 << u"costs.submit_ns: must be an integer in 0..1000000000"_qs;
        QTest::newRow("sweep grid past 2^64")
            << QByteArray(R"({"axes":[{"path":"seed","from":1,"to":8192},{"path":"seed","from":1,"to":8192},)"
                          R"({"path":"seed","from":1,"to":8192},{"path":"seed","from":1,"to":8192},)"
                          R"({"path":"seed","from":1,"to":8192}]})")
            << sweepFile << 2 << u"the grid has more than 2^64 runs"_qs;
        QTest::newRow("sweep path with a comma") << QByteArray(R"({"axes":[{"path":"seed,x","values":[1]}]})")
                                                 << sweepFile << 2 << u"axes[0].path: a dotted path has no commas"_qs;
        QTest::newRow("device name with a newline")
            << QByteArray("{\"devices\":[{\"name\":\"a\\nb\"}]}") << runFile << 2
            << u"devices[0].name: contains a control character (U+000A)"_qs;
        QTest::newRow("key with a newline") << QByteArray("{\"devi\\nces\":[]}") << runFile << 2
                                            << u"blkmqlab-cli: devi\\x0Aces: contains a control character"_qs;
        QTest::newRow("key with a terminal escape") << QByteArray("{\"x\\u001b[31m\":1}") << runFile << 2
                                                    << u"blkmqlab-cli: x\\x1B[31m: contains a control character"_qs;
        QTest::newRow("sweep value with a terminal escape")
            << QByteArray("{\"axes\":[{\"path\":\"name\",\"values\":[\"\\u001b[31mred\"]}]}") << sweepFile << 2
            << u"axes[0].values[0]: contains a control character (U+001B)"_qs;
        QTest::newRow("preset name of 100 KB")
            << QByteArray() << QStringList { u"run"_qs, u"--preset"_qs, QString(100000, u'x') } << 2
            << u"--preset: unknown preset 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...' (blkmqlab-cli presets"_qs;
        QTest::newRow("first seed of 19 digits")
            << QByteArray()
            << QStringList { u"explore"_qs, u"--seeds"_qs, u"1"_qs, u"--first-seed"_qs, u"9999999999999999999"_qs } << 2
            << u"--first-seed: 9999999999999999999 is more than the largest, 9223372036854775807"_qs;
        QTest::newRow("net_rx past the event queue")
            << QByteArray(R"({"topology":"4096c","workload":{"net_rx":[)"
                   + QByteArray(R"({"cpus":"0-4095"},)").repeated(1023) + QByteArray(R"({"cpus":"0-4095"}]}})"))
            << runFile << 2
            << u"workload.net_rx: net_rx packet sources (CPUs summed over the loads) come to 4194304"_qs;
        QTest::newRow("completion time past int64")
            << QByteArray(R"({"devices":[{"completion_nsec":{"dist":"exponential","mean":"4000000000s"}}]})") << runFile
            << 2 << u"devices[0].completion_nsec: must be at most 3600s"_qs;
        QTest::newRow("irqmode past int") << QByteArray(R"({"devices":[{"irqmode":4294967296}]})") << runFile << 2
                                          << u"devices[0].irqmode: must be one of"_qs;
        QTest::newRow("irq_affinity past int")
            << QByteArray(R"({"devices":[{"irq_affinity":[4294967296]}]})") << runFile << 2
            << u"devices[0].irq_affinity: CPU 4294967296 does not exist"_qs;
        QTest::newRow("trace cap") << QByteArray()
                                   << QStringList { u"run"_qs, u"--trace"_qs, u"x.json"_qs, u"--trace-cap"_qs,
                                          u"999999999"_qs }
                                   << 2 << u"--trace-cap needs a positive number of events, at most 2000000"_qs;
        QTest::newRow("xml that crashes hwloc") // hwloc 2.9.0 dies in hwloc_topology_load() on it
            << QByteArray()
            << QStringList { u"topology"_qs,
                   QStringLiteral(BLKMQLAB_SOURCE_DIR "/tests/fuzz/corpus/hwloc/crashes-hwloc-topology-load.xml") }
            << 2 << u"is not a valid hwloc XML topology (lstopo --of xml) (hwloc crashed reading it, signal 11)"_qs;
    }
    void hostileInput()
    {
        QFETCH(QByteArray, content);
        QFETCH(QStringList, args);
        QFETCH(int, code);
        QFETCH(QString, mentions);
        QTemporaryDir dir;
        const QString file = dir.filePath(u"scenario.json"_qs);
        QVERIFY(writeFile(file, content));
        args.replaceInStrings(u"FILE"_qs, file);
        const auto r = cli(args);
        QCOMPARE(r.code, code);
        QVERIFY2(r.err.contains(mentions), qPrintable(r.err.left(500)));
        if (!args.isEmpty()) {
            QCOMPARE(r.err.trimmed().count(u'\n'), 0); // one line
            QVERIFY2(r.err.size() < 700, qPrintable(r.err.left(200)));
        }
    }

    // Outputs are written through links and into devices, never replacing them.
    void outputsNeverReplaceDevicesOrLinks()
    {
        struct stat before { };
        QCOMPARE(::stat("/dev/null", &before), 0);
        for (const char* option : { "--json", "--csv" }) {
            const auto r
                = cli({ u"run"_qs, u"--duration"_qs, u"1ms"_qs, u"-q"_qs, QLatin1String(option), u"/dev/null"_qs });
            QCOMPARE(r.code, 0);
            struct stat after { };
            QCOMPARE(::stat("/dev/null", &after), 0);
            QVERIFY(S_ISCHR(after.st_mode));
            QCOMPARE(after.st_rdev, before.st_rdev);
        }
        QTemporaryDir dir;
        const QString target = dir.filePath(u"target.json"_qs), link = dir.filePath(u"link.json"_qs);
        QVERIFY(QFile::link(u"target.json"_qs, link));
        QCOMPARE(cli({ u"run"_qs, u"--duration"_qs, u"1ms"_qs, u"-q"_qs, u"--json"_qs, link }).code, 0);
        QVERIFY(QFileInfo(link).isSymLink());
        QFile t(target);
        QVERIFY(t.open(QIODevice::ReadOnly));
        QVERIFY(QJsonDocument::fromJson(t.readAll()).isObject());
    }

    // The classic attack: another user plants a link in a sticky world-writable folder (as /tmp) and waits
    // for root, or for any user, to write through it. Refused with exit 1, naming the link, before the run;
    // the writer's own link is followed, as cp and shells do. As root the test also runs the CLI as the
    // unprivileged user nobody (setpriv), from a copy a user can reach.
    void plantedSymlinksAreRefused()
    {
        QTemporaryDir dir;
        QVERIFY(QFile::setPermissions(dir.path(),
            QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner | QFileDevice::ReadOther
                | QFileDevice::ExeOther | QFileDevice::ReadGroup | QFileDevice::ExeGroup));
        const QString shared = dir.filePath(u"shared"_qs), victim = dir.filePath(u"victim"_qs);
        QVERIFY(QDir().mkdir(shared));
        QCOMPARE(::chmod(QFile::encodeName(shared).constData(), 01777), 0);
        const bool root = ::geteuid() == 0;
        const uid_t nobody = 65534, mallory = 65533;
        const auto plant = [&](const QString& name, uid_t owner) {
            const QString link = shared + u'/' + name;
            QFile::remove(link);
            QVERIFY(writeFile(victim, "SECRET\n"));
            QVERIFY(QFile::link(victim, link));
            QCOMPARE(::lchown(QFile::encodeName(link).constData(), owner, static_cast<gid_t>(-1)), 0);
        };
        const QStringList run { u"run"_qs, u"--preset"_qs, u"default"_qs, u"--duration"_qs, u"50us"_qs, u"-q"_qs };

        // Followed: the writer's own link, and a link outside a sticky world-writable folder.
        plant(u"own.json"_qs, ::geteuid());
        QCOMPARE(cli(run + QStringList { u"--json"_qs, shared + u"/own.json"_qs }).code, 0);
        QVERIFY(QJsonDocument::fromJson(head(victim)).isObject());
        const QString elsewhere = dir.filePath(u"elsewhere.json"_qs);
        QVERIFY(writeFile(victim, "SECRET\n"));
        QVERIFY(QFile::link(victim, elsewhere));
        if (root)
            QCOMPARE(::lchown(QFile::encodeName(elsewhere).constData(), mallory, static_cast<gid_t>(-1)), 0);
        QCOMPARE(cli(run + QStringList { u"--csv"_qs, elsewhere }).code, 0);
        QVERIFY(head(victim).startsWith("t_ns,"));
        if (!root)
            return; // another user's link can only be planted by root

        // Refused as root: every output option, before anything runs.
        plant(u"x.json"_qs, mallory);
        const QString planted = shared + u"/x.json"_qs;
        for (const QString& option : { u"--json"_qs, u"--csv"_qs, u"--trace"_qs }) {
            const auto r = cli(run + QStringList { option, planted });
            QCOMPARE(r.code, 1);
            QVERIFY2(
                r.err.contains(u"refusing to follow the symbolic link '"_qs + planted + u"'"_qs), qPrintable(r.err));
            QVERIFY2(r.err.startsWith(u"blkmqlab-cli run: "_qs + option + u": "_qs), qPrintable(r.err));
            QCOMPARE(head(victim), QByteArray("SECRET\n"));
            QVERIFY(QFileInfo(planted).isSymLink());
        }

        // Refused as nobody; nobody's own link is followed.
        const QString cliCopy = dir.filePath(u"blkmqlab-cli"_qs);
        QVERIFY(QFile::copy(QStringLiteral(BLKMQLAB_CLI), cliCopy));
        QCOMPARE(::chown(QFile::encodeName(victim).constData(), nobody, nobody), 0);
        const auto asNobody = [&](const QString& out) {
            QProcess p;
            // The sanitizers' suppression files sit in the source tree, which nobody may not read.
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.remove(u"LSAN_OPTIONS"_qs);
            env.remove(u"TSAN_OPTIONS"_qs);
            env.insert(u"ASAN_OPTIONS"_qs, u"detect_leaks=0"_qs);
            p.setProcessEnvironment(env);
            p.start(u"setpriv"_qs,
                QStringList { u"--reuid=65534"_qs, u"--regid=65534"_qs, u"--clear-groups"_qs, cliCopy } + run
                    + QStringList { u"--json"_qs, out });
            if (!p.waitForFinished(120000))
                return Result {};
            return Result { p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()),
                QString::fromUtf8(p.readAllStandardError()) };
        };
        plant(u"x.json"_qs, mallory);
        QCOMPARE(::chown(QFile::encodeName(victim).constData(), nobody, nobody), 0);
        const auto refused = asNobody(planted);
        QCOMPARE(refused.code, 1);
        QVERIFY2(refused.err.contains(u"refusing to follow the symbolic link '"_qs + planted + u"'"_qs),
            qPrintable(refused.err));
        QCOMPARE(head(victim), QByteArray("SECRET\n"));
        // Replacing a file needs its folder writable: nobody's own file lives in the shared folder.
        const QString own = shared + u"/nobody-target.json"_qs, ownLink = shared + u"/nobody.json"_qs;
        QVERIFY(writeFile(own, "MINE\n"));
        QCOMPARE(::chown(QFile::encodeName(own).constData(), nobody, nobody), 0);
        QVERIFY(QFile::link(own, ownLink));
        QCOMPARE(::lchown(QFile::encodeName(ownLink).constData(), nobody, static_cast<gid_t>(-1)), 0);
        const auto followed = asNobody(ownLink);
        QVERIFY2(followed.code == 0, qPrintable(followed.err));
        QVERIFY(QFileInfo(ownLink).isSymLink());
        QVERIFY(QJsonDocument::fromJson(head(own)).isObject());
    }

    // /dev/stdout, /dev/stderr and /proc/self/fd/N are the descriptor the shell opened: `>> log` appends
    // to log (it used to be replaced by a new file holding only the output), and a pipe is written.
    void devStdoutIsTheDescriptor()
    {
        QTemporaryDir dir;
        const QString log = dir.filePath(u"log"_qs);
        const QStringList run { u"run"_qs, u"--preset"_qs, u"default"_qs, u"--duration"_qs, u"50us"_qs, u"-q"_qs };
        for (const QString& out : { u"/dev/stdout"_qs, u"/proc/self/fd/1"_qs, u"/dev/fd/1"_qs }) {
            QVERIFY(writeFile(log, "OLD\n"));
            QProcess p;
            p.setStandardOutputFile(log, QIODevice::Append);
            p.start(QStringLiteral(BLKMQLAB_CLI), run + QStringList { u"--json"_qs, out });
            QVERIFY(p.waitForFinished(60000));
            QCOMPARE(p.exitCode(), 0);
            const QByteArray got = head(log);
            QVERIFY2(got.startsWith("OLD\n{"), got.left(40).constData());
            QVERIFY(QJsonDocument::fromJson(got.mid(4)).isObject());
        }
        QVERIFY(writeFile(log, "OLD\n"));
        QProcess p;
        p.setStandardErrorFile(log, QIODevice::Append);
        p.start(QStringLiteral(BLKMQLAB_CLI), run + QStringList { u"--csv"_qs, u"/dev/stderr"_qs });
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        QVERIFY(head(log).startsWith("OLD\nt_ns,"));
        const auto piped = cli(run + QStringList { u"--json"_qs, u"/dev/stdout"_qs }); // QProcess reads a pipe
        QCOMPARE(piped.code, 0);
        QVERIFY(QJsonDocument::fromJson(piped.out.toUtf8()).isObject());
    }

    // The oracle's input is checked before anything boots; a missing QEMU is an environment error.
    void oracleRefusesBeforeBooting()
    {
        QTemporaryDir dir;
        const QString oracleDir = QStringLiteral(BLKMQLAB_SOURCE_DIR "/tests/oracle");
        const QString machine = oracleDir + u"/machines/virtio-2s4c.json"_qs,
                      job = oracleDir + u"/jobs/randread-8.fio"_qs;
        const auto noJob = cli({ u"oracle"_qs, machine });
        QCOMPARE(noJob.code, 2);
        QVERIFY2(noJob.err.contains(u"give the job as a fio job file (--fio FILE)"_qs), qPrintable(noJob.err));
        const auto smt = cli({ u"oracle"_qs, machine, u"--fio"_qs, job, u"--set"_qs, u"topology=\"1n:1p:4c:2t\""_qs,
            u"--set"_qs, u"workload.jobs.0.cpus_allowed=0-7"_qs });
        QCOMPARE(smt.code, 2);
        QVERIFY2(
            smt.err.contains(u"topology: QEMU numbers a core's SMT threads one after another"_qs), qPrintable(smt.err));
        const QString badCase = dir.filePath(u"case.json"_qs);
        QVERIFY(writeFile(
            badCase, R"({"name":"c","scenario":"m.json","fio":"j.fio","figures":{"speed":{"within":1,"why":"x"}}})"));
        const auto bad = cli({ u"oracle"_qs, u"--case"_qs, badCase });
        QCOMPARE(bad.code, 2);
        QVERIFY2(bad.err.contains(u"figures.speed: no such figure"_qs), qPrintable(bad.err));
        const auto figures = cli({ u"oracle"_qs, u"--figures"_qs });
        QCOMPARE(figures.code, 0);
        QVERIFY(figures.out.contains(u"routes"_qs) && figures.out.contains(u"ipis_per_sent_back"_qs));

        QProcess p; // no QEMU on PATH
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"PATH"_qs, dir.path());
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(BLKMQLAB_CLI), { u"oracle"_qs, machine, u"--fio"_qs, job });
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 1);
        QVERIFY(QString::fromUtf8(p.readAllStandardError())
                    .contains(u"qemu-system-x86_64 is not installed (Debian package qemu-system-x86"_qs));
    }

    // run job.fio: the default scenario with the job file's workload; an error names the line.
    void fioJobFilesRun()
    {
        QTemporaryDir dir;
        const QString job = dir.filePath(u"two.fio"_qs);
        QVERIFY(
            writeFile(job, "[global]\nioengine=libaio\niodepth=2\nruntime=2ms\n[a]\nnumjobs=2\ncpus_allowed=0-1\n"));
        const auto ok = cli({ u"run"_qs, job, u"--json"_qs, u"-"_qs });
        QVERIFY2(ok.code == 0, qPrintable(ok.err));
        const QJsonObject summary = QJsonDocument::fromJson(ok.out.toUtf8()).object();
        QCOMPARE(summary[u"sim_time_ns"_qs].toDouble(), 2e6); // runtime=2ms
        QCOMPARE(summary[u"jobs"_qs].toObject()[u"threads"_qs].toInt(), 2); // numjobs=2
        QVERIFY(QFile::remove(job));
        QVERIFY(writeFile(job, "[a]\niodepth=2\nbuffered=1\n"));
        const auto bad = cli({ u"run"_qs, u"--preset"_qs, u"default"_qs, u"--fio"_qs, job });
        QCOMPARE(bad.code, 2);
        QVERIFY2(bad.err.contains(job + u":3: 'buffered' is not modelled by the lab"_qs), qPrintable(bad.err));
    }

    void stdoutWriteErrorsAreReported()
    {
        for (const QStringList& extra : { QStringList {}, QStringList { u"--json"_qs, u"-"_qs } }) {
            QProcess p;
            p.setStandardOutputFile(u"/dev/full"_qs);
            p.start(QStringLiteral(BLKMQLAB_CLI), QStringList { u"run"_qs, u"--duration"_qs, u"1ms"_qs } + extra);
            QVERIFY(p.waitForFinished(60000));
            QCOMPARE(p.exitCode(), 1);
            QVERIFY(QString::fromUtf8(p.readAllStandardError()).contains(u"No space left on device"_qs));
        }
    }

    void dataOnStdoutStaysPure()
    {
        const auto r = cli({ u"run"_qs, u"--duration"_qs, u"2ms"_qs, u"--csv"_qs, u"-"_qs });
        QCOMPARE(r.code, 0);
        const auto lines = r.out.trimmed().split(u'\n');
        QCOMPARE(lines.size(), 3);
        QVERIFY(lines[0].startsWith(u"t_ns,"_qs));
        QVERIFY(lines[1].startsWith(u"1000000,"_qs));
    }

    void failOnStallExitsThree()
    {
        QTemporaryDir dir;
        const QString json = dir.filePath(u"s.json"_qs);
        const auto r
            = cli({ u"run"_qs, u"--preset"_qs, u"shared-hctx-stall"_qs, u"--fail-on-stall"_qs, u"--json"_qs, json });
        QCOMPARE(r.code, 3);
        QVERIFY(r.out.contains(u"STALL at 0.600 ms"_qs));
        QVERIFY(r.out.contains(u"nullb1's shared_hctx_restart was 0"_qs));
        QVERIFY(QFile::exists(json)); // the summary is still written
        const auto fine = cli({ u"run"_qs, u"--preset"_qs, u"shared-hctx-stall"_qs, u"--set"_qs,
            u"kernel.restart=rr-shared"_qs, u"--fail-on-stall"_qs });
        QCOMPARE(fine.code, 0);
        QVERIFY(!fine.out.contains(u"STALL"_qs));
    }

    void checkGivesAVerdictAndACounterexampleThatReplays()
    {
        QTemporaryDir dir;
        const QString cx = dir.filePath(u"stall.blkmqlab"_qs);
        const auto violated
            = cli({ u"check"_qs, u"--preset"_qs, u"check-shared-hctx"_qs, u"--save-counterexample"_qs, cx });
        QCOMPARE(violated.code, 3);
        QVERIFY(violated.out.contains(u"verdict: VIOLATED"_qs));
        QVERIFY(violated.out.contains(u"bypasses the scheduler"_qs));
        const auto replayed = cli({ u"run"_qs, u"--session"_qs, cx });
        QCOMPARE(replayed.code, 0);
        QVERIFY2(replayed.out.contains(u"STALL at 0.100 ms"_qs), qPrintable(replayed.out));
        const auto holds = cli({ u"check"_qs, u"--preset"_qs, u"check-shared-hctx"_qs, u"--set"_qs,
            u"kernel.restart=rr-shared"_qs, u"--json"_qs, u"-"_qs });
        QCOMPARE(holds.code, 0);
        const QJsonObject doc = QJsonDocument::fromJson(holds.out.toUtf8()).object();
        QCOMPARE(doc[u"verdict"_qs].toString(), u"holds"_qs);
        QVERIFY(doc[u"distinct_states"_qs].toInt() > 1000);
        QVERIFY(doc[u"runs_ended_at_seen_state"_qs].toInt() > 0); // orders that commute meet again
        QVERIFY(doc[u"runs"_qs].toInt() < doc[u"choice_points"_qs].toInt());
        const auto unfinished = cli({ u"check"_qs, u"--preset"_qs, u"check-shared-hctx"_qs, u"--set"_qs,
            u"kernel.restart=rr-shared"_qs, u"--max-runs"_qs, u"5"_qs });
        QCOMPARE(unfinished.code, 5);
        QVERIFY(unfinished.out.contains(u"UNFINISHED"_qs));
        // Bad input: each refused with the reason, naming what to change.
        const auto vacuous
            = cli({ u"check"_qs, u"--preset"_qs, u"check-shared-hctx"_qs, u"--property"_qs, u"no-tag-lost"_qs });
        QCOMPARE(vacuous.code, 2);
        QVERIFY2(vacuous.err.contains(u"cannot violate it"_qs), qPrintable(vacuous.err));
        const auto huge = cli({ u"check"_qs, u"--preset"_qs, u"default"_qs });
        QCOMPARE(huge.code, 2);
        QVERIFY2(huge.err.contains(u"--max-depth"_qs), qPrintable(huge.err));
        const auto past
            = cli({ u"check"_qs, u"--preset"_qs, u"check-shared-hctx"_qs, u"--max-runs"_qs, u"100000001"_qs });
        QCOMPARE(past.code, 2);
        QVERIFY2(past.err.contains(u"--max-runs"_qs), qPrintable(past.err));
        const auto unknown
            = cli({ u"check"_qs, u"--preset"_qs, u"check-shared-hctx"_qs, u"--property"_qs, u"no-bugs"_qs });
        QCOMPARE(unknown.code, 2);
        QVERIFY(unknown.err.contains(u"all-complete"_qs));
    }

    void exploreFindsChanceStallsWhateverTheThreads()
    {
        const QStringList args { u"explore"_qs, u"--preset"_qs, u"shared-hctx-stall-random"_qs, u"--seeds"_qs,
            u"300"_qs, u"--json"_qs, u"-"_qs };
        const auto one = cli(args + QStringList { u"--threads"_qs, u"1"_qs });
        const auto two = cli(args + QStringList { u"--threads"_qs, u"2"_qs });
        QCOMPARE(one.code, 0);
        QCOMPARE(one.out, two.out); // same runs, same order, same fingerprints
        const QJsonObject doc = QJsonDocument::fromJson(one.out.toUtf8()).object();
        const int stalled = doc[u"stalled_runs"_qs].toInt();
        QVERIFY(stalled > 0 && stalled < 30);
        QCOMPARE(doc[u"runs"_qs].toArray().size(), 300);
        const auto good = cli({ u"explore"_qs, u"--preset"_qs, u"shared-hctx-stall-random"_qs, u"--seeds"_qs, u"300"_qs,
            u"--set"_qs, u"kernel.restart=rr-shared-tags-counter"_qs, u"--fail-on-stall"_qs });
        QCOMPARE(good.code, 0);
        QVERIFY(good.out.contains(u"0 of 300 seeds"_qs));
        const auto bad = cli({ u"explore"_qs, u"--preset"_qs, u"shared-hctx-stall-random"_qs, u"--seeds"_qs, u"300"_qs,
            u"--fail-on-stall"_qs });
        QCOMPARE(bad.code, 3);
    }

    // Per kernel variant: the share of seeds that stall with its interval, the earliest stall, and
    // that case saved as a scenario with its seed pinned, which replays the same run.
    void exploreComparesVariantsAndSavesTheEarliestStall()
    {
        QTemporaryDir dir;
        const QString ce = dir.filePath(u"ce.json"_qs);
        const auto r = cli({ u"explore"_qs, u"--preset"_qs, u"shared-hctx-stall-random"_qs, u"--seeds"_qs, u"300"_qs,
            u"--variant"_qs, u"kernel.restart=rr-shared-queue-counter"_qs, u"--variant"_qs,
            u"kernel.restart=rr-shared-tags-counter"_qs, u"--save-counterexample"_qs, ce, u"--json"_qs, u"-"_qs });
        QCOMPARE(r.code, 0);
        const QJsonObject doc = QJsonDocument::fromJson(r.out.toUtf8()).object();
        const QJsonArray variants = doc[u"variants"_qs].toArray();
        QCOMPARE(variants.size(), 2);
        const QJsonObject counter = variants[0].toObject(), tags = variants[1].toObject();
        const int k = counter[u"stalled"_qs].toInt();
        QVERIFY(k > 0 && k < 30);
        QCOMPARE(tags[u"stalled"_qs].toInt(), 0); // Roman's fix: no seed stalls
        const QJsonArray ci = counter[u"p_95_wilson"_qs].toArray();
        QVERIFY(ci[0].toDouble() > 0 && ci[0].toDouble() < k / 300.0 && ci[1].toDouble() > k / 300.0);
        QVERIFY(tags[u"p_95_wilson"_qs].toArray()[1].toDouble() > 0.005); // 0 of 300 is not p = 0 for sure
        const int seed = counter[u"earliest"_qs].toObject()[u"seed"_qs].toInt();
        const QJsonArray runs = doc[u"runs"_qs].toArray(); // the first variant's seeds 1..300
        const QJsonObject run = runs[seed - 1].toObject();
        QVERIFY(run[u"stalled"_qs].toBool());
        // The earliest: no stalled seed is stuck sooner, or as soon with fewer events.
        for (const auto& other : runs)
            if (other.toObject()[u"stalled"_qs].toBool())
                QVERIFY(other.toObject()[u"first_stuck_ns"_qs].toDouble() >= run[u"first_stuck_ns"_qs].toDouble());
        const auto replay = cli({ u"run"_qs, ce, u"--json"_qs, u"-"_qs, u"-q"_qs });
        QCOMPARE(replay.code, 0);
        const QJsonObject summary = QJsonDocument::fromJson(replay.out.toUtf8()).object();
        QCOMPARE(summary[u"fingerprint"_qs].toString(), run[u"fingerprint"_qs].toString());
        QVERIFY(summary[u"stall"_qs].toObject()[u"detected"_qs].toBool());
        // The report says which interval it is.
        const auto text
            = cli({ u"explore"_qs, u"--preset"_qs, u"shared-hctx-stall-random"_qs, u"--seeds"_qs, u"50"_qs });
        QVERIFY2(text.out.contains(u"95% Wilson score interval"_qs), qPrintable(text.out));
        QCOMPARE(cli({ u"explore"_qs, u"--variant"_qs, u"kernel.nope=1"_qs }).code, 2);
    }

    // A/B over seeds: the llist patch sends fewer IPIs on every seed (a paired t-test says so); the
    // scenario against itself differs in nothing.
    void abComparesOnTheSameSeeds()
    {
        const QStringList base { u"ab"_qs, u"--preset"_qs, u"default"_qs, u"--duration"_qs, u"3ms"_qs, u"--seeds"_qs,
            u"6"_qs, u"--json"_qs, u"-"_qs };
        const auto r = cli(base + QStringList { u"--b"_qs, u"kernel.patches.complete-llist=true"_qs });
        QCOMPARE(r.code, 0);
        const QJsonObject doc = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QVERIFY(doc[u"test"_qs].toString().startsWith(u"paired t-test"_qs));
        QCOMPARE(doc[u"t_critical"_qs].toDouble(), 2.571); // t(0.975, 5)
        QJsonObject ipis, p99;
        for (const auto& m : doc[u"metrics"_qs].toArray()) {
            if (m.toObject()[u"id"_qs].toString() == u"ipis_per_s"_qs)
                ipis = m.toObject();
            if (m.toObject()[u"id"_qs].toString() == u"lat_p99_ns"_qs)
                p99 = m.toObject();
        }
        QVERIFY(ipis[u"b_over_a"_qs].toDouble() < 0.97);
        QVERIFY(ipis[u"t"_qs].toDouble() < -doc[u"t_critical"_qs].toDouble());
        QVERIFY(ipis[u"differs"_qs].toBool());
        QVERIFY(!p99[u"differs"_qs].toBool());
        const auto same = cli(base + QStringList { u"--b"_qs, QString() });
        QCOMPARE(same.code, 0);
        for (const auto& m : QJsonDocument::fromJson(same.out.toUtf8()).object()[u"metrics"_qs].toArray()) {
            QVERIFY(!m.toObject()[u"differs"_qs].toBool());
            QCOMPARE(m.toObject()[u"t"_qs].toDouble(), 0.0);
        }
        QCOMPARE(cli({ u"ab"_qs, u"--preset"_qs, u"default"_qs }).code, 2); // no --b
        QCOMPARE(cli({ u"ab"_qs, u"--b"_qs, u"kernel.nope=1"_qs }).code, 2);
        QCOMPARE(
            cli({ u"ab"_qs, u"--b"_qs, u"kernel.patches.complete-llist=true"_qs, u"--seeds"_qs, u"1"_qs }).code, 2);
    }

    void sweepTabulatesOneRunPerValue()
    {
        const auto r = cli({ u"sweep"_qs, u"--preset"_qs, u"default"_qs, u"--vary"_qs,
            u"devices.nvme0.rq_affinity=0,1,2"_qs, u"--duration"_qs, u"3ms"_qs, u"--json"_qs, u"-"_qs });
        QCOMPARE(r.code, 0);
        const auto runs = QJsonDocument::fromJson(r.out.toUtf8()).object()[u"runs"_qs].toArray();
        QCOMPARE(runs.size(), 3);
        const auto remote = [&](int i) {
            return runs[i].toObject()[u"summary"_qs].toObject()[u"metrics"_qs].toObject()[u"remote_pct"_qs].toDouble();
        };
        QCOMPARE(remote(0), 0.0);
        QVERIFY(remote(1) > 40 && remote(1) < 55);
        QVERIFY(remote(2) > 99);
        const auto bad = cli({ u"sweep"_qs, u"--vary"_qs, u"devices.nvme0.rq_affinity=1,7"_qs });
        QCOMPARE(bad.code, 2);
        QVERIFY(bad.err.contains(u"devices[0].rq_affinity"_qs));
        QCOMPARE(cli({ u"sweep"_qs }).code, 2);
    }

    // A grid from a sweep file: rows in grid order, the same bytes at 1 and 2 threads, and the merge
    // of its shards is byte for byte the unsharded CSV.
    void sweepGridIsTheSameAtAnyThreadCountAndShardSplit()
    {
        QTemporaryDir dir;
        const QString grid = dir.filePath(u"grid.json"_qs);
        QVERIFY(writeFile(grid,
            R"({"base": {"preset": "default", "set": ["duration=2ms"]}, "axes": [{"path": "devices.nvme0.rq_affinity", "values": [0, 1, 2]}, {"path": "kernel.patches.complete-llist", "values": [false, true]}, {"path": "seed", "from": 1, "to": 3}], "metrics": ["iops", "ipis_per_s", "remote_pct"]})"));
        const auto csvOf = [&](const QStringList& extra, const QString& name) {
            const auto r = cli(QStringList { u"sweep"_qs, grid, u"--csv"_qs, dir.filePath(name) } + extra);
            return r.code == 0 ? head(dir.filePath(name))
                               : QByteArray("exit ") + QByteArray::number(r.code) + r.err.toUtf8();
        };
        const QByteArray one = csvOf({ u"--threads"_qs, u"1"_qs }, u"one.csv"_qs);
        const QList<QByteArray> lines = one.trimmed().split('\n');
        QCOMPARE(lines.size(), 1 + 18); // the header, 3 x 2 x 3 runs
        QCOMPARE(lines[0],
            QByteArray("index,devices.nvme0.rq_affinity,kernel.patches.complete-llist,seed,iops,"
                       "ipis_per_s,remote_pct,stalled,first_stuck_ns,fingerprint,grid,grid_runs,shard,model"));
        QVERIFY(lines[1].startsWith("0,0,false,1,"));
        QVERIFY(lines[18].startsWith("17,2,true,3,"));
        QVERIFY(lines[7].split(',')[5].toDouble() > 0); // rq_affinity 1 sends IPIs
        QCOMPARE(lines[1].split(',')[5], QByteArray("0")); // rq_affinity 0 does not
        const QList<QByteArray> identity = lines[1].split(',').mid(10);
        QCOMPARE(identity.size(), 4);
        QCOMPARE(identity[0].size(), 16); // the grid's hash
        QCOMPARE(identity[1], QByteArray("18"));
        QCOMPARE(identity[2], QByteArray("0/1"));
        for (const QByteArray& line : lines)
            QVERIFY(line == lines[0] || line.endsWith(lines[1].mid(lines[1].indexOf(identity[0]))));
        // What CSV readers make of it: the header is the first line, the rows are the runs.
        QProcess py;
        py.start(u"python3"_qs,
            { u"-c"_qs,
                u"import csv,sys\nr=list(csv.DictReader(open(sys.argv[1])))\n"
                u"print(len(r), r[0]['index'], r[17]['seed'], r[0]['remote_pct'], r[0]['shard'])"_qs,
                dir.filePath(u"one.csv"_qs) });
        QVERIFY2(py.waitForFinished(30000), "python3 did not run (.ci/bootstrap installs it)");
        QCOMPARE(QString::fromUtf8(py.readAllStandardOutput()).trimmed(), u"18 0 3 0 0/1"_qs);
        QCOMPARE(csvOf({ u"--threads"_qs, u"2"_qs }, u"two.csv"_qs), one);
        QStringList shards;
        for (int i = 0; i < 4; ++i) {
            shards << dir.filePath(u"s%1.csv"_qs.arg(i));
            QCOMPARE(cli({ u"sweep"_qs, grid, u"--shard"_qs, u"%1/4"_qs.arg(i), u"--csv"_qs, shards.last() }).code, 0);
        }
        const auto merged = cli(QStringList { u"merge"_qs, shards[2], shards[0], shards[3], shards[1] });
        QCOMPARE(merged.code, 0);
        QCOMPARE(merged.out.toUtf8(), one);
        // What merge refuses: a missing shard, one given twice, a shard of another grid.
        const auto missing = cli(QStringList { u"merge"_qs, shards[0], shards[1], shards[3] });
        QCOMPARE(missing.code, 2);
        QVERIFY2(missing.err.contains(u"2/4 missing"_qs), qPrintable(missing.err));
        QCOMPARE(cli(QStringList { u"merge"_qs, shards[0], shards[0], shards[1], shards[2] }).code, 2);
        const QString other = dir.filePath(u"other.csv"_qs);
        QCOMPARE(
            cli({ u"sweep"_qs, grid, u"--set"_qs, u"seed=9"_qs, u"--shard"_qs, u"3/4"_qs, u"--csv"_qs, other }).code,
            0);
        const auto foreign = cli(QStringList { u"merge"_qs, shards[0], shards[1], shards[2], other });
        QCOMPARE(foreign.code, 2);
        QVERIFY2(foreign.err.contains(u"another grid"_qs), qPrintable(foreign.err));

        // A shard cut inside its last row, a row doubled in place of a missing one, a header no sweep writes.
        const QByteArray whole = head(shards[3]);
        const QString cut = dir.filePath(u"cut.csv"_qs), doubled = dir.filePath(u"doubled.csv"_qs),
                      huge = dir.filePath(u"huge.csv"_qs), crlf = dir.filePath(u"crlf.csv"_qs);
        QVERIFY(writeFile(cut, whole.left(whole.size() - 5)));
        QList<QByteArray> rows = whole.split('\n');
        rows[rows.size() - 2] = rows[rows.size() - 3]; // the last row replaced by the one before it
        QVERIFY(writeFile(doubled, rows.join('\n')));
        QVERIFY(writeFile(huge,
            "index,grid,grid_runs,shard,model\n0,0123456789abcdef,1000000000000,0/1000000000000,0123456789abcdef\n"));
        QByteArray crlfText = whole;
        crlfText.replace("\n", "\r\n");
        QVERIFY(writeFile(crlf, crlfText));
        const auto cutShort = cli(QStringList { u"merge"_qs, shards[0], shards[1], shards[2], cut });
        QCOMPARE(cutShort.code, 2);
        QVERIFY2(cutShort.err.contains(u"its last row is cut short"_qs), qPrintable(cutShort.err));
        const auto twice = cli(QStringList { u"merge"_qs, shards[0], shards[1], shards[2], doubled });
        QCOMPARE(twice.code, 2);
        QVERIFY2(twice.err.contains(u"is there twice"_qs), qPrintable(twice.err));
        const auto bounded = cli(QStringList { u"merge"_qs, huge });
        QCOMPARE(bounded.code, 2);
        QVERIFY2(bounded.err.contains(u"which no sweep writes"_qs), qPrintable(bounded.err));
        // A shard another build computed (another model) or one from before shards named their model.
        QByteArray otherText = head(shards[1]);
        const QByteArray modelId = otherText.split('\n')[1].right(16);
        otherText.replace("," + modelId + "\n", ",0000000000000000\n");
        const QString rebuilt = dir.filePath(u"other-build.csv"_qs);
        QVERIFY(writeFile(rebuilt, otherText));
        const auto otherBuild = cli(QStringList { u"merge"_qs, shards[0], rebuilt, shards[2], shards[3] });
        QCOMPARE(otherBuild.code, 2);
        QVERIFY2(otherBuild.err.contains(u"computed by another build of the lab (model=0000000000000000"_qs),
            qPrintable(otherBuild.err));
        // A CSV of older builds, whose first line was a comment naming the grid: not a sweep's CSV now.
        QVERIFY(writeFile(rebuilt, "# blkmqlab-cli sweep grid=0123456789abcdef runs=18 shard=1/4\n" + head(shards[1])));
        const auto older = cli(QStringList { u"merge"_qs, shards[0], rebuilt, shards[2], shards[3] });
        QCOMPARE(older.code, 2);
        QVERIFY2(older.err.contains(u"not the CSV of blkmqlab-cli sweep"_qs), qPrintable(older.err));
        // A row whose identity is not its file's.
        QByteArray mixed = head(shards[1]);
        const int lastRow = mixed.lastIndexOf(",1/4,");
        QVERIFY(lastRow > 0);
        mixed.replace(lastRow, 5, ",3/4,");
        QVERIFY(writeFile(rebuilt, mixed));
        const auto mixedRows = cli(QStringList { u"merge"_qs, shards[0], rebuilt, shards[2], shards[3] });
        QCOMPARE(mixedRows.code, 2);
        QVERIFY2(mixedRows.err.contains(u"another grid, shard or model than row 1"_qs), qPrintable(mixedRows.err));
        const auto windows = cli(QStringList { u"merge"_qs, shards[2], shards[0], crlf, shards[1] });
        QVERIFY2(windows.code == 0, qPrintable(windows.err));
        QCOMPARE(windows.out.toUtf8(), merged.out.toUtf8());
    }

    // Every pair of one command's outputs (blkmqlab-cli outputs, the one list) on one file, named the
    // same way, through a symbolic link and through "..": refused before anything runs, exit 2, naming
    // both options. A command new to the list fails here until it has its arguments below.
    void outputsNeverShareAFile()
    {
        const QString oracle = QStringLiteral(BLKMQLAB_SOURCE_DIR "/tests/oracle");
        const QMap<QString, QStringList> args {
            { u"run"_qs, { u"run"_qs, u"--duration"_qs, u"1ms"_qs, u"-q"_qs } },
            { u"explore"_qs, { u"explore"_qs, u"--seeds"_qs, u"1"_qs, u"--duration"_qs, u"1ms"_qs } },
            { u"sweep"_qs,
                { u"sweep"_qs, u"--vary"_qs, u"workload.jobs.0.iodepth=1,2"_qs, u"--duration"_qs, u"1ms"_qs } },
            { u"merge"_qs, { u"merge"_qs, u"shard.csv"_qs } }, // one output: no pair to try
            { u"check"_qs, { u"check"_qs, u"--preset"_qs, u"check-shared-hctx"_qs } },
            { u"ab"_qs, { u"ab"_qs, u"--b"_qs, u"seed=2"_qs, u"--seeds"_qs, u"2"_qs, u"--duration"_qs, u"1ms"_qs } },
            { u"oracle"_qs,
                { u"oracle"_qs, oracle + u"/machines/virtio-2s4c.json"_qs, u"--fio"_qs,
                    oracle + u"/jobs/randread-8.fio"_qs } },
            { u"blkmqlab"_qs, { u"--preset"_qs, u"default"_qs, u"--after"_qs, u"1us"_qs } },
        };
        QMap<QString, QStringList> outputs;
        const auto listed = cli({ u"outputs"_qs });
        QCOMPARE(listed.code, 0);
        for (const QString& line : listed.out.split(u'\n')) {
            const QStringList cells = line.split(u'|');
            if (cells.size() < 4 || !cells[2].trimmed().startsWith(u'`'))
                continue;
            outputs[cells[1].trimmed()] << cells[2].trimmed().remove(u'`');
        }
        QVERIFY(outputs.size() >= 7);
        int pairs = 0;
        for (auto it = outputs.begin(); it != outputs.end(); ++it) {
            QVERIFY2(args.contains(it.key()),
                qPrintable(u"no arguments for '%1' in outputsNeverShareAFile"_qs.arg(it.key())));
#ifndef BLKMQLAB_GUI
            if (it.key() == u"blkmqlab"_qs)
                continue; // a build without the desktop application has none of its outputs
#endif
            const QStringList& opts = it.value();
            for (int a = 0; a < opts.size(); ++a)
                for (int b = a + 1; b < opts.size(); ++b)
                    for (int form = 0; form < 3; ++form) {
                        QTemporaryDir dir;
                        QVERIFY(QDir(dir.path()).mkdir(u"sub"_qs));
                        const QString file = dir.filePath(u"out.png"_qs); // every output takes this name
                        const QString link = dir.filePath(u"link.png"_qs);
                        QVERIFY(QFile::link(file, link));
                        const QString second = form == 0 ? file : form == 1 ? link : dir.filePath(u"sub/../out.png"_qs);
                        QProcess p;
                        p.setWorkingDirectory(dir.path());
                        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
                        env.insert(u"QT_QPA_PLATFORM"_qs, u"offscreen"_qs);
                        p.setProcessEnvironment(env);
#ifdef BLKMQLAB_GUI
                        const QString program
                            = it.key() == u"blkmqlab"_qs ? QStringLiteral(BLKMQLAB_GUI) : QStringLiteral(BLKMQLAB_CLI);
#else
                        const QString program = QStringLiteral(BLKMQLAB_CLI);
#endif
                        QStringList argv = args[it.key()];
                        argv << opts[a] << file << opts[b] << second;
                        if (argv.contains(u"--chart"_qs))
                            argv << u"--metric"_qs << u"iops"_qs; // sweep's chart names its metric
                        p.start(program, argv);
                        QVERIFY(p.waitForFinished(60000));
                        const QString err = QString::fromUtf8(p.readAllStandardError());
                        QVERIFY2(p.exitCode() == 2,
                            qPrintable(u"%1 %2 %3 (form %4): exit %5: %6"_qs.arg(it.key(), opts[a], opts[b])
                                           .arg(form)
                                           .arg(p.exitCode())
                                           .arg(err)));
                        QVERIFY2(err.contains(opts[a] + u" and "_qs + opts[b] + u" would write the same file"_qs),
                            qPrintable(err));
                        QVERIFY2(!QFile::exists(file), "refused before anything was written");
                        ++pairs;
                    }
        }
        QVERIFY(pairs >= 7 * 3);
    }

    // A sweep killed (SIGKILL, by the test hook) at any row leaves the previous CSV, never half of
    // one, and --resume goes on from its journal to exactly the bytes of an uninterrupted run; so does
    // a shard, and a journal cut inside a row. A journal of another grid is refused.
    void killedSweepsResume()
    {
        QTemporaryDir dir;
        const QString grid = dir.filePath(u"grid.json"_qs), full = dir.filePath(u"full.csv"_qs),
                      out = dir.filePath(u"out.csv"_qs), journal = out + u".journal"_qs;
        QVERIFY(writeFile(grid,
            R"({"base": {"preset": "default", "set": ["duration=1ms"]}, "axes": [{"path": "workload.jobs.0.cpus_allowed", "values": ["2,3", "4-5"]}, {"path": "seed", "from": 1, "to": 10}]})"));
        QCOMPARE(cli({ u"sweep"_qs, grid, u"--csv"_qs, full }).code, 0);
        const QByteArray whole = head(full);
        QVERIFY(whole.contains("\"2,3\"")); // a quoted label: its comma is no separator
        const auto killedAt = [&](int rows, const QStringList& extra) {
            QProcess p;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(u"BLKMQLAB_FAULT_KILL_AFTER_ROWS"_qs, QString::number(rows));
            p.setProcessEnvironment(env);
            p.start(QStringLiteral(BLKMQLAB_CLI), QStringList { u"sweep"_qs, grid, u"--csv"_qs, out } + extra);
            return p.waitForFinished(60000) && p.exitStatus() == QProcess::CrashExit;
        };
        for (int rows : { 1, 7, 19 }) {
            QVERIFY(writeFile(out, "OLD\n"));
            QVERIFY2(killedAt(rows, {}), qPrintable(u"not killed after %1 rows"_qs.arg(rows)));
            QCOMPARE(head(out), QByteArray("OLD\n")); // the previous file, whole
            QCOMPARE(head(journal).count('\n'), 2 + rows);
            const auto resumed = cli({ u"sweep"_qs, grid, u"--csv"_qs, out, u"--resume"_qs });
            QVERIFY2(resumed.code == 0, qPrintable(resumed.err));
            QVERIFY(resumed.err.contains(u"resuming after %1 of 20 runs done"_qs.arg(rows)));
            QCOMPARE(head(out), whole);
            QVERIFY(!QFile::exists(journal));
        }
        // A journal cut inside a row: the row runs again.
        QVERIFY(killedAt(5, {}));
        QByteArray cut = head(journal);
        cut.chop(7);
        QVERIFY(writeFile(journal, cut));
        QCOMPARE(cli({ u"sweep"_qs, grid, u"--csv"_qs, out, u"--resume"_qs }).code, 0);
        QCOMPARE(head(out), whole);
        // A shard, killed and resumed, merges with the others into the whole.
        const QString s0 = dir.filePath(u"s0.csv"_qs), s1 = dir.filePath(u"s1.csv"_qs);
        QCOMPARE(cli({ u"sweep"_qs, grid, u"--shard"_qs, u"0/2"_qs, u"--csv"_qs, s0 }).code, 0);
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"BLKMQLAB_FAULT_KILL_AFTER_ROWS"_qs, u"4"_qs);
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(BLKMQLAB_CLI), { u"sweep"_qs, grid, u"--shard"_qs, u"1/2"_qs, u"--csv"_qs, s1 });
        QVERIFY(p.waitForFinished(60000) && p.exitStatus() == QProcess::CrashExit);
        QCOMPARE(cli({ u"sweep"_qs, grid, u"--shard"_qs, u"1/2"_qs, u"--csv"_qs, s1, u"--resume"_qs }).code, 0);
        const auto merged = cli({ u"merge"_qs, s0, s1 });
        QCOMPARE(merged.code, 0);
        QCOMPARE(merged.out.toUtf8(), whole);
        // Another grid's journal is refused, and --resume without one runs the whole grid.
        QVERIFY(killedAt(3, {}));
        const auto other = cli({ u"sweep"_qs, grid, u"--csv"_qs, out, u"--resume"_qs, u"--set"_qs, u"seed=5"_qs });
        QCOMPARE(other.code, 2);
        QVERIFY2(
            other.err.contains(
                u"is the journal of other work (different: the grid (its base's bytes, --set, --fio, axes or columns)"_qs),
            qPrintable(other.err));
        // A row changed after it was written (its first metric made 999999999) is refused, naming its line.
        QByteArray edited = head(journal);
        const QByteArray row2 = "\n1,\"2,3\",2,";
        const qsizetype metric = edited.indexOf(row2) + row2.size();
        QVERIFY2(metric >= row2.size(), edited.constData());
        edited.replace(metric, edited.indexOf(',', metric) - metric, "999999999");
        QVERIFY(writeFile(journal, edited));
        const auto changed = cli({ u"sweep"_qs, grid, u"--csv"_qs, out, u"--resume"_qs });
        QCOMPARE(changed.code, 2);
        QVERIFY2(changed.err.contains(u"line 4 was changed after it was written"_qs), qPrintable(changed.err));
        QVERIFY(QFile::remove(journal));
        QCOMPARE(cli({ u"sweep"_qs, grid, u"--csv"_qs, out, u"--resume"_qs }).code, 0);
        QCOMPARE(head(out), whole);
        const auto json
            = cli({ u"sweep"_qs, grid, u"--csv"_qs, out, u"--json"_qs, dir.filePath(u"x.json"_qs), u"--resume"_qs });
        QCOMPARE(json.code, 2);
        QVERIFY(json.err.contains(u"--resume continues the CSV only"_qs));
    }

    // --fio is part of what a sweep is: a sweep file's base runs the job file's workload, the grid's
    // id changes with the file's bytes, and a sweep resumed with another job file is refused,
    // naming it.
    void sweepsTakeTheirJobFile()
    {
        QTemporaryDir dir;
        const QString a = dir.filePath(u"a.fio"_qs), b = dir.filePath(u"b.fio"_qs),
                      grid = dir.filePath(u"grid.json"_qs), out = dir.filePath(u"v.csv"_qs);
        const char* job = "[global]\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\n[j]\niodepth=%1\n";
        QVERIFY(writeFile(a, QString::fromLatin1(job).arg(1).toUtf8()));
        QVERIFY(writeFile(b, QString::fromLatin1(job).arg(32).toUtf8()));
        QVERIFY(writeFile(grid,
            R"({"base": {"preset": "single-core-null", "set": ["duration=1ms"]}, "axes": [{"path": "seed", "from": 1, "to": 2}]})"));
        // A sweep file with --fio: the job's depth shows in the latency; the grid is another.
        const auto plain = cli({ u"sweep"_qs, grid, u"--csv"_qs, u"-"_qs });
        const auto withA = cli({ u"sweep"_qs, grid, u"--fio"_qs, a, u"--csv"_qs, u"-"_qs });
        const auto withB = cli({ u"sweep"_qs, grid, u"--fio"_qs, b, u"--csv"_qs, u"-"_qs });
        QCOMPARE(plain.code, 0);
        QCOMPARE(withA.code, 0);
        QCOMPARE(withB.code, 0);
        const auto lastFields = [](const QString& csv) { return csv.split(u'\n').at(1).section(u',', -4); };
        QVERIFY2(lastFields(withA.out) != lastFields(withB.out), qPrintable(withA.out + withB.out));
        QVERIFY2(lastFields(withA.out) != lastFields(plain.out), qPrintable(withA.out + plain.out));
        const auto fingerprint = [](const QString& csv) { return csv.split(u'\n').at(1).section(u',', -5, -5); };
        QVERIFY2(fingerprint(withA.out) != fingerprint(withB.out), qPrintable(withA.out + withB.out));
        QVERIFY2(fingerprint(withA.out) != fingerprint(plain.out), qPrintable(withA.out + plain.out));
        // The --vary form, killed after 3 of 6 runs, resumed with the other job file: refused.
        const QStringList vary { u"sweep"_qs, u"--preset"_qs, u"single-core-null"_qs, u"--duration"_qs, u"1ms"_qs,
            u"--vary"_qs, u"seed=1,2,3,4,5,6"_qs, u"--csv"_qs, out, u"--fio"_qs };
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"BLKMQLAB_FAULT_KILL_AFTER_ROWS"_qs, u"3"_qs);
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(BLKMQLAB_CLI), vary + QStringList { a });
        QVERIFY(p.waitForFinished(60000) && p.exitStatus() == QProcess::CrashExit);
        const auto mixed = cli(vary + QStringList { b, u"--resume"_qs });
        QCOMPARE(mixed.code, 2);
        QVERIFY2(mixed.err.contains(u"--fio (the job file's bytes)"_qs), qPrintable(mixed.err));
        QVERIFY2(!QFile::exists(out), "nothing written");
        const auto same = cli(vary + QStringList { a, u"--resume"_qs });
        QVERIFY2(same.code == 0 && same.err.contains(u"resuming after 3 of 6 runs done"_qs), qPrintable(same.err));
    }

    // explore and ab killed (SIGKILL, by the test hook) after any finished run leave the previous
    // report, never half of one, and --resume goes on from FILE.journal to exactly the bytes (report
    // and standard output) of an uninterrupted run. A journal cut inside a line runs that run again;
    // a journal of other work is refused; --resume needs --json FILE.
    void killedExploresAndAbsResume_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("runs");
        QTest::newRow("explore") << QStringList { u"explore"_qs, u"--preset"_qs, u"shared-hctx-stall"_qs,
            u"--duration"_qs, u"2ms"_qs, u"--seeds"_qs, u"6"_qs, u"--variant"_qs, u"kernel.restart=own-hctx"_qs,
            u"--variant"_qs, u"kernel.restart=rr-shared-tags-counter"_qs }
                                 << 12;
        QTest::newRow("ab") << QStringList { u"ab"_qs, u"--preset"_qs, u"default"_qs, u"--duration"_qs, u"1ms"_qs,
            u"--seeds"_qs, u"4"_qs, u"--b"_qs, u"kernel.patches.complete-llist=true"_qs }
                            << 8;
    }
    void killedExploresAndAbsResume()
    {
        QFETCH(QStringList, args);
        QFETCH(int, runs);
        QTemporaryDir dir;
        const QString full = dir.filePath(u"full.json"_qs), out = dir.filePath(u"out.json"_qs),
                      journal = out + u".journal"_qs;
        const auto whole = cli(args + QStringList { u"--json"_qs, full });
        QCOMPARE(whole.code, 0);
        QVERIFY(!QFile::exists(full + u".journal"_qs)); // a finished report keeps no journal
        const auto killedAt = [&](int n) {
            QProcess p;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(u"BLKMQLAB_FAULT_KILL_AFTER_ROWS"_qs, QString::number(n));
            p.setProcessEnvironment(env);
            p.start(QStringLiteral(BLKMQLAB_CLI), args + QStringList { u"--json"_qs, out });
            return p.waitForFinished(60000) && p.exitStatus() == QProcess::CrashExit;
        };
        for (const int n : { 1, runs / 2 + 1, runs - 1 }) {
            QVERIFY(writeFile(out, "OLD\n"));
            QVERIFY2(killedAt(n), qPrintable(u"not killed after %1 runs"_qs.arg(n)));
            QCOMPARE(head(out), QByteArray("OLD\n")); // the previous report, whole
            QCOMPARE(head(journal).count('\n'), 1 + n);
            const auto resumed = cli(args + QStringList { u"--json"_qs, out, u"--resume"_qs });
            QVERIFY2(resumed.code == 0, qPrintable(resumed.err));
            QVERIFY2(resumed.err.contains(u"resuming after %1 of %2 runs done"_qs.arg(n).arg(runs)),
                qPrintable(resumed.err));
            QCOMPARE(head(out), head(full));
            QCOMPARE(resumed.out, whole.out);
            QVERIFY(!QFile::exists(journal));
        }
        // A journal cut inside a line: that run runs again.
        QVERIFY(killedAt(3));
        QByteArray cut = head(journal);
        cut.chop(9);
        QVERIFY(writeFile(journal, cut));
        const auto afterCut = cli(args + QStringList { u"--json"_qs, out, u"--resume"_qs });
        QCOMPARE(afterCut.code, 0);
        QVERIFY2(afterCut.err.contains(u"resuming after 2 of"_qs), qPrintable(afterCut.err));
        QCOMPARE(head(out), head(full));
        // Other work's journal is refused; without one, --resume runs everything.
        QVERIFY(killedAt(2));
        const auto other = cli(args + QStringList { u"--json"_qs, out, u"--resume"_qs, u"--first-seed"_qs, u"5"_qs });
        QCOMPARE(other.code, 2);
        QVERIFY2(other.err.contains(u"is the journal of other work (different: the seeds"_qs), qPrintable(other.err));
        // A run's line changed after it was written (its run said to stall) is refused.
        QByteArray edited = head(journal);
        QVERIFY(edited.contains("\"stalled\":false"));
        edited.replace("\"stalled\":false", "\"stalled\":true");
        QVERIFY(writeFile(journal, edited));
        const auto changed = cli(args + QStringList { u"--json"_qs, out, u"--resume"_qs });
        QCOMPARE(changed.code, 2);
        QVERIFY2(changed.err.contains(u"line 2 was changed after it was written"_qs), qPrintable(changed.err));
        QVERIFY(QFile::remove(journal));
        QCOMPARE(cli(args + QStringList { u"--json"_qs, out, u"--resume"_qs }).code, 0);
        QCOMPARE(head(out), head(full));
        const auto toStdout = cli(args + QStringList { u"--json"_qs, u"-"_qs, u"--resume"_qs });
        QCOMPARE(toStdout.code, 2);
        QVERIFY(toStdout.err.contains(u"--resume continues the report of --json FILE"_qs));
    }

    // A file name that is not UTF-8 goes into a JSON output with those bytes as \\xNN, as a terminal
    // shows them; it never reaches the JSON writer raw (which throws).
    void fileNamesThatAreNotTextAreEscaped()
    {
        QTemporaryDir dir;
        const QString session = dir.filePath(u"s.blkmqlab"_qs);
        QCOMPARE(cli({ u"run"_qs, u"--preset"_qs, u"single-core-null"_qs, u"--duration"_qs, u"1ms"_qs,
                         u"--save-session"_qs, session })
                     .code,
            0);
        const QByteArray cafe = QFile::encodeName(dir.path()) + "/caf\xe9.blkmqlab";
        QCOMPARE(::rename(QFile::encodeName(session).constData(), cafe.constData()), 0);
        QProcess p; // through the shell: a QString argument cannot carry the byte
        p.start(u"/bin/sh"_qs,
            { u"-c"_qs, u"exec \"$0\" run --session \"$1/$(printf 'caf\\351.blkmqlab')\" --json -"_qs,
                QStringLiteral(BLKMQLAB_CLI), dir.path() });
        QVERIFY(p.waitForFinished(60000));
        const QByteArray err = p.readAllStandardError();
        QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0, err.constData());
        const auto doc = QJsonDocument::fromJson(p.readAllStandardOutput()).object();
        QCOMPARE(doc[u"session"_qs].toObject()[u"file"_qs].toString(), dir.path() + u"/caf\\xE9.blkmqlab"_qs);
    }

    // A session file from run --save-session or explore --save-counterexample FILE.blkmqlab replays
    // headless to where it stood (run --session) or to any time (--at), with the fingerprint of the
    // run that wrote it; a session that does not read or replay exits 2 naming why.
    void sessionsReplayHeadless()
    {
        QTemporaryDir dir;
        const QString session = dir.filePath(u"s.blkmqlab"_qs);
        const auto until = cli({ u"run"_qs, u"--preset"_qs, u"shared-hctx-stall"_qs, u"--until"_qs, u"stall"_qs,
            u"--save-session"_qs, session, u"--json"_qs, u"-"_qs });
        QCOMPARE(until.code, 0);
        const auto ran = QJsonDocument::fromJson(until.out.toUtf8()).object();
        const auto replayed = cli({ u"run"_qs, u"--session"_qs, session, u"--json"_qs, u"-"_qs });
        QVERIFY2(replayed.code == 0, qPrintable(replayed.err));
        const auto at = QJsonDocument::fromJson(replayed.out.toUtf8()).object();
        QCOMPARE(at[u"fingerprint"_qs].toString(), ran[u"fingerprint"_qs].toString());
        QCOMPARE(
            at[u"session"_qs].toObject()[u"at_ns"_qs].toInteger(), ran[u"until"_qs].toObject()[u"t_ns"_qs].toInteger());
        QVERIFY(at[u"stall"_qs].toObject()[u"detected"_qs].toBool());
        // Earlier: the same as a run to that time.
        const auto early = cli({ u"run"_qs, u"--session"_qs, session, u"--at"_qs, u"0.2ms"_qs, u"--json"_qs, u"-"_qs });
        const auto direct = cli({ u"run"_qs, u"--preset"_qs, u"shared-hctx-stall"_qs, u"--until"_qs, u"time:0.2ms"_qs,
            u"--json"_qs, u"-"_qs });
        QCOMPARE(early.code, 0);
        QCOMPARE(QJsonDocument::fromJson(early.out.toUtf8())
                     .object()[u"session"_qs]
                     .toObject()[u"fingerprint"_qs]
                     .toString(),
            QJsonDocument::fromJson(direct.out.toUtf8()).object()[u"fingerprint"_qs].toString());
        // explore's counterexample as a session opens at the stall.
        const QString ce = dir.filePath(u"ce.blkmqlab"_qs);
        QCOMPARE(cli({ u"explore"_qs, u"--preset"_qs, u"shared-hctx-stall"_qs, u"--seeds"_qs, u"2"_qs,
                         u"--save-counterexample"_qs, ce })
                     .code,
            0);
        const auto opened = cli({ u"run"_qs, u"--session"_qs, ce, u"--json"_qs, u"-"_qs });
        QCOMPARE(opened.code, 0);
        QVERIFY(QJsonDocument::fromJson(opened.out.toUtf8()).object()[u"stall"_qs].toObject()[u"detected"_qs].toBool());
        // Bad: an edited fingerprint, a newer format, --at past the end, a scenario option beside it.
        QByteArray text = head(session);
        QVERIFY(writeFile(session, text.replace("\"format\": 1", "\"format\": 9")));
        auto bad = cli({ u"run"_qs, u"--session"_qs, session });
        QCOMPARE(bad.code, 2);
        QVERIFY2(bad.err.contains(u"format: 9 is newer than the format this build reads (1)"_qs), qPrintable(bad.err));
        QVERIFY(writeFile(session,
            text.replace("\"format\": 9", "\"format\": 1").replace("\"fingerprint\": \"", "\"fingerprint\": \"0")));
        bad = cli({ u"run"_qs, u"--session"_qs, session });
        QCOMPARE(bad.code, 2);
        QVERIFY2(bad.err.contains(u"the replay diverged"_qs), qPrintable(bad.err));
        QCOMPARE(cli({ u"run"_qs, u"--session"_qs, ce, u"--at"_qs, u"1h"_qs }).code, 2);
        QCOMPARE(cli({ u"run"_qs, u"--session"_qs, ce, u"--preset"_qs, u"default"_qs }).code, 2);
        QCOMPARE(cli({ u"run"_qs, u"--at"_qs, u"1ms"_qs }).code, 2);
    }

    // Every command that prints to a standard output that cannot take it fails with exit 1.
    void stdoutFailuresFailEveryCommand()
    {
        for (const QStringList& args :
            { QStringList { u"presets"_qs }, QStringList { u"lessons"_qs }, QStringList { u"limits"_qs },
                QStringList { u"metrics"_qs }, QStringList { u"patches"_qs }, QStringList { u"costs"_qs },
                QStringList { u"topology"_qs, u"2n:1p:4c:1t"_qs }, QStringList { u"help"_qs },
                QStringList { u"fio-keys"_qs }, QStringList { u"oracle"_qs, u"--figures"_qs },
                QStringList { u"lesson"_qs, u"shared-hctx-stall"_qs } }) {
            QProcess p;
            p.setStandardOutputFile(u"/dev/full"_qs);
            p.start(QStringLiteral(BLKMQLAB_CLI), args);
            QVERIFY(p.waitForFinished(120000));
            QVERIFY2(p.exitCode() == 1, qPrintable(args.join(u' ')));
            QVERIFY(QString::fromUtf8(p.readAllStandardError()).contains(u"No space left on device"_qs));
        }
    }

    // One metric against one axis, a line per value of the other axes, mean and min-max over seeds.
    void sweepDrawsAChart()
    {
        QTemporaryDir dir;
        const QString grid = dir.filePath(u"grid.json"_qs);
        QVERIFY(writeFile(grid,
            R"({"base": {"preset": "default", "set": ["duration=2ms"]}, "axes": [{"path": "kernel.patches.complete-llist", "values": [false, true]}, {"path": "workload.jobs.0.iodepth", "from": 1, "to": 16, "factor": 2}, {"path": "seed", "from": 1, "to": 3}]})"));
        const QString png = dir.filePath(u"ipis.png"_qs), svg = dir.filePath(u"ipis.svg"_qs);
        QCOMPARE(cli({ u"sweep"_qs, grid, u"--chart"_qs, png, u"--metric"_qs, u"ipis_per_s"_qs, u"--x"_qs,
                         u"workload.jobs.0.iodepth"_qs })
                     .code,
            0);
        const QByteArray bytes = head(png);
        QVERIFY(bytes.startsWith("\x89PNG"));
        const auto be32 = [&](int at) {
            return (uchar(bytes[at]) << 24) | (uchar(bytes[at + 1]) << 16) | (uchar(bytes[at + 2]) << 8)
                | uchar(bytes[at + 3]);
        };
        QCOMPARE(be32(16), 1920u); // IHDR width, height
        QCOMPARE(be32(20), 1080u);
        QCOMPARE(cli({ u"sweep"_qs, grid, u"--chart"_qs, svg, u"--metric"_qs, u"ipis_per_s"_qs, u"--x"_qs,
                         u"workload.jobs.0.iodepth"_qs })
                     .code,
            0);
        const QByteArray text = head(svg);
        QVERIFY(text.contains("kernel.patches.complete-llist=false")); // a line per other axis value
        QVERIFY(text.contains("kernel.patches.complete-llist=true"));
        QVERIFY(text.contains("mean of 3 seeds"));
        QVERIFY(text.contains("workload.jobs.0.iodepth"));
        const auto bad = [&](const QStringList& extra, const QString& message) {
            const auto r = cli(QStringList { u"sweep"_qs, grid } + extra);
            return r.code == 2 && r.err.contains(message);
        };
        QVERIFY(
            bad({ u"--chart"_qs, dir.filePath(u"x.txt"_qs), u"--metric"_qs, u"iops"_qs }, u".png, .svg or .pdf"_qs));
        QVERIFY(bad({ u"--chart"_qs, png }, u"--metric"_qs));
        QVERIFY(bad({ u"--chart"_qs, png, u"--metric"_qs, u"nope"_qs }, u"'nope' is not a metric id"_qs));
        QVERIFY(bad({ u"--chart"_qs, png, u"--metric"_qs, u"iops"_qs, u"--x"_qs, u"nope"_qs }, u"not an axis"_qs));
        QVERIFY(bad({ u"--metric"_qs, u"iops"_qs }, u"go with --chart"_qs));
        QCOMPARE(
            cli({ u"sweep"_qs, grid, u"--chart"_qs, u"/nonexistent/c.png"_qs, u"--metric"_qs, u"iops"_qs }).code, 1);
    }

    // The charts are blkmqlab-chart's: without it beside the CLI or on PATH, --chart says so before
    // anything runs; the tool itself refuses a bad chart naming the field, and draws a good one.
    void chartsComeFromTheChartTool()
    {
        QTemporaryDir dir;
        const QString grid = dir.filePath(u"grid.json"_qs);
        QVERIFY(writeFile(grid, R"({"axes": [{"path": "seed", "values": [1, 2]}]})"));
        const QString alone = dir.filePath(u"blkmqlab-cli"_qs); // a CLI with no chart tool beside it
        QVERIFY(QFile::copy(QStringLiteral(BLKMQLAB_CLI), alone));
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"PATH"_qs, dir.filePath(u"nothing"_qs));
        p.setProcessEnvironment(env);
        p.start(alone, { u"sweep"_qs, grid, u"--chart"_qs, dir.filePath(u"c.png"_qs), u"--metric"_qs, u"iops"_qs });
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 2);
        QVERIFY2(p.readAllStandardError().contains("blkmqlab-chart, which draws the charts, is neither beside"),
            "no word of the missing chart tool");
        QVERIFY(!QFile::exists(dir.filePath(u"c.png"_qs)));
#ifdef BLKMQLAB_GUI
        const QString tool = QFileInfo(QStringLiteral(BLKMQLAB_CLI)).absolutePath() + u"/blkmqlab-chart"_qs;
        const auto draw = [&](const QByteArray& chart, const QString& out) {
            QProcess t;
            t.start(tool, { u"-"_qs, out });
            t.write(chart);
            t.closeWriteChannel();
            t.waitForFinished(60000);
            return std::make_pair(t.exitCode(), QString::fromUtf8(t.readAllStandardError()));
        };
        const QString png = dir.filePath(u"t.png"_qs);
        const QByteArray good = R"({"title": "IOPS", "x_label": "jobs", "y_label": "IOPS", "x_ticks": [], "seeds": 1,
            "lines": [{"label": "", "x": [1, 2], "mean": [3, 4], "min": [3, 4], "max": [3, 4]}]})";
        QCOMPARE(draw(good, png).first, 0);
        QVERIFY(head(png).startsWith("\x89PNG"));
        QByteArray shortMean = good;
        shortMean.replace("\"mean\": [3, 4]", "\"mean\": [3]");
        const auto refused = draw(shortMean, dir.filePath(u"u.png"_qs));
        QCOMPARE(refused.first, 2);
        QVERIFY2(refused.second.contains(u"lines[0]: x, mean, min and max"_qs), qPrintable(refused.second));
        QVERIFY(!QFile::exists(dir.filePath(u"u.png"_qs)));
        QCOMPARE(draw("{", png).first, 2);
#endif
    }

    // Every field of the sweep file's table (blkmqlab-cli fields sweep) fed the hostile values of
    // JSON: refused with exit 2 and one line naming the field, or accepted only where its kind takes
    // it; never a crash or a hang. A field of one form (base.file, axes[].factor) is tried on a
    // document of that form.
    void everySweepFieldRefusesHostileValues()
    {
        using json = nlohmann::json;
        const auto inventory = cli({ u"fields"_qs, u"sweep"_qs });
        QCOMPARE(inventory.code, 0);
        std::vector<blkmq::FieldInfo> rows;
        for (const QString& line : inventory.out.split(u'\n')) {
            const QStringList cells = line.split(u" | "_qs);
            if (cells.size() == 3 && line.startsWith(u"| `"_qs))
                rows.push_back({ cells[0].mid(3, cells[0].size() - 4).toStdString(), cells[1].toStdString(),
                    cells[2].chopped(2).toStdString() });
        }
        QVERIFY(rows.size() >= 14);
        QTemporaryDir dir;
        QFile scenario(QStringLiteral(BLKMQLAB_SOURCE_DIR "/resources/scenarios/default.json"));
        QVERIFY(scenario.open(QIODevice::ReadOnly));
        const QByteArray scenarioText = scenario.readAll();
        QVERIFY(writeFile(dir.filePath(u"base.json"_qs), scenarioText));
        const json set = json::array({ "duration=\"50us\"" });
        const json full = { { "base", { { "preset", "default" }, { "set", set } } },
            { "axes", json::array({ { { "path", "seed" }, { "values", { 1, 2 } } } }) }, { "metrics", { "iops" } },
            { "comment", "c" } };
        const QString file = dir.filePath(u"grid.json"_qs);
        int tried = 0;
        for (const blkmq::FieldInfo& f : rows) {
            json doc = full; // the form the field belongs to
            if (f.path == "base.file")
                doc["base"] = { { "file", "base.json" }, { "set", set } };
            else if (f.path == "base.scenario")
                doc["base"] = { { "scenario", json::parse(scenarioText.toStdString()) }, { "set", set } };
            else if (f.path == "axes[].from" || f.path == "axes[].to" || f.path == "axes[].step")
                doc["axes"][0] = { { "path", "seed" }, { "from", 1 }, { "to", 2 }, { "step", 1 } };
            else if (f.path == "axes[].factor")
                doc["axes"][0] = { { "path", "seed" }, { "from", 1 }, { "to", 2 }, { "factor", 2 } };
            QVERIFY2(!blkmq::test::at(doc, blkmq::test::firstElement(f.path)).is_null(), f.path.c_str());
            QVERIFY(writeFile(file, QByteArray::fromStdString(doc.dump())));
            QVERIFY2(cli({ u"sweep"_qs, file }).code == 0, f.path.c_str()); // the form itself runs
            for (const auto& [name, value] : blkmq::test::hostileJson()) {
                json hostile = doc;
                // Broken UTF-8 is written as the bytes themselves (a JSON library refuses to).
                const bool broken = name == "broken UTF-8";
                blkmq::test::at(hostile, blkmq::test::firstElement(f.path)) = broken ? json("BROKEN") : value;
                std::string text = hostile.dump();
                if (broken)
                    text.replace(text.find("\"BROKEN\""), 8, "\"a\xff\"");
                QVERIFY(writeFile(file, QByteArray::fromStdString(text)));
                ++tried;
                const std::string what = f.path + " = " + name;
                const auto r = cli({ u"sweep"_qs, file });
                QVERIFY2(r.code == 0 || r.code == 2, (what + ": exit " + std::to_string(r.code)).c_str());
                if (r.code == 2) {
                    const std::string err = r.err.trimmed().toStdString();
                    if (!broken) {
                        const std::string why = blkmq::test::badRefusal(f, err);
                        QVERIFY2(why.empty(), (what + ": " + why + ": " + err.substr(0, 300)).c_str());
                    }
                    QVERIFY2(err.find('\n') == std::string::npos && err.size() < 700,
                        (what + ": " + err.substr(0, 300)).c_str());
                    continue;
                }
                QVERIFY2(!broken, (what + ": accepted").c_str());
                const std::string why = blkmq::test::badAcceptance(f, name, value);
                QVERIFY2(why.empty(), (what + ": accepted, " + why).c_str());
            }
        }
        QVERIFY(tried >= 14 * static_cast<int>(blkmq::test::hostileJson().size()));
    }

    // Every option of every command (blkmqlab-cli fields options) given the hostile values of its
    // kind, and given without its value: exit 0-4, never a crash, a hang or an escape on the
    // terminal; a refusal is one line naming the option (or, for a setting, its field). A command
    // added to the table without its base arguments here fails the test.
    void everyOptionRefusesHostileValues()
    {
        const auto inventory = cli({ u"fields"_qs, u"options"_qs });
        QCOMPARE(inventory.code, 0);
        const QMap<QString, QStringList> base {
            { u"run"_qs, { u"--preset"_qs, u"default"_qs, u"--duration"_qs, u"20us"_qs } },
            { u"explore"_qs, { u"--preset"_qs, u"default"_qs, u"--duration"_qs, u"20us"_qs, u"--seeds"_qs, u"2"_qs } },
            { u"sweep"_qs,
                { u"--preset"_qs, u"default"_qs, u"--duration"_qs, u"20us"_qs, u"--vary"_qs, u"seed=1,2"_qs } },
            { u"ab"_qs,
                { u"--preset"_qs, u"default"_qs, u"--duration"_qs, u"20us"_qs, u"--seeds"_qs, u"2"_qs, u"--b"_qs,
                    u"kernel.threadirqs=true"_qs } },
            { u"oracle"_qs, { u"--figures"_qs } },
            { u"merge"_qs, { u"shard.csv"_qs } },
            { u"lesson"_qs, { u"shared-hctx-stall"_qs } },
            { u"check"_qs, { u"--preset"_qs, u"check-shared-hctx"_qs, u"--set"_qs, u"kernel.restart=own-hctx"_qs } },
        };
        const QString escape = QString::fromUtf8("\x1b[2J");
        const QString control = QString::fromUtf8("a\x01b");
        const QString big = QString(100000, u'7');
        const QMap<QString, QStringList> hostile {
            { u"count"_qs,
                { u"-1"_qs, u"0"_qs, u"0.5"_qs, u"1e300"_qs, u"nan"_qs, u"18446744073709551616"_qs, u""_qs, control,
                    big } },
            { u"duration"_qs,
                { u"-1ms"_qs, u"0"_qs, u"nan"_qs, u"1e300s"_qs, u"inf"_qs, u"18446744073709551616ns"_qs, u""_qs,
                    escape } },
            { u"file"_qs, { u""_qs, u"/nonexistent/x"_qs, u"."_qs, escape, big } },
            { u"output"_qs, { u""_qs, u"/nonexistent/x"_qs, u"."_qs, escape } },
            { u"folder"_qs, { u""_qs, u"/nonexistent/x"_qs, escape } },
            { u"name"_qs, { u""_qs, u"nope"_qs, escape, big } },
            { u"setting"_qs, { u""_qs, u"="_qs, u"a..b=1"_qs, escape + u"=1"_qs, u"seed=nan"_qs, u"seed="_qs + big } },
            { u"condition"_qs, { u""_qs, u"nope:1"_qs, u"time:-1"_qs, escape } },
            { u"text"_qs, { u""_qs, u":"_qs, u"1/0"_qs, escape, big } },
        };
        QTemporaryDir dir; // outputs that are accepted land here
        const auto runIn = [&](const QStringList& args) {
            QProcess p;
            p.setWorkingDirectory(dir.path());
            p.start(QStringLiteral(BLKMQLAB_CLI), args);
            Result r;
            if (!p.waitForFinished(120000)) {
                p.kill();
                p.waitForFinished();
                return r; // code -1: a hang
            }
            r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
            r.out = QString::fromUtf8(p.readAllStandardOutput());
            r.err = QString::fromUtf8(p.readAllStandardError());
            return r;
        };
        QCOMPARE(runIn({ u"sweep"_qs, u"--preset"_qs, u"default"_qs, u"--duration"_qs, u"20us"_qs, u"--vary"_qs,
                           u"seed=1"_qs, u"--csv"_qs, u"shard.csv"_qs })
                     .code,
            0); // what merge reads
        int tried = 0;
        for (const QString& line : inventory.out.split(u'\n')) {
            const QStringList cells = line.split(u" | "_qs);
            if (cells.size() != 3 || !line.startsWith(u"| `"_qs))
                continue;
            const QString cell = cells[0].mid(3, cells[0].size() - 4); // "--seed (run explore ...)"
            const QString option = cell.section(u' ', 0, 0);
            const QStringList commands = cell.section(u'(', 1).chopped(1).split(u' ');
            const QString kind = cells[1];
            QVERIFY2(kind == u"flag"_qs || hostile.contains(kind), qPrintable(kind));
            for (const QString& command : commands) {
                QVERIFY2(base.contains(command), qPrintable(command + u": no base arguments in the test"_qs));
                QStringList values = kind == u"flag"_qs ? QStringList { QString() } : hostile[kind];
                values.append(u"(missing)"_qs);
                for (const QString& value : values) {
                    QStringList args { command };
                    args += base[command];
                    args += option;
                    if (value != u"(missing)"_qs && kind != u"flag"_qs)
                        args += value;
                    ++tried;
                    const auto r = runIn(args);
                    const QString what = command + u" "_qs + option + u" "_qs + value.left(30);
                    QVERIFY2(r.code >= 0 && r.code <= 4, qPrintable(what + u": exit "_qs + QString::number(r.code)));
                    QVERIFY2(!r.err.contains(u'\x1b') && !r.out.contains(u'\x1b') && !r.err.contains(u'\x01'),
                        qPrintable(what + u": an escape reached the terminal"_qs));
                    if (r.code != 2)
                        continue;
                    const QString err = r.err.trimmed();
                    QVERIFY2(!err.contains(u'\n') && err.size() < 700, qPrintable(what + u": "_qs + err.left(300)));
                    const QString key = value.section(u'=', 0, 0).section(u'.', 0, 0);
                    QVERIFY2(err.contains(option)
                            || (kind == u"setting"_qs && !key.isEmpty() && err.contains(key.left(20)))
                            || (kind == u"setting"_qs && err.contains(u"--set"_qs)),
                        qPrintable(what + u": "_qs + err.left(300)));
                }
            }
        }
        QVERIFY(tried > 250);
    }

    void sweepRefusesBadGridsBeforeRunning_data()
    {
        QTest::addColumn<QByteArray>("file");
        QTest::addColumn<QStringList>("extra");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown axis") << QByteArray(R"({"axes": [{"path": "kernel.nope", "values": [1]}]})")
                                      << QStringList() << u"kernel.nope"_qs;
        QTest::newRow("empty range") << QByteArray(R"({"axes": [{"path": "seed", "from": 5, "to": 1}]})")
                                     << QStringList() << u"axes[0].to: the range 5 to 1 is empty"_qs;
        QTest::newRow("empty list") << QByteArray(R"({"axes": [{"path": "seed", "values": []}]})") << QStringList()
                                    << u"axes[0].values"_qs;
        QTest::newRow("bad log range") << QByteArray(R"({"axes": [{"path": "seed", "from": 0, "to": 8, "factor": 2}]})")
                                       << QStringList() << u"axes[0].factor"_qs;
        QTest::newRow("unknown field") << QByteArray(R"({"axes": [{"path": "seed", "vals": [1]}]})") << QStringList()
                                       << u"axes[0].vals: unknown field"_qs;
        QTest::newRow("too large") << QByteArray(
            R"({"axes": [{"path": "seed", "from": 1, "to": 200}, {"path": "workload.jobs.0.iodepth", "from": 1, "to": 100}]})")
                                   << QStringList() << u"20000 runs, more than 10000"_qs;
        QTest::newRow("shard 0/0") << QByteArray(R"({"axes": [{"path": "seed", "values": [1]}]})")
                                   << QStringList { u"--shard"_qs, u"0/0"_qs } << u"--shard: '0/0'"_qs;
        QTest::newRow("shard 3/2") << QByteArray(R"({"axes": [{"path": "seed", "values": [1]}]})")
                                   << QStringList { u"--shard"_qs, u"3/2"_qs } << u"I must be below N"_qs;
        QTest::newRow("unknown metric") << QByteArray(
            R"({"axes": [{"path": "seed", "values": [1]}], "metrics": ["nope"]})")
                                        << QStringList() << u"'nope' is not a metric id"_qs;
    }
    void sweepRefusesBadGridsBeforeRunning()
    {
        QFETCH(QByteArray, file);
        QFETCH(QStringList, extra);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const QString gridFile = dir.filePath(u"grid.json"_qs);
        QVERIFY(writeFile(gridFile, file));
        const QString csv = dir.filePath(u"out.csv"_qs);
        const auto r = cli(QStringList { u"sweep"_qs, gridFile, u"--csv"_qs, csv } + extra);
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QVERIFY(!QFileInfo::exists(csv));
        QVERIFY(r.out.isEmpty()); // refused before any run
        // An output that cannot be written: exit 1, before anything runs.
        if (QTest::currentDataTag() == QByteArray("empty range")) {
            QVERIFY(writeFile(gridFile, R"({"axes": [{"path": "seed", "values": [1]}]})"));
            QCOMPARE(cli({ u"sweep"_qs, gridFile, u"--csv"_qs, u"/nonexistent/x.csv"_qs }).code, 1);
        }
    }

    // Ctrl-C: no further run starts, the CSV gets the complete rows so far (a prefix of the grid
    // order, every row whole) and the exit status is 130.
    void sweepInterruptedWritesCompleteRows()
    {
        QTemporaryDir dir;
        const QString longGrid = dir.filePath(u"long.json"_qs);
        QVERIFY(writeFile(longGrid,
            R"({"base": {"preset": "default", "set": ["duration=20ms"]}, "axes": [{"path": "seed", "from": 1, "to": 5000}]})"));
        const QString csv = dir.filePath(u"part.csv"_qs);
        QProcess p;
        p.start(QStringLiteral(BLKMQLAB_CLI), { u"sweep"_qs, longGrid, u"--csv"_qs, csv, u"--threads"_qs, u"1"_qs });
        QVERIFY(p.waitForStarted());
        // Once it catches SIGINT (a sanitizer build takes a while to get there), and a little later,
        // while the 5,000 runs go on.
        const auto catchesSigint = [&] {
            QFile status(u"/proc/%1/status"_qs.arg(p.processId()));
            if (!status.open(QIODevice::ReadOnly))
                return false;
            for (const QByteArray& line : status.readAll().split('\n'))
                if (line.startsWith("SigCgt:"))
                    return ((line.mid(7).trimmed().toULongLong(nullptr, 16) >> (SIGINT - 1)) & 1) != 0;
            return false;
        };
        QTRY_VERIFY_WITH_TIMEOUT(catchesSigint(), 60000);
        QTest::qWait(1000);
        QCOMPARE(p.state(), QProcess::Running); // 5,000 runs take longer than that
        ::kill(static_cast<pid_t>(p.processId()), SIGINT);
        QVERIFY(p.waitForFinished(120000));
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        QCOMPARE(p.exitCode(), 130);
        QVERIFY(QString::fromUtf8(p.readAllStandardError()).contains(u"interrupted after"_qs));
        const QList<QByteArray> lines = head(csv).split('\n');
        QVERIFY(lines.size() >= 2);
        QVERIFY(lines.last().isEmpty()); // the file ends with a whole line
        QVERIFY(lines[0].startsWith("index,"));
        const int columns = static_cast<int>(lines[0].count(',')) + 1;
        int rows = 0;
        for (int i = 1; i + 1 < lines.size(); ++i, ++rows) {
            QCOMPARE(lines[i].split(',').size(), columns);
            QCOMPARE(lines[i].split(',')[0].toInt(), rows); // a prefix of the grid order
        }
        QVERIFY(rows < 5000);
    }

    void runWritesAPerfettoTrace()
    {
        QTemporaryDir dir;
        const QString file = dir.filePath(u"t.json"_qs);
        const auto r = cli({ u"run"_qs, u"--preset"_qs, u"default"_qs, u"--duration"_qs, u"2ms"_qs, u"--trace"_qs, file,
            u"--trace-window"_qs, u"500us:1500us"_qs, u"-q"_qs });
        QCOMPARE(r.code, 0);
        const QJsonObject doc = QJsonDocument::fromJson(head(file)).object();
        QCOMPARE(doc[u"displayTimeUnit"_qs].toString(), u"ns"_qs);
        const QJsonArray events = doc[u"traceEvents"_qs].toArray();
        int slices = 0;
        for (const auto& e : events) {
            const QJsonObject o = e.toObject();
            if (o[u"ph"_qs].toString() != u"X"_qs)
                continue;
            ++slices;
            QVERIFY(o[u"ts"_qs].toDouble() + o[u"dur"_qs].toDouble() >= 500 && o[u"ts"_qs].toDouble() <= 1500);
        }
        QVERIFY(slices > 100);
        const auto capped = cli({ u"run"_qs, u"--preset"_qs, u"default"_qs, u"--duration"_qs, u"1ms"_qs, u"--trace"_qs,
            file, u"--trace-cap"_qs, u"10"_qs, u"-q"_qs });
        QCOMPARE(capped.code, 0);
        QVERIFY2(capped.err.contains(u"cap of 10 events"_qs), qPrintable(capped.err));
        QVERIFY(QJsonDocument::fromJson(head(file)).object()[u"otherData"_qs].toObject()[u"truncated"_qs].toBool());
        const auto window = cli({ u"run"_qs, u"--trace"_qs, file, u"--trace-window"_qs, u"2ms:1ms"_qs });
        QCOMPARE(window.code, 2);
        QVERIFY(window.err.contains(u"--trace-window"_qs));
        QCOMPARE(cli({ u"run"_qs, u"--trace-cap"_qs, u"5"_qs }).code, 2); // without --trace
        QCOMPARE(cli({ u"run"_qs, u"--trace"_qs, u"/nonexistent/t.json"_qs }).code, 1);
    }

    void invalidScenarioLeavesNoOutputFile()
    {
        QTemporaryDir dir;
        QFile bad(dir.filePath(u"bad.json"_qs));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write(R"({"devices":[{"hw_queue_depth":0}]})");
        bad.close();
        const QString out = dir.filePath(u"out.json"_qs);
        const auto r = cli({ u"run"_qs, bad.fileName(), u"--json"_qs, out });
        QCOMPARE(r.code, 2);
        QVERIFY(!QFile::exists(out));
    }

    void unwritableOutputIsAnError()
    {
        const auto r = cli(
            { u"run"_qs, u"--duration"_qs, u"1ms"_qs, u"--json"_qs, u"/nonexistent-dir/out.json"_qs, u"--quiet"_qs });
        QCOMPARE(r.code, 1);
        QVERIFY(r.err.contains(u"cannot write"_qs));
    }

    // The tables in docs/ are command output; this keeps them true.
    void docsShowCurrentOutput_data()
    {
        QTest::addColumn<QString>("command");
        QTest::addColumn<QString>("doc");
        QTest::newRow("costs") << u"costs"_qs << u"docs/model.md"_qs;
        QTest::newRow("limits") << u"limits"_qs << u"docs/limits.md"_qs;
        QTest::newRow("metrics") << u"metrics"_qs << u"docs/scenario.md"_qs;
        QTest::newRow("validate") << u"validate"_qs << u"docs/validation.md"_qs;
        QTest::newRow("help commands") << u"help commands"_qs << u"README.md"_qs; // the usage block
    }
    void docsShowCurrentOutput()
    {
        QFETCH(QString, command);
        QFETCH(QString, doc);
        const auto r = cli(command.split(u' '));
        QVERIFY2(r.code == 0, qPrintable(u"exit "_qs + QString::number(r.code) + u": "_qs + r.err.left(2000)));
        QFile f(QStringLiteral(BLKMQLAB_SOURCE_DIR "/") + doc);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(f.readAll());
        const auto lines = r.out.trimmed().split(u'\n');
        QVERIFY(lines.size() > 3);
        for (const auto& line : lines)
            QVERIFY2(text.contains(line), qPrintable(doc + u" lacks: "_qs + line));
    }

    void validateUnknownFamily()
    {
        const auto r = cli({ u"validate"_qs, u"astrology"_qs });
        QCOMPARE(r.code, 2);
        QVERIFY(r.err.contains(u"families: all, baseline, completion, restart"_qs));
    }

    void topologyAndPresets()
    {
        const auto t = cli({ u"topology"_qs, u"gordeev-2n16"_qs });
        QCOMPARE(t.code, 0);
        QVERIFY(t.out.contains(u"node 0 (cpus 0-3,8-11)"_qs));
        QVERIFY(t.out.contains(u"core 0: cpu 0,8"_qs));
        const auto x = cli({ u"topology"_qs, QStringLiteral(BLKMQLAB_TEST_DATA "/synthetic-2p4c2t.xml") });
        QCOMPARE(x.code, 0);
        QVERIFY(x.out.contains(u"16 CPUs, 2 node(s)"_qs));
        const auto patches = cli({ u"patches"_qs });
        QCOMPARE(patches.code, 0);
        QVERIFY(patches.out.contains(u"blk-mq: Use llist_head for blk_cpu_done"_qs));
        QVERIFY(patches.out.contains(u"Christoph Hellwig"_qs));
        const auto p = cli({ u"presets"_qs });
        QCOMPARE(p.code, 0);
        for (const auto& name :
            { u"default"_qs, u"single-core-null"_qs, u"nvme-2s64-mq"_qs, u"nvme-2s64-1q"_qs, u"wagner-4s80"_qs })
            QVERIFY2(p.out.contains(name), qPrintable(name));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
