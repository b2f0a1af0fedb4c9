// Session files: a run with live commands, written and read back, replays to the same events,
// fingerprint and summary, to its own moment and to any earlier time or event; bad files are
// refused with one line that names the field.
#include "engine/Engine.h"
#include "engine/StopCondition.h"
#include "lesson/Lesson.h"
#include "scenario/ScenarioLoader.h"
#include "session/Session.h"

#include "HostileJson.h"

#include <QtTest>

#include <memory>

using namespace blkmq;

namespace {

// A stop after `n` events: where a test posts its live command.
class AfterEvents : public StopCondition {
public:
    explicit AfterEvents(std::uint64_t n)
        : m_n(n)
    {
    }
    bool reached(const Engine& e) const override { return e.events() >= m_n; }
    std::string describe() const override { return "events"; }

private:
    std::uint64_t m_n;
};

// The live run: `switchAt` events, then a patch switch, then on to `to`.
std::unique_ptr<Engine> liveRun(const Scenario& s, std::uint64_t switchAt, SimTime to)
{
    auto e = std::make_unique<Engine>(s);
    AfterEvents stop(switchAt);
    if (e->runUntil(to, stop) || e->events() == switchAt) {
        e->inbox().post({ "kernel.patches.complete-llist", "true" });
        e->applyPendingCommands();
    }
    e->runUntil(to);
    return e;
}

// The summary without what the host's clock measured (engine.wall_s and the speeds from it).
std::string simulated(const Engine& e)
{
    nlohmann::json j = e.summary();
    for (const char* k : { "wall_s", "events_per_s", "realtime_factor" })
        j["engine"].erase(k);
    return j.dump();
}

// A session of the default scenario with a live change, a bookmark and a lesson step.
Session fullSession()
{
    auto s = ScenarioLoader::fromPreset("default", { "duration=\"1ms\"" });
    const auto live = liveRun(*s, 100, usec(300));
    Session full = Session::of(*live, s->sourceJson);
    full.bookmarks = { { 1000, "ok" } };
    full.lesson = "shared-hctx-stall";
    full.lessonStep = 1;
    return full;
}

Session roundTrip(const Session& s)
{
    auto back = Session::fromText(s.toText(), "test");
    if (!back)
        qFatal("session does not read back: %s", back.error().c_str());
    return *back;
}

} // namespace

class TestSession : public QObject {
    Q_OBJECT
private slots:
    // Every preset with a live patch switch: the session file replays to the same moment, and to
    // earlier times and events as a fresh run gets there, the switch included where it came first.
    void everyPresetReplaysToAnyMoment_data()
    {
        QTest::addColumn<QString>("preset");
        for (const auto& p : ScenarioLoader::presets())
            QTest::newRow(p.name.c_str()) << QString::fromStdString(p.name);
    }
    void everyPresetReplaysToAnyMoment()
    {
        QFETCH(QString, preset);
        auto s = ScenarioLoader::fromPreset(preset.toStdString(), { "duration=\"600us\"" });
        QVERIFY2(s.ok(), s.ok() ? "" : s.error().c_str());
        const SimTime end = usec(500), earlier = usec(200);
        const std::uint64_t switchAt = 150;
        const auto live = liveRun(*s, switchAt, end);
        const Session session = roundTrip(Session::of(*live, s->sourceJson));
        QCOMPARE(session.commands.size(), std::size_t(live->events() >= switchAt ? 1 : 0));

        auto replayed = session.replay();
        QVERIFY2(replayed.ok(), replayed.ok() ? "" : replayed.error().c_str());
        QCOMPARE((*replayed)->fingerprint(), live->fingerprint());
        QCOMPARE((*replayed)->events(), live->events());
        QCOMPARE((*replayed)->now(), live->now());
        QCOMPARE(simulated(**replayed), simulated(*live));

        // An earlier time: as a fresh run with the same switch at the same event gets there.
        auto back = session.replayTo(earlier);
        QVERIFY2(back.ok(), back.ok() ? "" : back.error().c_str());
        const auto fresh = liveRun(*s, switchAt, earlier);
        QCOMPARE((*back)->fingerprint(), fresh->fingerprint());
        QCOMPARE(simulated(**back), simulated(*fresh));

        // From event 100, before the switch, on with the session's commands to a stop condition: the
        // switch is made again at its event, and the run is the session's; a bound on the events
        // ends it there.
        if (live->events() > switchAt + 50) {
            struct AtEvents : StopCondition {
                std::uint64_t n;
                explicit AtEvents(std::uint64_t events)
                    : n(events)
                {
                }
                bool reached(const Engine& e) const override { return e.events() >= n; }
                std::string describe() const override { return "events"; }
            } goal(switchAt + 50), never(UINT64_MAX);
            auto from = session.replayToEvent(100);
            QVERIFY(from.ok());
            std::string error;
            QVERIFY(session.replayUntil(**from, goal, 1000000, error));
            QVERIFY(error.empty());
            QCOMPARE((*from)->events(), switchAt + 50);
            QCOMPARE((*from)->appliedCommands().size(), std::size_t(1));
            QCOMPARE((*from)->fingerprint(), (*session.replayToEvent(switchAt + 50))->fingerprint());
            auto bounded = session.replayToEvent(100);
            QVERIFY(!session.replayUntil(**bounded, never, 10, error));
            QCOMPARE((*bounded)->events(), std::uint64_t(110));
        }

        // Event 0, and one event back from the session's moment.
        auto zero = session.replayToEvent(0);
        QVERIFY(zero.ok());
        QCOMPARE((*zero)->events(), std::uint64_t(0));
        QCOMPARE((*zero)->fingerprint(), Engine(*s).fingerprint());
        if (live->events() < 2)
            return;
        auto oneBack = session.replayToEvent(live->events() - 1);
        QVERIFY(oneBack.ok());
        QCOMPARE((*oneBack)->events(), live->events() - 1);
        Engine stepped(*s);
        while (stepped.events() < live->events() - 1) {
            if (stepped.events() == switchAt) {
                stepped.inbox().post({ "kernel.patches.complete-llist", "true" });
                stepped.applyPendingCommands();
            }
            QVERIFY(stepped.step());
        }
        if (stepped.events() == switchAt) {
            stepped.inbox().post({ "kernel.patches.complete-llist", "true" });
            stepped.applyPendingCommands();
        }
        QCOMPARE((*oneBack)->fingerprint(), stepped.fingerprint());
        QCOMPARE(simulated(**oneBack), simulated(stepped));
    }

    // The window pauses with its clock past the last event (it runs to times, not events): a patch
    // switched there has its marker at the clock's time. The session keeps that time, and the replay
    // applies it there, so it comes back to the same fingerprint.
    void aSwitchWhilePausedBetweenEventsIsReplayed()
    {
        auto s = ScenarioLoader::fromPreset("default", { "duration=\"1ms\"" });
        QVERIFY(s.ok());
        Engine live(*s);
        live.runUntil(usec(300) + SimTime(7));
        const std::uint64_t before = live.events();
        live.inbox().post({ "kernel.patches.complete-llist", "true" });
        live.applyPendingCommands();
        live.runUntil(usec(600));
        QCOMPARE(live.markers().back().t_ns, (usec(300) + SimTime(7)).ns());
        const Session session = roundTrip(Session::of(live, s->sourceJson));
        QCOMPARE(session.commands.front().event, before);
        QCOMPARE(session.commands.front().t_ns, (usec(300) + SimTime(7)).ns());
        auto replayed = session.replay();
        QVERIFY2(replayed.ok(), replayed.ok() ? "" : replayed.error().c_str());
        QCOMPARE((*replayed)->fingerprint(), live.fingerprint());
        QCOMPARE((*replayed)->markers().back().t_ns, live.markers().back().t_ns);
        // To a time before the switch's clock time, though after its event: not applied.
        auto early = session.replayTo(usec(300));
        QVERIFY(early.ok());
        QCOMPARE((*early)->appliedCommands().size(), std::size_t(0));

        // A file whose switch time lies after its moment is refused, naming the field.
        nlohmann::json doc = nlohmann::json::parse(session.toText());
        doc["commands"][0]["time_ns"] = doc["at"]["time_ns"].get<std::int64_t>() + 1;
        const auto bad = Session::fromText(doc.dump(), "t");
        QVERIFY(!bad.ok());
        QVERIFY2(bad.error().find("commands[0].time_ns") != std::string::npos, bad.error().c_str());
    }

    // A lesson's live switch (where-requests-complete step 2 turns on rq_affinity=1 while it runs) is
    // a command of the session; the session replays to the step's moment.
    void aLessonStepIsReplayed()
    {
        auto lesson = Lesson::load("where-requests-complete");
        QVERIFY(lesson.ok());
        auto s = lesson->scenarioOf(0);
        QVERIFY(s.ok());
        Engine e(*s);
        QVERIFY(lesson->play(e, 0).error.empty());
        QVERIFY(lesson->play(e, 1).error.empty());
        const Session session = roundTrip(Session::of(e, s->sourceJson));
        QCOMPARE(session.commands.size(), std::size_t(1));
        QCOMPARE(session.commands[0].command.path, std::string("devices.0.rq_affinity"));
        auto replayed = session.replay();
        QVERIFY2(replayed.ok(), replayed.ok() ? "" : replayed.error().c_str());
        QCOMPARE((*replayed)->fingerprint(), e.fingerprint());
        QCOMPARE((*replayed)->counters().ipis, e.counters().ipis);
    }

    // Bookmarks, the lesson and the view come back as written.
    void everythingElseReadsBack()
    {
        auto s = ScenarioLoader::fromPreset("default", { "duration=\"1ms\"" });
        Engine e(*s);
        e.runUntil(usec(100));
        Session session = Session::of(e, s->sourceJson);
        session.bookmarks = { { 50000, "the first IPI" }, { 90000, "two lines\nof note" } };
        session.lesson = "shared-hctx-stall";
        session.lessonStep = 4;
        session.view = { { "plots_hidden", { 2, 3 } } };
        const Session back = roundTrip(session);
        QCOMPARE(back.bookmarks.size(), std::size_t(2));
        QCOMPARE(back.bookmarks[1].note, std::string("two lines\nof note"));
        QCOMPARE(back.bookmarks[0].t_ns, std::int64_t(50000));
        QCOMPARE(back.lesson, session.lesson);
        QCOMPARE(back.lessonStep, 4);
        QCOMPARE(back.view.dump(), session.view.dump());
        QCOMPARE(back.toText(), session.toText());
    }

    // Each bad file is refused with one line that names the field; a replay that no longer matches
    // names the command after which it diverged. Never a crash, and nothing half-loaded.
    void badSessionsAreRefused_data()
    {
        QTest::addColumn<QString>("edit"); // path=JSON value applied to a good session, or a whole text
        QTest::addColumn<QString>("message");
        QTest::newRow("not JSON") << u"TEXT:{\"format\": 1,"_qs << u"not valid JSON"_qs;
        QTest::newRow("an array") << u"TEXT:[1]"_qs << u"must be an object"_qs;
        QTest::newRow("newer format") << u"/format=2"_qs << u"format: 2 is newer than"_qs;
        QTest::newRow("no format") << u"/format=null"_qs << u"format: missing"_qs;
        QTest::newRow("unknown field") << u"/colour=\"red\""_qs << u"colour: unknown field"_qs;
        QTest::newRow("bad scenario") << u"/scenario/devices/0/submit_queues=0"_qs << u"scenario: devices"_qs;
        QTest::newRow("unknown switch") << u"/commands/0/set=\"kernel.patches.no-such=true\""_qs
                                        << u"commands[0].set:"_qs;
        QTest::newRow("not a live path") << u"/commands/0/set=\"topology=1n:1p:1c:1t\""_qs
                                         << u"commands[0].set: 'topology=1n:1p:1c:1t' is not path=value"_qs;
        QTest::newRow("no value") << u"/commands/0/set=\"kernel.threadirqs\""_qs << u"commands[0].set"_qs;
        QTest::newRow("negative event") << u"/commands/0/event=-1"_qs << u"commands[0].event"_qs;
        QTest::newRow("event past at") << u"/commands/0/event=999999999"_qs << u"commands[0].event: after at.events"_qs;
        QTest::newRow("control character") << u"/bookmarks/0/note=\"a\\u001bb\""_qs << u"control character"_qs;
        QTest::newRow("lesson step") << u"/lesson/step=-5"_qs << u"lesson.step"_qs;
        QTest::newRow("time past the end") << u"/at/time_ns=99999999999"_qs << u"at.time_ns: past"_qs;
        QTest::newRow("diverged fingerprint")
            << u"/at/fingerprint=\"0000000000000000\""_qs << u"the replay diverged after commands[0]"_qs;
        QTest::newRow("diverged events") << u"/at/events=1000000"_qs << u"the replay diverged after commands[0]"_qs;
        QTest::newRow("a seed changed") << u"/scenario/seed=77"_qs << u"the replay diverged"_qs;
        QTest::newRow("command time") << u"/commands/0/time_ns=-4"_qs << u"commands[0].time_ns"_qs;
        QTest::newRow("inspect what") << u"/view/inspect=\"gpu:1\""_qs << u"view.inspect"_qs;
        QTest::newRow("inspect number") << u"/view/inspect=\"cpu:99999999\""_qs << u"view.inspect"_qs;
        QTest::newRow("zoom") << u"/view/zoom=1e300"_qs << u"view.zoom"_qs;
        QTest::newRow("centre") << u"/view/center=[1]"_qs << u"view.center"_qs;
        QTest::newRow("centre far") << u"/view/center=[1, 1e30]"_qs << u"view.center"_qs;
        QTest::newRow("compare not kernel") << u"/view/compare=[\"seed=2\"]"_qs << u"view.compare"_qs;
        QTest::newRow("compare no value") << u"/view/compare=[\"kernel.threadirqs\"]"_qs << u"view.compare"_qs;
        QTest::newRow("compare escape") << u"/view/compare=[\"kernel.x=\\u001b[2J\"]"_qs << u"view.compare"_qs;
    }
    void badSessionsAreRefused()
    {
        QFETCH(QString, edit);
        QFETCH(QString, message);
        Session good = fullSession();
        std::string text;
        if (edit.startsWith(u"TEXT:"_qs)) {
            text = edit.mid(5).toStdString();
        } else {
            nlohmann::json doc = nlohmann::json::parse(good.toText());
            const std::string e = edit.toStdString();
            const auto eq = e.find('=');
            doc[nlohmann::json::json_pointer(e.substr(0, eq))] = nlohmann::json::parse(e.substr(eq + 1));
            text = doc.dump();
        }
        auto read = Session::fromText(text, "s.blkmqlab");
        std::string error = read.ok() ? std::string() : read.error();
        if (read.ok()) {
            auto replayed = read->replay();
            QVERIFY2(!replayed.ok(), "read and replayed");
            error = replayed.error();
        }
        QVERIFY2(error.find(message.toStdString()) != std::string::npos, error.c_str());
        QVERIFY2(error.find('\n') == std::string::npos, error.c_str());
    }

    // Every field of the session table fed the hostile values of JSON: each is refused with one line
    // that names the field, or accepted only where its kind takes it, and what is accepted replays
    // or is refused by the replay, never a crash. The full document gives every field a value.
    void everyFieldRefusesHostileValues()
    {
        Session full = fullSession();
        full.view = { { "plots_hidden", { 1 } }, { "plot_columns", 2 }, { "inspect", "cpu:1" }, { "zoom", 1.5 },
            { "center", { 10.0, 20.0 } }, { "compare", { "kernel.patches.complete-llist=true" } } };
        const nlohmann::json base = nlohmann::json::parse(full.toText());
        QVERIFY(Session::fromJson(base, "full").ok());
        int tried = 0;
        const std::string wrong = test::everyFieldMeetsHostileValues(
            base, Session::fields().rows,
            [](const nlohmann::json& doc) {
                const auto r = Session::fromJson(doc, "s.blkmqlab");
                if (!r.ok())
                    return r.error();
                const auto replayed = r->replay(); // what is read replays, or the replay refuses in one line
                return replayed.ok() || replayed.error().find('\n') == std::string::npos
                    ? std::string()
                    : "accepted: the replay's refusal is not one line: " + replayed.error();
            },
            tried);
        QVERIFY2(wrong.empty(), wrong.c_str());
        QVERIFY(tried >= 18 * static_cast<int>(test::hostileJson().size()));
    }
};

QTEST_GUILESS_MAIN(TestSession)
#include "tst_session.moc"
