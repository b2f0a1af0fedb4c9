// blkmqlab's command line: outputs checked before the run, exit codes, no
// device replaced, and runs that end (the reproducers of the hostile-input review).
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>

#include <map>
#include <memory>
#include <string_view>

class TestGuiCli : public QObject {
    Q_OBJECT

    struct Result {
        int code = -1;
        QString err;
    };
    static Result gui(const QStringList& args)
    {
        QProcess p;
        p.start(QStringLiteral(BLKMQLAB_GUI), args);
        if (!p.waitForFinished(120000)) {
            p.kill();
            p.waitForFinished();
            return { -3, u"did not finish within 120 s"_qs };
        }
        return { p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2,
            QString::fromUtf8(p.readAllStandardError()) };
    }

private slots:
    void unwritableOutputsFailBeforeTheRun_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("screenshot in a missing folder") << QStringList { u"--screenshot"_qs,
            u"/nonexistent/dir/x.png"_qs } << u"--screenshot: cannot write '/nonexistent/dir/x.png'"_qs;
        QTest::newRow("screenshot is a directory")
            << QStringList { u"--screenshot"_qs, u"/"_qs } << u"it is a directory"_qs;
        QTest::newRow("chart in a missing folder")
            << QStringList { u"--export-chart"_qs, u"/nonexistent/dir/x.png"_qs } << u"--export-chart: cannot write"_qs;
        QTest::newRow("unknown chart format")
            << QStringList { u"--export-chart"_qs, u"x.bmpx"_qs } << u"unknown chart format 'bmpx'"_qs;
    }
    void unwritableOutputsFailBeforeTheRun()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, mentions);
        QElapsedTimer clock;
        clock.start();
        const auto r = gui(args + QStringList { u"--after"_qs, u"1s"_qs }); // a run that would take long
        QVERIFY2(r.code == 1, qPrintable(r.err));
        QVERIFY2(r.err.contains(mentions), qPrintable(r.err));
        QVERIFY(clock.elapsed() < 60000);
    }

    void badScenarioInputIsExitTwo()
    {
        QTemporaryDir dir;
        QFile f(dir.filePath(u"x.json"_qs));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"seed":1e400})");
        f.close();
        auto r = gui({ f.fileName() });
        QVERIFY2(r.code == 2, qPrintable(r.err));
        QVERIFY2(r.err.contains(u"number overflow parsing '1e400'"_qs), qPrintable(r.err));
        r = gui({ u"--set"_qs, u"devices.99999999999999999999999.x=1"_qs });
        QVERIFY2(r.code == 2, qPrintable(r.err));
        QVERIFY2(r.err.contains(u"no element with that index or name"_qs), qPrintable(r.err));
    }

    // --after without --run used to wait forever; the screenshot is a PNG at the asked time.
    void screenshotAfterATimeRunsThereAndQuits()
    {
        QTemporaryDir dir;
        const QString shot = dir.filePath(u"x.png"_qs);
        const auto r = gui({ u"--screenshot"_qs, shot, u"--after"_qs, u"1ms"_qs, u"--speed"_qs, u"max"_qs });
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QFile f(shot);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY(f.read(8).startsWith("\x89PNG"));
    }

    // --back-to goes back along the timeline from --after's time before the output; it needs --after
    // and a time no later.
    void screenshotAfterGoingBack()
    {
        QTemporaryDir dir;
        const QString shot = dir.filePath(u"x.png"_qs);
        auto r = gui({ u"--preset"_qs, u"shared-hctx-stall"_qs, u"--screenshot"_qs, shot, u"--after"_qs, u"1ms"_qs,
            u"--back-to"_qs, u"0.2ms"_qs });
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(!r.err.contains(u"stopped"_qs), qPrintable(r.err));
        QFile f(shot);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY(f.read(8).startsWith("\x89PNG"));
        r = gui({ u"--screenshot"_qs, shot, u"--after"_qs, u"1ms"_qs, u"--back-to"_qs, u"2ms"_qs });
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(u"--back-to"_qs), qPrintable(r.err));
        r = gui({ u"--screenshot"_qs, shot, u"--back-to"_qs, u"1ms"_qs });
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(u"--back-to"_qs), qPrintable(r.err));
    }

    // Without --speed a headless output plays as fast as it can: 50 ms at the window's default of
    // 100 µs per second would take 500 s.
    void headlessOutputsRunAtFullSpeed()
    {
        QTemporaryDir dir;
        const QString shot = dir.filePath(u"x.png"_qs);
        const auto r = gui({ u"--screenshot"_qs, shot, u"--after"_qs, u"50ms"_qs });
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(QFile::exists(shot));
    }

    // blkmqlab FILE.blkmqlab opens a session at its moment: a screenshot shows that time (not the end
    // of the run); a session whose replay diverges exits 2 naming why.
    void sessionFilesOpenAtTheirMoment()
    {
        QTemporaryDir dir;
        const QString session = dir.filePath(u"s.blkmqlab"_qs), shot = dir.filePath(u"s.png"_qs);
        QProcess cli;
        cli.start(QStringLiteral(BLKMQLAB_CLI),
            { u"run"_qs, u"--preset"_qs, u"shared-hctx-stall"_qs, u"--until"_qs, u"stall"_qs, u"--save-session"_qs,
                session, u"-q"_qs });
        QVERIFY(cli.waitForFinished(60000) && cli.exitCode() == 0);
        const auto r = gui({ session, u"--screenshot"_qs, shot });
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QFile png(shot);
        QVERIFY(png.open(QIODevice::ReadOnly));
        QCOMPARE(png.read(8), QByteArray("\x89PNG\r\n\x1a\n", 8));
        QFile f(session);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QByteArray text = f.readAll();
        f.close();
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(text.replace("\"events\": 65", "\"events\": 66"));
        f.close();
        const auto bad = gui({ session, u"--screenshot"_qs, shot });
        QCOMPARE(bad.code, 2);
        QVERIFY2(bad.err.contains(u"the replay diverged"_qs), qPrintable(bad.err));
    }

    // Every option --help lists, and the FILE argument, given the hostile values of the kind of value
    // it takes (its <VALUE> in --help): each is refused (exit 2, or 1 for an output that cannot be
    // written) in one terminal-safe line that names the option, or is one of the row's documented
    // acceptances; never a crash or a hang. An option whose kind of value has no row here fails the
    // test until it has one, so a new option meets the hostile values without a test of its own.
    void everyOptionRefusesHostileValues()
    {
        QProcess help;
        help.start(QStringLiteral(BLKMQLAB_GUI), { u"--help"_qs });
        QVERIFY(help.waitForFinished(60000));
        const QString text = QString::fromUtf8(help.readAllStandardOutput());
        // The values every kind meets, then each kind's own; "\xff" stands for a byte that is not UTF-8.
        const QStringList common { u""_qs, u"a\u0001b"_qs, u"\u001b[31mred"_qs, u"\\xff"_qs, QString(100000, u'f'),
            u"../../x"_qs, u"--run"_qs };
        const QStringList numbers { u"nan"_qs, u"inf"_qs, u"-inf"_qs, u"-0"_qs, u"1e308"_qs, u"9223372036854775808"_qs,
            u"0.5"_qs, u"-1"_qs, u"0x10"_qs };
        const std::map<QString, QStringList> kinds {
            // besides the common ones
            { u"NAME"_qs, { u"default/../x"_qs } },
            { u"key=value"_qs, { u"=1"_qs, u"seed="_qs, u"seed=nan"_qs, u"seed=1e308"_qs, u"devices.-1.x=1"_qs } },
            { u"kernel.key=value"_qs,
                { u"kernel.=1"_qs, u"kernel.rq_affinity=nan"_qs, u"kernel.rq_affinity=9223372036854775808"_qs,
                    u"seed=2"_qs } },
            { u"X"_qs, numbers + QStringList { u"1e-300"_qs, u"1e4"_qs } },
            { u"DUR"_qs, numbers + QStringList { u"nanms"_qs, u"1e308s"_qs, u"-1ms"_qs, u"9223372036854775808ns"_qs } },
            { u"ID"_qs, numbers + QStringList { u"0"_qs, u"99"_qs, u"all2"_qs } },
            { u"WxH"_qs,
                { u"x"_qs, u"0x0"_qs, u"49x50"_qs, u"10001x50"_qs, u"-50x-50"_qs, u"9223372036854775808x50"_qs,
                    u"50x50x50"_qs, u"nanxnan"_qs } },
            { u"cpu:N|hctx:N"_qs,
                { u"cpu:"_qs, u"cpu:-1"_qs, u"cpu:99999"_qs, u"hctx:99999"_qs, u"cpu:nan"_qs,
                    u"cpu:9223372036854775808"_qs, u"disk:0"_qs } },
            { u"NAME[:STEP]"_qs,
                { u"shared-hctx-stall:0"_qs, u"shared-hctx-stall:99"_qs, u"shared-hctx-stall:-1"_qs,
                    u"shared-hctx-stall:nan"_qs, u"shared-hctx-stall:"_qs, u":1"_qs } },
            // An output: refused when it cannot be written; any name the file system takes is the user's.
            { u"FILE"_qs, { u"/"_qs, u"/nonexistent/x.png"_qs, u"x.bmpx"_qs, u"a\u0001b.svg"_qs, u"../../x.pdf"_qs } },
            // The scenario or session FILE argument.
            { u"[FILE]"_qs, { u"/"_qs, u"/dev/zero"_qs, u"x.blkmqlab"_qs } },
        };
        // What each option takes of those (exit 0), when a kind's values mean something to it: a
        // duration without a unit is in nanoseconds (-0 is 0); a screenshot is a PNG whatever the name;
        // a chart takes any name with the format's ending.
        const std::map<QString, QStringList> accepted {
            { u"--speed"_qs, { u"0.5"_qs } },
            { u"--after"_qs, { u"-0"_qs, u"0.5"_qs } },
            { u"--quit-after"_qs, { u"-0"_qs, u"0.5"_qs } },
            { u"--screenshot"_qs,
                { u"a\u0001b"_qs, u"\u001b[31mred"_qs, u"\\xff"_qs, u"../../x"_qs, u"--run"_qs, u"x.bmpx"_qs,
                    u"a\u0001b.svg"_qs, u"../../x.pdf"_qs } },
            { u"--export-chart"_qs, { u"a\u0001b.svg"_qs, u"../../x.pdf"_qs } },
        };
        static const QRegularExpression row(u"^  (?:-\\w, )?(--[\\w-]+)(?: <([^>]+)>)?"_qs);
        std::vector<std::pair<QString, QString>> options; // --option, its kind ("" for a flag)
        for (const QString& line : text.split(u'\n')) {
            const auto m = row.match(line);
            if (m.hasMatch()
                && !QStringList { u"--help"_qs, u"--help-all"_qs, u"--version"_qs }.contains(m.captured(1)))
                options.emplace_back(m.captured(1), m.captured(2));
        }
        QVERIFY2(options.size() >= 13, qPrintable(text));
        options.emplace_back(QString(), u"[FILE]"_qs); // the argument
        QTemporaryDir dir; // outputs a value names land here, "../../x" too
        QVERIFY(QDir(dir.path()).mkpath(u"a/b"_qs));
        struct Launch {
            QString option, kind, value;
            std::unique_ptr<QProcess> process;
        };
        std::vector<Launch> launches;
        for (const auto& [option, kind] : options) {
            if (kind.isEmpty())
                continue; // a flag takes no value
            const auto k = kinds.find(kind);
            QVERIFY2(
                k != kinds.end(), qPrintable(option + u" takes <"_qs + kind + u">: add its hostile values here"_qs));
            for (const QString& value : common + k->second)
                launches.push_back({ option, kind, value, nullptr });
        }
        QVERIFY(launches.size() >= 150);
        QStringList problems;
        const auto start = [&](Launch& l) {
            QStringList args { u"--preset"_qs, u"default"_qs, u"--quit-after"_qs, u"1us"_qs };
            if (!l.option.isEmpty())
                args << l.option;
            else
                args = QStringList { u"--"_qs }; // the argument, even when it looks like an option
            l.process = std::make_unique<QProcess>();
            l.process->setWorkingDirectory(dir.filePath(u"a/b"_qs));
            if (l.value == u"\\xff"_qs) // through a shell: QProcess passes only UTF-8
                l.process->start(u"/bin/sh"_qs,
                    QStringList {
                        u"-c"_qs, u"exec \"$0\" \"$@\" \"$(printf 'a\\377b')\""_qs, QStringLiteral(BLKMQLAB_GUI) }
                        + args);
            else
                l.process->start(QStringLiteral(BLKMQLAB_GUI), args << l.value);
        };
        const auto judge = [&](Launch& l) {
            QProcess& p = *l.process;
            const QString what = (l.option.isEmpty() ? u"FILE"_qs : l.option) + u" "_qs + l.value.left(30);
            if (!p.waitForFinished(60000)) {
                p.kill();
                p.waitForFinished();
                problems << what + u": did not finish within 60 s"_qs;
                return;
            }
            if (p.exitStatus() != QProcess::NormalExit) {
                problems << what + u": crashed"_qs;
                return;
            }
            QString err;
            for (const QString& line : QString::fromUtf8(p.readAllStandardError()).split(u'\n', Qt::SkipEmptyParts))
                if (line.startsWith(u"blkmqlab:"_qs))
                    err += line + u'\n';
            const bool safe = std::all_of(err.begin(), err.end(),
                [](QChar c) { return c == u'\n' || (c.unicode() >= 0x20 && c.unicode() != 0x7f); });
            if (accepted.count(l.option) && accepted.at(l.option).contains(l.value)) {
                if (p.exitCode() != 0)
                    problems << what + u": refused: "_qs + err;
            } else if (p.exitCode() != 2 && !(p.exitCode() == 1 && l.kind == u"FILE"_qs))
                problems << what + u": exit "_qs + QString::number(p.exitCode()) + u" "_qs + err;
            else if (err.count(u'\n') != 1 || err.size() > 800 || !safe
                || !err.contains(l.option.isEmpty() ? u"FILE"_qs : l.option))
                problems << what + u": "_qs + err.left(300);
            l.process.reset();
        };
        // A few at a time: under the sanitizers each launch takes seconds.
        constexpr std::size_t kAtOnce = 4;
        for (std::size_t i = 0; i < launches.size(); i += kAtOnce) {
            const std::size_t end = std::min(launches.size(), i + kAtOnce);
            for (std::size_t j = i; j < end; ++j)
                start(launches[j]);
            for (std::size_t j = i; j < end; ++j)
                judge(launches[j]);
        }
        for (const QString& problem : problems)
            qWarning("%s", qPrintable(problem));
        QVERIFY2(problems.isEmpty(), "the values above were not refused in one line naming the option");
    }

    // blkmqlab [--preset NAME] JOB.fio: the job on the preset, then --set; a bad job is exit 2 naming its line.
    void fioJobFilesRunOnThePreset()
    {
        QTemporaryDir dir;
        const QString job = dir.filePath(u"job.fio"_qs), shot = dir.filePath(u"x.png"_qs);
        QFile f(job);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("[global]\nfilename=/dev/nullb0\nruntime=1ms\n[a]\nnumjobs=2\niodepth=2\n");
        f.close();
        auto r = gui({ u"--preset"_qs, u"shared-hctx-stall"_qs, job, u"--set"_qs, u"workload.jobs.0.iodepth=4"_qs,
            u"--screenshot"_qs, shot, u"--after"_qs, u"100us"_qs });
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(QFile::exists(shot));
        r = gui({ job, u"--quit-after"_qs, u"1us"_qs }); // the default scenario has no nullb0
        QVERIFY2(r.code == 2 && r.err.contains(u"FILE: "_qs) && r.err.contains(u"job.fio:2"_qs), qPrintable(r.err));
        r = gui({ job, u"--set"_qs, u"workload.jobs.0.iodepth=0"_qs, u"--preset"_qs, u"shared-hctx-stall"_qs,
            u"--quit-after"_qs, u"1us"_qs });
        QVERIFY2(r.code == 2 && r.err.contains(u"iodepth"_qs), qPrintable(r.err));
    }

    // --help and --version need no display.
    void helpNeedsNoDisplay()
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        for (const auto* name : { "DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM" })
            env.remove(QString::fromLatin1(name));
        for (const auto* option : { "--help", "--version" }) {
            QProcess p;
            p.setProcessEnvironment(env);
            p.start(QStringLiteral(BLKMQLAB_GUI), { QString::fromLatin1(option) });
            QVERIFY(p.waitForFinished(60000));
            QCOMPARE(p.exitStatus(), QProcess::NormalExit);
            QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
            const QByteArray out = p.readAllStandardOutput();
            QVERIFY2(out.contains(option == std::string_view("--help") ? "--screenshot <FILE>" : "blkmqlab"),
                out.constData());
        }
    }

    // The timer that took the screenshot once read a bool that had gone out of scope (ASan: stack-use-after-scope).
    void screenshotThenQuitLater()
    {
        QTemporaryDir dir;
        const QString shot = dir.filePath(u"x.png"_qs);
        const auto r = gui({ u"--preset"_qs, u"restart-128x64"_qs, u"--speed"_qs, u"max"_qs, u"--run"_qs,
            u"--quit-after"_qs, u"2ms"_qs, u"--screenshot"_qs, shot, u"--after"_qs, u"1ms"_qs });
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(QFile::exists(shot));
    }

    void screenshotToADeviceWritesIntoIt()
    {
        struct stat before {
        }, after {};
        QCOMPARE(::stat("/dev/null", &before), 0);
        const auto r
            = gui({ u"--screenshot"_qs, u"/dev/null"_qs, u"--after"_qs, u"100us"_qs, u"--speed"_qs, u"max"_qs });
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QCOMPARE(::stat("/dev/null", &after), 0);
        QVERIFY(S_ISCHR(after.st_mode));
        QCOMPARE(after.st_rdev, before.st_rdev);
        const auto full
            = gui({ u"--screenshot"_qs, u"/dev/full"_qs, u"--after"_qs, u"100us"_qs, u"--speed"_qs, u"max"_qs });
        QVERIFY2(full.code == 1, qPrintable(full.err));
        QVERIFY2(full.err.contains(u"No space left on device"_qs), qPrintable(full.err));
    }

    // At any speed, "max" included: the stall pauses the run where it was found.
    void quittingEarlyAtAStallSaysSo_data()
    {
        QTest::addColumn<QString>("speed");
        QTest::newRow("0.01") << u"0.01"_qs;
        QTest::newRow("max") << u"max"_qs;
    }
    void quittingEarlyAtAStallSaysSo()
    {
        QFETCH(QString, speed);
        const auto r
            = gui({ u"--preset"_qs, u"shared-hctx-stall"_qs, u"--quit-after"_qs, u"5ms"_qs, u"--speed"_qs, speed });
        QVERIFY2(r.code == 0, qPrintable(r.err));
        // The stall of this preset is detected at 0.6 ms (the runner pauses a little after); the run ends at 1 ms.
        const QRegularExpression said(u"the run stopped at 6\\d\\d(us|\\d{3}ns), before 1ms: a stall paused it"_qs);
        QVERIFY2(said.match(r.err).hasMatch(), qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TestGuiCli)
#include "tst_gui_cli.moc"
