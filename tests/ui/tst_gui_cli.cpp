// blkmqlab's command line: outputs checked before the run, exit codes, no
// device replaced, and runs that end (the reproducers of the hostile-input review).
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>

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
