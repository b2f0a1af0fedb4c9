#include "TestUtil.h"

#include "engine/Checkpoints.h"
#include "session/Session.h"

#include <functional>

using namespace blkmq;
using namespace blkmq::test;

namespace {

// The summary without what the host's clock measured.
std::string simulated(const Engine& e)
{
    nlohmann::json j = e.summary();
    j.erase("engine");
    return j.dump();
}

// A run of the default scenario whose completion and softirq switches change while it runs.
void liveChanges(Engine& e, SimTime until)
{
    const std::vector<std::pair<SimTime, Command>> script = {
        { usec(300), { "kernel.patches.complete-llist", "true" } },
        { usec(700), { "kernel.threadirqs", "true" } },
        { usec(1100), { "costs.sched_granularity_ns", "1000" } },
        { usec(1500), { "kernel.patches.complete-llist", "false" } },
    };
    for (const auto& [at, command] : script) {
        if (at <= e.now())
            continue;
        if (at > until)
            break;
        e.runUntil(at);
        e.inbox().post(command);
        e.applyPendingCommands();
    }
    e.runUntil(until);
}

} // namespace

class TestCheckpoint : public QObject {
    Q_OBJECT
private slots:
    // A copy taken anywhere (between two events, in the middle of a restart walk or a multi-step
    // tag allocation) runs on to the fingerprint and summary of a run that never stopped, after
    // the engine it was copied from is gone: it shares nothing with it.
    void cloneRunsOnAsTheRunWould()
    {
        for (const auto& p : ScenarioLoader::presets()) {
            const Scenario s = load(p.name, { "duration=\"2ms\"" });
            Engine whole(s);
            whole.run();
            for (const std::uint64_t at : { std::uint64_t(1), std::uint64_t(997), whole.events() / 2 }) {
                auto original = std::make_unique<Engine>(s);
                for (std::uint64_t i = 0; i < at && original->step(); ++i) { }
                auto copy = original->clone();
                QCOMPARE(copy->events(), original->events());
                QCOMPARE(copy->fingerprint(), original->fingerprint());
                original->run();
                QCOMPARE(original->fingerprint(), whole.fingerprint());
                original.reset();
                copy->run();
                QVERIFY2(
                    copy->fingerprint() == whole.fingerprint(), (p.name + " copied at " + std::to_string(at)).c_str());
                QCOMPARE(simulated(*copy), simulated(whole));
            }
        }
    }

    // Live commands: the copy has taken those before it, and goes on like the original with the rest.
    void cloneKeepsLiveCommands()
    {
        const Scenario s = load("default", { "duration=\"2ms\"" });
        Engine whole(s);
        liveChanges(whole, s.duration);
        Engine half(s);
        liveChanges(half, usec(900));
        auto copy = half.clone();
        QCOMPARE(copy->appliedCommands().size(), std::size_t(2));
        QCOMPARE(copy->scenario().kernel.threadirqs, true);
        liveChanges(*copy, s.duration);
        QCOMPARE(copy->fingerprint(), whole.fingerprint());
        QCOMPARE(simulated(*copy), simulated(whole));
    }

    // Restoring a run that went further puts it back; it keeps its observers, and runs on as before.
    void restoreGoesBack()
    {
        const Scenario s = load("shared-hctx-stall");
        Engine whole(s);
        whole.run();
        Engine e(s);
        TraceRing& ring = e.enableTrace(1 << 12);
        e.runUntil(usec(5));
        const auto early = e.clone();
        const std::string earlyPrint = e.fingerprint();
        e.run();
        QVERIFY(e.stallDetected());
        e.restore(*early);
        QCOMPARE(e.fingerprint(), earlyPrint);
        QCOMPARE(e.now(), usec(5));
        QVERIFY(!e.stallDetected());
        const std::uint64_t before = ring.written();
        e.run();
        QVERIFY(ring.written() > before); // the trace ring still watches
        QCOMPARE(e.fingerprint(), whole.fingerprint());
        QCOMPARE(e.stallDetected(), true);
        QCOMPARE(e.firstStall(), whole.firstStall());
        QCOMPARE(simulated(e), simulated(whole));
    }

    // The store keeps a copy per spacing, never more than its budget (beyond the first two), the
    // first always; the older half thins first, and each lookup finds the latest at or before.
    void storeThinsOlderFirst()
    {
        const Scenario s = load("default", { "duration=\"20ms\"" });
        Engine e(s);
        Checkpoints all;
        while (!e.finished()) {
            e.runFor(usec(50));
            all.offer(e);
        }
        const auto kept = all.eventsKept();
        QVERIFY(kept.size() >= 4);
        QVERIFY(kept.front() > 0); // the first offer, after 50 µs, is kept
        for (std::size_t i = 1; i < kept.size(); ++i)
            QVERIFY(kept[i] - kept[i - 1] >= Checkpoints::kMinSpacing);

        Engine f(s);
        const std::size_t one = f.stateBytes();
        Checkpoints small(one * 4);
        while (!f.finished()) {
            f.runFor(usec(50));
            small.offer(f);
            QVERIFY(small.size() <= 2 || small.bytes() <= small.budget());
        }
        const auto thin = small.eventsKept();
        QCOMPARE(thin.front(), kept.front());
        QCOMPARE(thin.back(), kept.back()); // the newest stays
        QVERIFY(thin.size() < kept.size());
        QCOMPARE(all.atEvent(kept[2] + 1)->events(), kept[2]);
        QCOMPARE(all.atEvent(kept[2])->events(), kept[2]);
        QCOMPARE(all.atEvent(kept.front() - 1), nullptr);
        QCOMPARE(all.atTime(e.now())->events(), kept.back());
        all.dropAfter(kept[1]);
        QCOMPARE(all.size(), std::size_t(2));
    }

    // Every preset, with a patch switch on the way, played in 50 µs stretches with the store offered
    // after each: going back from the checkpoints to event 0, to several times and to one event back
    // gives the fingerprint and summary a replay from t = 0 gives.
    void everyPresetGoesBackFromCheckpoints()
    {
        for (const auto& p : ScenarioLoader::presets()) {
            const Scenario s = load(p.name, { "duration=\"3ms\"" });
            Engine live(s);
            Checkpoints kept;
            while (!live.finished()) {
                live.runFor(usec(50));
                if (live.now() == usec(1000)) {
                    live.inbox().post({ "kernel.patches.complete-llist", "true" });
                    live.applyPendingCommands();
                }
                kept.offer(live);
            }
            const Session session = Session::of(live, s.sourceJson);
            const auto both = [&](Session::To to, SimTime t, std::uint64_t n) {
                Engine fromCopies(s), fromStart(s);
                QCOMPARE(session.replayInto(fromCopies, to, t, n, &kept), std::string());
                QCOMPARE(session.replayInto(fromStart, to, t, n, nullptr), std::string());
                QVERIFY2(fromCopies.fingerprint() == fromStart.fingerprint(), p.name.c_str());
                QCOMPARE(fromCopies.events(), fromStart.events());
                QCOMPARE(simulated(fromCopies), simulated(fromStart));
            };
            both(Session::To::Event, {}, 0);
            for (const SimTime t : { usec(700), usec(1000), usec(1900), usec(2950) })
                both(Session::To::Time, t, 0);
            if (session.events > 0)
                both(Session::To::Event, {}, session.events - 1);
        }
    }

    // A session replayed from the latest checkpoint before its goal is the run replayed from t = 0:
    // one event back, a time, and the moment itself.
    void sessionReplaysFromCheckpoints()
    {
        const Scenario s = load("default", { "duration=\"12ms\"" });
        Engine live(s);
        Checkpoints kept;
        const std::function<void()> offer = [&] { kept.offer(live); };
        while (!live.finished()) {
            liveChanges(live, std::min(s.duration, live.now() + usec(50)));
            offer();
        }
        const Session session = Session::of(live, s.sourceJson);
        QVERIFY(kept.size() >= 3);
        const auto replay = [&](Session::To to, SimTime t, std::uint64_t n, const Checkpoints* from) {
            Engine e(s);
            const std::string error = session.replayInto(e, to, t, n, from);
            if (!error.empty())
                qFatal("replay: %s", error.c_str());
            return std::make_pair(e.fingerprint(), e.events());
        };
        const std::uint64_t back = session.events - 1;
        QCOMPARE(replay(Session::To::Event, {}, back, &kept), replay(Session::To::Event, {}, back, nullptr));
        QCOMPARE(replay(Session::To::Event, {}, back, &kept).second, back);
        QCOMPARE(replay(Session::To::Time, usec(1234), 0, &kept), replay(Session::To::Time, usec(1234), 0, nullptr));
        QCOMPARE(replay(Session::To::Moment, {}, 0, &kept).first, session.fingerprint);

        // It starts where the checkpoint stood (its trace sees only what came after), or `history`
        // events earlier.
        const auto traced = [&](const Checkpoints* from, std::uint64_t history) {
            Engine e(s);
            TraceRing& ring = e.enableTrace(1 << 10);
            if (const std::string error = session.replayInto(e, Session::To::Event, {}, back, from, history);
                !error.empty())
                qFatal("replay: %s", error.c_str());
            return std::make_pair(e.fingerprint(), ring.written());
        };
        const auto fromStart = traced(nullptr, 0);
        const auto fromLatest = traced(&kept, 0);
        const auto fromEarlier = traced(&kept, 50000);
        QCOMPARE(fromLatest.first, fromStart.first);
        QCOMPARE(fromEarlier.first, fromStart.first);
        QVERIFY(fromLatest.second < fromEarlier.second);
        QVERIFY(fromEarlier.second < fromStart.second);

        // Checkpoints of another run (other commands) are not used: the replay is still this run.
        Engine other(s);
        Checkpoints foreign;
        other.inbox().post({ "kernel.threadirqs", "true" });
        other.applyPendingCommands();
        while (!other.finished()) {
            other.runFor(usec(50));
            foreign.offer(other);
        }
        QCOMPARE(replay(Session::To::Moment, {}, 0, &foreign).first, session.fingerprint);
        // Nor those of another scenario with the same (no) commands.
        Engine plain(s);
        plain.runUntil(msec(10));
        const Session quiet = Session::of(plain, s.sourceJson);
        Engine seed2(load("default", { "duration=\"12ms\"", "seed=2" }));
        Checkpoints otherSeed;
        while (!seed2.finished()) {
            seed2.runFor(usec(50));
            otherSeed.offer(seed2);
        }
        Engine e(s);
        QVERIFY(otherSeed.atEvent(90000) != nullptr);
        QCOMPARE(quiet.replayInto(e, Session::To::Event, {}, 90000, &otherSeed), std::string());
        Engine plainFromStart(s);
        QCOMPARE(quiet.replayInto(plainFromStart, Session::To::Event, {}, 90000, nullptr), std::string());
        QCOMPARE(e.fingerprint(), plainFromStart.fingerprint());
    }
};

QTEST_GUILESS_MAIN(TestCheckpoint)
#include "tst_checkpoint.moc"
