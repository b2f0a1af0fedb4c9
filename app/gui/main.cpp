// blkmqlab: the desktop laboratory.
//   blkmqlab [FILE | SESSION.blkmqlab | [--preset NAME] JOB.fio | --preset NAME] [--set k=v]... [--run] [--speed X]
//            [--screenshot FILE --after DUR [--back-to DUR]] [--export-chart FILE] [--quit-after DUR]
//            [--inspect cpu:N|hctx:N]
//            [--lesson NAME[:STEP]] [--chart all|N|METRIC] [--size WxH] [--presentation]
#include "EngineRunner.h"
#include "LessonPanel.h"
#include "MainWindow.h"
#include "PlotPanel.h"
#include "io/Outputs.h"
#include "io/SafeFile.h"
#include "io/Text.h"
#include "scenario/ScenarioLoader.h"
#include "sim/Duration.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QEventLoop>
#include <QTimer>

#include <cstdio>
#include <memory>
#include <optional>
#include <string_view>

using namespace blkmq;

namespace {
// One line on standard error, with anything a terminal would act on escaped: a message may quote
// what the user gave.
void say(const QString& message)
{
    std::fprintf(stderr, "blkmqlab: %s\n", terminalSafe(message.toStdString()).c_str());
}

int fail(const QString& message)
{
    say(message);
    return 2;
}

// --help and --version need no display: they are answered by a QCoreApplication.
bool asksForHelp(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "-h" || a == "--help" || a == "-?" || a == "--help-all" || a == "-v" || a == "--version")
            return true;
    }
    return false;
}
} // namespace

int main(int argc, char** argv)
{
    const std::unique_ptr<QCoreApplication> app = asksForHelp(argc, argv)
        ? std::make_unique<QCoreApplication>(argc, argv)
        : std::make_unique<QApplication>(argc, argv);
    QApplication::setApplicationName(QStringLiteral("blkmqlab"));
    QApplication::setOrganizationName(QStringLiteral("BlkMQ Lab"));
    QApplication::setApplicationDisplayName(QStringLiteral("BlkMQ Lab"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("BlkMQ Lab: watch the Linux blk-mq layer at work"));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("FILE"),
        QStringLiteral("a scenario file (JSON), a session file (.blkmqlab) to open at its moment, or a fio job file "
                       "(.fio) to run on --preset"),
        QStringLiteral("[FILE]"));
    const QCommandLineOption preset(
        QStringLiteral("preset"), QStringLiteral("start on a built-in scenario"), QStringLiteral("NAME"));
    const QCommandLineOption set(
        QStringLiteral("set"), QStringLiteral("override a scenario field (dotted path)"), QStringLiteral("key=value"));
    const QCommandLineOption run(QStringLiteral("run"), QStringLiteral("start running at once"));
    const QCommandLineOption speed(
        QStringLiteral("speed"), QStringLiteral("simulated seconds per wall second, or max"), QStringLiteral("X"));
    const QCommandLineOption shot(
        QStringLiteral("screenshot"), QStringLiteral("save the window as PNG"), QStringLiteral("FILE"));
    const QCommandLineOption after(QStringLiteral("after"),
        QStringLiteral("simulated time to reach before the screenshot/export"), QStringLiteral("DUR"));
    const QCommandLineOption backTo(QStringLiteral("back-to"),
        QStringLiteral("once --after is reached, go back along the timeline to this simulated time before the "
                       "screenshot/export"),
        QStringLiteral("DUR"));
    const QCommandLineOption chart(QStringLiteral("export-chart"),
        QStringLiteral("export charts (.png/.svg/.pdf): --chart, --size"), QStringLiteral("FILE"));
    const QCommandLineOption chartId(QStringLiteral("chart"),
        QStringLiteral("which chart --export-chart writes: all (a grid, the default), a number from 1, or a metric id"),
        QStringLiteral("ID"));
    const QCommandLineOption chartSize(QStringLiteral("size"),
        QStringLiteral("--export-chart's size in pixels (default 1920x1080); fonts and lines scale with it"),
        QStringLiteral("WxH"));
    const QCommandLineOption quit(QStringLiteral("quit-after"),
        QStringLiteral("quit once this much simulated time has run"), QStringLiteral("DUR"));
    const QCommandLineOption compare(QStringLiteral("compare"),
        QStringLiteral("run B beside A with this kernel setting changed (repeatable)"),
        QStringLiteral("kernel.key=value"));
    const QCommandLineOption inspect(QStringLiteral("inspect"),
        QStringLiteral("show a CPU or hctx in the inspector for --screenshot/--export-chart"),
        QStringLiteral("cpu:N|hctx:N"));
    const QCommandLineOption lesson(QStringLiteral("lesson"),
        QStringLiteral("open a guided lesson and play it to step STEP (1 = the first; a --screenshot waits for it)"),
        QStringLiteral("NAME[:STEP]"));
    const QCommandLineOption present(QStringLiteral("presentation"),
        QStringLiteral("start in presentation mode: full screen, the panels hidden (F11 leaves it)"));
    const QCommandLineOption colourBlind(QStringLiteral("colour-blind-safe"),
        QStringLiteral("draw with the colour-blind-safe colours (View > Colour-blind-safe colours)"));
    parser.addOptions({ preset, set, run, speed, shot, after, backTo, chart, chartId, chartSize, quit, compare, inspect,
        lesson, present, colourBlind });
    parser.process(*app);

    std::vector<std::string> sets;
    for (const QString& s : parser.values(set))
        sets.push_back(s.toStdString());
    const QStringList files = parser.positionalArguments();
    // A fio job file (.fio) runs on --preset (or the default scenario), as blkmqlab-cli run does.
    const bool isFio = !files.isEmpty() && files.first().endsWith(QStringLiteral(".fio"));
    if (files.size() > 1 || (!files.isEmpty() && !isFio && parser.isSet(preset)))
        return fail(QStringLiteral("give one scenario FILE or --preset, not both"));
    // A session file (.blkmqlab) carries its scenario and the moment the window opens at.
    const bool isSession = !files.isEmpty() && files.first().endsWith(QStringLiteral(".blkmqlab"));
    if (isSession && !sets.empty())
        return fail(QStringLiteral("a session file carries its scenario: no --set beside it"));
    std::optional<Session> session;
    if (isSession) {
        auto read = Session::fromFile(files.first().toStdString());
        if (!read)
            return fail(QStringLiteral("FILE: ") + QString::fromStdString(read.error()));
        session = std::move(*read);
    }
    // The scenario with the --set overrides (a fio job's come after the job: openFioJob).
    const auto loadScenario = [&](const std::vector<std::string>& overrides) {
        return isSession               ? session->scenarioOf()
            : files.isEmpty() || isFio ? ScenarioLoader::fromPreset(
                  parser.isSet(preset) ? parser.value(preset).toStdString() : "default", overrides)
                                       : ScenarioLoader::fromFile(files.first().toStdString(), overrides);
    };
    const bool withSets = !sets.empty() && !isFio;
    auto scenario = loadScenario(withSets ? sets : std::vector<std::string>());
    if (!scenario) { // whose fault: the scenario as named, or a --set (whose messages name its path)
        const auto plain = withSets ? loadScenario({}) : scenario;
        if (!plain)
            return fail((isSession || (!files.isEmpty() && !isFio) ? QStringLiteral("FILE: ")
                                : parser.isSet(preset)             ? QStringLiteral("--preset: ")
                                                                   : QString())
                + QString::fromStdString(plain.error()));
        return fail((scenario.error().find("--set") == std::string::npos ? QStringLiteral("--set: ") : QString())
            + QString::fromStdString(scenario.error()));
    }
    const auto duration = [&](const QCommandLineOption& o) -> std::optional<SimTime> {
        if (!parser.isSet(o))
            return SimTime(-1);
        return parseDuration(parser.value(o).toStdString());
    };
    auto afterTime = duration(after);
    const auto quitTime = duration(quit);
    const auto backTime = duration(backTo);
    if (!afterTime || !quitTime || !backTime)
        return fail(QStringLiteral("%1 takes a duration such as 5ms (ns, us, ms or s)")
                        .arg(!afterTime     ? QStringLiteral("--after")
                                : !quitTime ? QStringLiteral("--quit-after")
                                            : QStringLiteral("--back-to")));
    if (parser.isSet(backTo) && (!parser.isSet(after) || backTime->ns() > afterTime->ns()))
        return fail(QStringLiteral("--back-to goes back from --after's time: give --after, and a time no later"));

    // Outputs that cannot be written are refused before anything runs (exit 1).
    int outputCode = 1;
    const auto outputError = [&]() -> QString {
        const std::string shotPath = parser.isSet(shot) ? parser.value(shot).toStdString() : std::string();
        const std::string chartPath = parser.isSet(chart) ? parser.value(chart).toStdString() : std::string();
        if (const std::string err
            = checkOutputs("blkmqlab", { { "--screenshot", shotPath }, { "--export-chart", chartPath } }, outputCode);
            !err.empty())
            return QString::fromStdString(err);
        if (parser.isSet(chart))
            if (const QString err = MainWindow::checkChartPath(parser.value(chart)); !err.isEmpty()) {
                outputCode = 1;
                return QStringLiteral("--export-chart: ") + err;
            }
        return {};
    }();
    if (!outputError.isEmpty()) {
        say(outputError);
        return outputCode;
    }

    QSize exportSize(1920, 1080);
    if (parser.isSet(chartSize)) {
        const QStringList wh = parser.value(chartSize).split(QLatin1Char('x'));
        exportSize = wh.size() == 2 ? QSize(wh[0].toInt(), wh[1].toInt()) : QSize();
        if (exportSize.width() < 50 || exportSize.height() < 50 || exportSize.width() > 10000
            || exportSize.height() > 10000)
            return fail(QStringLiteral("--size takes WIDTHxHEIGHT, 50 to 10000 pixels each (e.g. 1920x1080)"));
    }

    MainWindow window;
    window.loadScenario(*scenario);
    if (isFio) // the job's workload, then the --set overrides
        if (const QString err = window.openFioJob(files.first(), sets); !err.isEmpty())
            return fail(QStringLiteral("FILE: ") + err);
    if (parser.isSet(inspect)) // checked against the machine at once; shown again at the output's moment
        if (const QString err = window.inspect(parser.value(inspect)); !err.isEmpty())
            return fail(QStringLiteral("--inspect: ") + err);
    const int chartIndex = window.chartIndex(parser.isSet(chartId) ? parser.value(chartId) : QStringLiteral("all"));
    if (chartIndex < -1)
        return fail(QStringLiteral("--chart: '%1' is not all, a chart number (1 to %2) or a plotted metric id")
                        .arg(QString::fromStdString(printable(parser.value(chartId).toStdString())))
                        .arg(window.plotPanel()->plots().size()));
    if (parser.isSet(compare)) {
        std::vector<std::string> bSets;
        for (const QString& s : parser.values(compare))
            bSets.push_back(s.toStdString());
        if (const QString err = window.compareWith(bSets); !err.isEmpty())
            return fail(QStringLiteral("--compare: ") + err);
    }
    if (parser.isSet(speed)) {
        const QString v = parser.value(speed);
        bool ok = false;
        const double x = v == QLatin1String("max") ? 0.0 : v.toDouble(&ok);
        // Faster than 1000 simulated seconds a wall second is as fast as it goes: say max.
        if (v != QLatin1String("max") && (!ok || !(x >= 1e-9 && x <= 1e3)))
            return fail(
                QStringLiteral("--speed takes simulated seconds per wall second, 1e-9 to 1000 (e.g. 1e-4), or max"));
        window.setSpeed(x);
    }
    bool placed = false; // a geometry saved last time
    if (!parser.isSet(shot)) // screenshots keep the default layout, whatever was saved last time
        placed = window.restoreSettings();
    if (parser.isSet(colourBlind))
        window.setColourBlindSafe(true);
    // Else maximized: a window manager fits it, title bar and all, to the screen's free area (the
    // screen's size as the window's own would put the status bar below the screen's edge).
    placed ? window.show() : window.showMaximized();
    if (parser.isSet(present))
        window.presentation()->setPresenting(true);
    if (isSession) { // replayed off the GUI thread; the rest (--after, --screenshot) starts from its moment
        QString error;
        QEventLoop wait;
        QObject::connect(&window, &MainWindow::sessionOpened, &wait, [&](const QString& e) {
            error = e;
            wait.quit();
        });
        if (const QString e = window.openSession(files.first()); !e.isEmpty())
            return fail(e);
        wait.exec();
        if (!error.isEmpty())
            return fail(files.first() + QStringLiteral(": ") + error);
        if (!parser.isSet(after)) // outputs show the session's moment unless --after says later
            afterTime = SimTime(window.shownTimeNs());
    }
    int lessonStep = -1; // 0-based; -1: no lesson step to wait for
    if (parser.isSet(lesson)) {
        const QString spec = parser.value(lesson);
        const QString name = spec.section(QLatin1Char(':'), 0, 0);
        if (const QString err = window.openLesson(name); !err.isEmpty())
            return fail(QStringLiteral("--lesson: ") + err);
        if (spec.contains(QLatin1Char(':'))) {
            bool ok = false;
            lessonStep = spec.section(QLatin1Char(':'), 1).toInt(&ok) - 1;
            if (!ok || lessonStep < 0 || lessonStep >= window.lessonPanel()->lesson()->size())
                return fail(
                    QStringLiteral("--lesson: STEP must be 1 to %1").arg(window.lessonPanel()->lesson()->size()));
            window.playLessonTo(lessonStep);
        }
    }
    if (lessonStep >= 0 && parser.isSet(shot)) { // the screenshot shows the lesson step, once it is reached
        auto* wait = new QTimer(&window);
        QObject::connect(wait, &QTimer::timeout, &window, [&, wait, lessonStep] {
            // The step is reached, its engine has stopped, and the window shows that time (the
            // screenshot draws every pane, plots included, at it before taking the picture).
            if (window.lessonPanel()->current() != lessonStep || window.runner()->busy())
                return;
            window.frame();
            if (window.shownTimeNs() != window.runner()->simulatedNs())
                return;
            wait->stop();
            const QString err = window.saveScreenshot(parser.value(shot));
            if (!err.isEmpty())
                say(QStringLiteral("--screenshot: ") + err);
            QApplication::exit(err.isEmpty() ? 0 : 1);
        });
        wait->start(50);
        return QApplication::exec();
    }
    // Waiting for a simulated time means running until then: --after and --quit-after imply --run.
    // Such a run pauses exactly at that time, and plays as fast as it can unless --speed says otherwise.
    const bool wantsOutput = parser.isSet(shot) || parser.isSet(chart);
    const bool waits = wantsOutput || quitTime->ns() >= 0;
    const auto pauseAt = [&](bool outputDone) {
        const std::int64_t end = window.runner()->scenario().duration.ns();
        const std::int64_t t = wantsOutput && !outputDone && afterTime->ns() >= 0 ? afterTime->ns() : quitTime->ns();
        window.setPauseAt(SimTime(t >= 0 ? std::min(t, end) : -1));
    };
    if (waits) {
        if (!parser.isSet(speed))
            window.setSpeed(0);
        pauseAt(false);
    }
    if (parser.isSet(run) || waits)
        window.runOrPause(); // every run session
    if (QCoreApplication::arguments().size() == 1) // a bare start: never a still first window
        window.greet();
    if (!waits)
        return QApplication::exec();

    // Screenshots, exports and quitting happen once the run has reached the asked simulated time,
    // or has stopped before it (the end of the scenario, or a stall that paused it).
    struct Pending {
        bool outputDone = false;
        int backTo = 0; // --back-to: 1 asked, 2 done
        int exitCode = 0;
        int stoppedPolls = 0; // a stop is acted on at the second poll, once its signals and last frame are in
    };
    auto pending = std::make_shared<Pending>();
    auto* poll = new QTimer(&window);
    QObject::connect(poll, &QTimer::timeout, &window, [&, poll, pending] {
        pending->stoppedPolls = window.runner()->isRunning() ? 0 : pending->stoppedPolls + 1;
        const bool stopped = pending->stoppedPolls >= 2;
        if (stopped)
            window.frame();
        const std::int64_t now = window.shownTimeNs();
        const std::int64_t end = window.runner()->scenario().duration.ns();
        if (wantsOutput && !pending->outputDone && backTime->ns() >= 0 && pending->backTo == 0
            && (now >= afterTime->ns() || stopped)) {
            pending->backTo = 1;
            QObject::connect(&window, &MainWindow::sessionOpened, &window, [pending](const QString& error) {
                pending->backTo = 2;
                if (!error.isEmpty()) {
                    say(QStringLiteral("--back-to: ") + error);
                    pending->exitCode = 1;
                }
            });
            window.seekTo(backTime->ns());
            return;
        }
        if (pending->backTo == 1)
            return; // the move is under way
        if (wantsOutput && !pending->outputDone && (now >= afterTime->ns() || stopped || pending->backTo == 2)) {
            pending->outputDone = true;
            if (!stopped) // a stop has pulled its last frame already
                window.frame();
            if (parser.isSet(inspect))
                if (const QString err = window.inspect(parser.value(inspect)); !err.isEmpty()) {
                    say(QStringLiteral("--inspect: ") + err);
                    pending->exitCode = 2;
                }
            if (parser.isSet(chart))
                if (const QString err = window.exportChart(parser.value(chart), chartIndex, exportSize);
                    !err.isEmpty()) {
                    say(QStringLiteral("--export-chart: ") + err);
                    pending->exitCode = 1;
                }
            if (parser.isSet(shot))
                if (const QString err = window.saveScreenshot(parser.value(shot)); !err.isEmpty()) {
                    say(QStringLiteral("--screenshot: ") + err);
                    pending->exitCode = 1;
                }
        }
        const bool quitReached = quitTime->ns() < 0 || now >= std::min(quitTime->ns(), end);
        if (pending->outputDone && !quitReached && stopped && !window.stalled() && now >= afterTime->ns()) {
            pauseAt(true); // paused for the output: on to --quit-after
            pending->stoppedPolls = 0;
            window.runOrPause();
            return;
        }
        if ((!wantsOutput || pending->outputDone) && (quitReached || stopped)) {
            const std::int64_t target = std::min(std::max(afterTime->ns(), quitTime->ns()), end);
            if (now < target && pending->backTo != 2) // say so rather than quit early in silence
                std::fprintf(stderr, "blkmqlab: the run stopped at %s, before %s: %s\n",
                    formatDuration(SimTime(now)).c_str(), formatDuration(SimTime(target)).c_str(),
                    window.stalled() ? "a stall paused it" : "it was paused");
            poll->stop();
            QApplication::exit(pending->exitCode);
        }
    });
    poll->start(50);
    return QApplication::exec();
}
