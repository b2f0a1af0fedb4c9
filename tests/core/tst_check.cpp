// The model checker (check/ModelChecker.h): choice points, the exhaustive search, the shortest
// counterexample and its replay.
#include "TestUtil.h"

#include "block/BlockLayer.h"
#include "check/ModelChecker.h"
#include "session/Session.h"

#include <QtTest>

#include <functional>
#include <map>
#include <tuple>

using namespace blkmq;
using namespace blkmq::test;

namespace {

CheckResult check(
    const std::string& preset, CheckProperty p, const std::vector<std::string>& sets = {}, CheckBounds bounds = {})
{
    return ModelChecker(load(preset, sets), p, bounds).run();
}

// A second search, written apart from ModelChecker's: breadth-first over choice prefixes, each
// node re-run from t = 0. True when some run shows a violation of `p` before it makes more than
// `within` choices (the first violation after at most `within` choices were made).
std::string findPropertyName(CheckProperty p)
{
    for (const PropertyInfo& i : checkProperties())
        if (i.id == p)
            return i.name;
    return "?";
}

bool violatedWithin(const Scenario& base, CheckProperty p, std::size_t within)
{
    std::vector<std::vector<std::uint8_t>> level { {} };
    for (std::size_t depth = 0; depth <= within && !level.empty(); ++depth) {
        std::vector<std::vector<std::uint8_t>> next;
        for (const auto& prefix : level) {
            Scenario sc = base;
            sc.choices.on = true;
            sc.choices.taken = prefix;
            Engine e(sc);
            bool violated = false;
            while (e.choices().made.size() <= depth && e.step())
                if (e.choices().made.size() <= within && !ModelChecker::violation(e, p, false).empty()) {
                    violated = true;
                    break;
                }
            if (!violated && e.choices().made.size() <= depth) {
                e.run();
                violated = !ModelChecker::violation(e, p, true).empty();
            }
            if (violated)
                return true;
            if (e.choices().made.size() > depth) // the node has children: one per option of its next choice
                for (int o = 0; o < e.choices().made[depth].options; ++o) {
                    auto child = prefix;
                    child.push_back(static_cast<std::uint8_t>(o));
                    next.push_back(child);
                }
        }
        level = std::move(next);
    }
    return false;
}

} // namespace

class TestCheck : public QObject {
    Q_OBJECT
private slots:
    // Without "choices" nothing draws a choice: the presets' fingerprints are tst_determinism's table.
    // With it, the run takes its script and records what it took.
    void choicesFollowTheScript()
    {
        Engine plain(load("check-shared-hctx"));
        plain.run();
        QVERIFY(plain.choices().on);
        QVERIFY(!plain.choices().made.empty());
        for (const Choice& c : plain.choices().made)
            QCOMPARE(int(c.taken), 0);
        // Another option at the first device latency: the same choices before it, that one taken.
        std::size_t at = 0;
        while (plain.choices().made[at].kind != ChoiceKind::Latency)
            ++at;
        std::vector<std::string> sets;
        std::string taken;
        for (std::size_t i = 0; i <= at; ++i)
            taken += (i ? "," : "") + std::string(i == at ? "1" : "0");
        Engine other(load("check-shared-hctx", { "choices.taken=[" + taken + "]" }));
        other.run();
        QCOMPARE(other.choices().made[at].taken, std::uint8_t(1));
        QCOMPARE(other.choices().made[at].value, std::int64_t(35000)); // uniform 5..35 us: the other extreme
        QCOMPARE(plain.choices().made[at].value, std::int64_t(5000));
        QVERIFY(other.fingerprint() != plain.fingerprint());
        // The same script twice is the same run.
        Engine again(load("check-shared-hctx", { "choices.taken=[" + taken + "]" }));
        again.run();
        QCOMPARE(again.fingerprint(), other.fingerprint());
        // An option the choice point does not have is noted, and option 0 taken.
        Engine off(load("check-shared-hctx", { "choices.taken=[9]" }));
        off.run();
        QCOMPARE(off.choices().offScript, 0LL);
    }

    // Seed 002: rr-shared-queue-counter stalls, and the counterexample found is the shortest.
    void sharedQueueCounterStallsMinimally()
    {
        const CheckResult r = check("check-shared-hctx", CheckProperty::NoStall);
        QCOMPARE(r.verdict, CheckResult::Verdict::Violated);
        QVERIFY(!r.depthCut);
        QVERIFY(r.violation.find("shared_hctx_restart was 0") != std::string::npos);
        // The seed's shape: on each queue one request bypasses the scheduler and one goes into it.
        int bypassed = 0, scheduled = 0;
        for (const Choice& c : r.choices)
            if (c.kind == ChoiceKind::Bypass)
                (c.value ? bypassed : scheduled) += 1;
        QCOMPARE(bypassed, 2);
        QCOMPARE(scheduled, 2);
        // Minimal: the independent breadth-first search finds no violation with one choice fewer,
        // and finds one with as many.
        const Scenario base = load("check-shared-hctx");
        // Three requests are not enough on any path: the seed's steps need four (A to D).
        for (const char* fewer : { "workload.jobs.a.number_ios=1", "workload.jobs.b.number_ios=1" })
            QCOMPARE(
                check("check-shared-hctx", CheckProperty::NoStall, { fewer }).verdict, CheckResult::Verdict::Holds);
        QVERIFY(!violatedWithin(base, CheckProperty::NoStall, r.choices.size() - 1));
        QVERIFY(violatedWithin(base, CheckProperty::NoStall, r.choices.size()));
    }

    void otherRestartVariantsHold()
    {
        for (const char* v : { "own-hctx", "rr-shared", "rr-shared-tags-counter" }) {
            const CheckResult r
                = check("check-shared-hctx", CheckProperty::NoStall, { std::string("kernel.restart=\"") + v + "\"" });
            QVERIFY2(r.verdict == CheckResult::Verdict::Holds, (v + std::string(": ") + r.violation).c_str());
            QVERIFY(!r.depthCut);
            QVERIFY(r.distinct > 100); // two latencies, two ways through the scheduler, the orders
            QVERIFY(r.states >= r.runs);
            QVERIFY(r.deepest >= 8);
            // All four requests complete on every path, too.
            QCOMPARE(
                check("check-shared-hctx", CheckProperty::AllComplete, { std::string("kernel.restart=\"") + v + "\"" })
                    .verdict,
                CheckResult::Verdict::Holds);
        }
    }

    // Seed 004: the lock split loses a tag and misses a wake-up; v3.14 does neither.
    void lockSplitLosesATag()
    {
        const CheckResult lost = check("check-ida-lock-split", CheckProperty::NoTagLost);
        QCOMPARE(lost.verdict, CheckResult::Verdict::Violated);
        QVERIFY(lost.violation.find("lost") != std::string::npos);
        const CheckResult missed = check("check-ida-lock-split", CheckProperty::NoMissedWakeup);
        QCOMPARE(missed.verdict, CheckResult::Verdict::Violated);
        for (CheckProperty p : { CheckProperty::NoTagLost, CheckProperty::NoMissedWakeup }) {
            const CheckResult v314 = check("check-ida-lock-split", p, { "kernel.patches.ida-lock-split=false" });
            QCOMPARE(v314.verdict, CheckResult::Verdict::Holds);
            QVERIFY(v314.distinct > 1000);
        }
        // The lost tag is read from the free lists: the run the counterexample makes has one tag
        // that is neither in use nor findable.
        Engine e(*ScenarioLoader::fromText(lost.counterexampleJson, "cx"));
        while (e.events() < lost.violationEvents && e.step()) { }
        const TagAllocator& a = e.block().tags(0).alloc();
        QCOMPARE(a.depth() - a.inUse() - a.findableFree(), 1);
    }

    // Lock boundaries: with three I/Os per job no order of events and no device latency makes the
    // split lose a tag, but a CPU held between two steps of its steal_tags() lets the other CPU's
    // interrupt refill the cache the steal then copies over. v3.14's steal has no boundary inside
    // (it holds the pool lock with interrupts off): its search is the same and holds.
    void lockBoundariesReachTheSplitsRace()
    {
        const std::vector<std::string> three { "workload.jobs.randread.number_ios=3" };
        QCOMPARE(check("check-ida-lock-split", CheckProperty::NoTagLost, three).verdict, CheckResult::Verdict::Holds);
        CheckBounds points3;
        points3.latencyPoints = 3;
        QCOMPARE(check("check-ida-lock-split", CheckProperty::NoTagLost, three, points3).verdict,
            CheckResult::Verdict::Holds);
        CheckBounds held;
        held.lockBoundaries = true;
        const CheckResult lost = check("check-ida-lock-split", CheckProperty::NoTagLost, three, held);
        QCOMPARE(lost.verdict, CheckResult::Verdict::Violated);
        int holds = 0;
        for (const Choice& c : lost.choices)
            if (c.kind == ChoiceKind::Hold && c.taken == 1) {
                ++holds;
                QVERIFY(c.value >> 16 > 0); // held for some time
            }
        QVERIFY(holds >= 1);
        // The counterexample keeps its lock boundaries and replays to the lost tag.
        auto sc = ScenarioLoader::fromText(lost.counterexampleJson, "cx");
        QVERIFY(sc.ok());
        QVERIFY(sc->choices.lock_boundaries);
        Engine e(*sc);
        while (e.events() < lost.violationEvents && e.step()) { }
        QVERIFY(!ModelChecker::violation(e, CheckProperty::NoTagLost, false).empty());

        std::vector<std::string> v314 = three;
        v314.push_back("kernel.patches.ida-lock-split=false");
        const CheckResult plain = check("check-ida-lock-split", CheckProperty::NoTagLost, v314);
        const CheckResult withHolds = check("check-ida-lock-split", CheckProperty::NoTagLost, v314, held);
        QCOMPARE(withHolds.verdict, CheckResult::Verdict::Holds);
        QCOMPARE(withHolds.runs, plain.runs);
        // The restart walk's batches are boundaries too: Roman Pen's stall is still found, now with
        // a choice at the walk.
        const CheckResult stall = check("check-shared-hctx", CheckProperty::NoStall, {}, held);
        QCOMPARE(stall.verdict, CheckResult::Verdict::Violated);
        bool atWalk = false;
        for (const Choice& c : stall.choices)
            atWalk = atWalk || c.kind == ChoiceKind::Hold;
        QVERIFY(atWalk);
    }

    // Seed 000: every request completes once, where blk_mq_complete_request() sent it, on every
    // interleaving, with and without each patch of the series.
    void completionsLandWhereChosen()
    {
        for (const std::vector<std::string>& sets :
            std::vector<std::vector<std::string>> { {}, { "kernel.patches.complete-remote-softirq=true" },
                { "kernel.patches.complete-llist=true" }, { "kernel.threadirqs=true" },
                { "kernel.threadirqs=true", "kernel.patches.complete-no-remote-threaded=true" } }) {
            const CheckResult r = check("check-completion", CheckProperty::CompleteOnceWhereChosen, sets);
            QVERIFY2(r.verdict == CheckResult::Verdict::Holds, r.violation.c_str());
            QVERIFY(r.distinct > 100);
        }
        // The configuration does send completions away: half of them go back to CPU 1.
        Engine e(load("check-completion"));
        e.run();
        QCOMPARE(e.counters().remote * 2, e.counters().completed);
        // The watch sees a ->complete on a CPU not chosen, and a second one.
        Engine w(load("check-completion"));
        CompletionWatch watch(w);
        w.addTraceSink(&watch);
        while (watch.problem.empty() && w.step()) {
            for (int rq = 0; rq < static_cast<int>(w.block().poolSize()); ++rq) {
                const Request& q = w.block().request(rq);
                if (q.state != RqState::Complete || q.completeCpu < 0)
                    continue;
                const int chosen = q.redirected ? q.cpu : q.completeCpu;
                CompletionWatch probe(w);
                probe.record({ 0, rq, 0, static_cast<std::int16_t>(1 - chosen), TraceKind::Complete, -1 });
                QVERIFY(probe.problem.find("but blk_mq_complete_request()") != std::string::npos);
                CompletionWatch twice(w);
                const TraceRecord done { 0, rq, 0, static_cast<std::int16_t>(chosen), TraceKind::Complete, -1 };
                twice.record(done);
                QVERIFY(twice.problem.empty());
                twice.record(done);
                QVERIFY(twice.problem.find("a second time") != std::string::npos);
                return;
            }
        }
        QFAIL("no request was seen between blk_mq_complete_request() and ->complete");
    }

    // A counterexample replays, from its scenario and as a session, to the same violation.
    void counterexampleReplays()
    {
        const CheckResult r = check("check-shared-hctx", CheckProperty::NoStall);
        QCOMPARE(r.verdict, CheckResult::Verdict::Violated);
        auto sc = ScenarioLoader::fromText(r.counterexampleJson, "cx");
        QVERIFY2(sc.ok(), sc.ok() ? "" : sc.error().c_str());
        Engine e(*sc);
        e.run();
        QVERIFY(e.stallDetected());
        QCOMPARE(e.stallExplanation(), r.violation);
        QCOMPARE(e.eventsAtFirstStall(), r.violationEvents);
        // As a session at the violation: it replays to the same moment.
        Engine at(*sc);
        while (at.events() < r.violationEvents && at.step()) { }
        const Session s = Session::of(at, sc->sourceJson);
        auto back = Session::fromText(s.toText(), "cx.blkmqlab");
        QVERIFY(back.ok());
        auto replayed = back->replay();
        QVERIFY2(replayed.ok(), replayed.ok() ? "" : replayed.error().c_str());
        QVERIFY((*replayed)->stallDetected());
        QCOMPARE((*replayed)->fingerprint(), at.fingerprint());
    }

    // The table of states explored changes how much is run, never what is found: for every
    // configuration of the three threads, the same verdict and a counterexample of the same length
    // as running every path, in fewer runs.
    void stateTableKeepsEveryVerdict()
    {
        struct Case {
            const char* preset;
            CheckProperty property;
            std::vector<std::string> sets;
        };
        const std::vector<Case> cases {
            { "check-shared-hctx", CheckProperty::NoStall, {} },
            { "check-shared-hctx", CheckProperty::NoStall, { "kernel.restart=\"rr-shared\"" } },
            { "check-shared-hctx", CheckProperty::AllComplete, { "kernel.restart=\"own-hctx\"" } },
            { "check-ida-lock-split", CheckProperty::NoTagLost, {} },
            { "check-ida-lock-split", CheckProperty::NoMissedWakeup, {} },
            { "check-ida-lock-split", CheckProperty::NoTagLost, { "kernel.patches.ida-lock-split=false" } },
            { "check-completion", CheckProperty::CompleteOnceWhereChosen, {} },
            { "check-completion", CheckProperty::CompleteOnceWhereChosen, { "kernel.threadirqs=true" } },
        };
        CheckBounds everyPath;
        everyPath.maxStates = 0;
        std::uint64_t saved = 0;
        for (const Case& c : cases) {
            const CheckResult all = check(c.preset, c.property, c.sets, everyPath);
            const CheckResult table = check(c.preset, c.property, c.sets);
            const std::string what = std::string(c.preset) + " " + findPropertyName(c.property);
            QVERIFY2(all.verdict != CheckResult::Verdict::Unfinished, what.c_str());
            QVERIFY2(table.verdict == all.verdict, what.c_str());
            QVERIFY2(table.choices.size() == all.choices.size(), what.c_str());
            QCOMPARE(all.distinct, std::uint64_t(0));
            QVERIFY2(table.runs <= all.runs, what.c_str());
            QVERIFY(table.distinct > 0);
            saved += all.runs - table.runs;
        }
        QVERIFY(saved > 0); // some state is reached on two paths somewhere
    }

    // The hash covers what decides a run's future: two runs that reach equal hashes on different
    // choices go on to the same events under the same later choices. Random paths through each
    // configuration, hashed after every event; for each pair that meets, the same random choices
    // after the meeting point, and the traces after it compared.
    void equalStatesGoOnAlike()
    {
        struct Meeting {
            std::vector<std::uint8_t> script; // the choices made up to the state
            std::uint64_t events = 0; // processed to reach it
        };
        // The trace from the meeting on; the run's own event count at the meeting point is left out.
        struct Tail : TraceSink {
            std::vector<std::tuple<std::int64_t, int, int, int, int>> seen;
            void record(const TraceRecord& r) override
            {
                seen.emplace_back(r.time, static_cast<int>(r.kind), r.cpu, r.rq, r.arg);
            }
        };
        const auto future = [](const Scenario& base, const Meeting& m, const std::vector<std::uint8_t>& after) {
            Scenario sc = base;
            sc.choices.taken = m.script;
            sc.choices.taken.insert(sc.choices.taken.end(), after.begin(), after.end());
            Engine e(sc);
            while (e.events() < m.events && e.step()) { }
            Tail tail;
            e.addTraceSink(&tail);
            e.run();
            return std::make_pair(tail.seen, ModelChecker::violation(e, CheckProperty::AllComplete, true));
        };
        Rng rng(7);
        int compared = 0;
        for (const auto& [preset, sets] : std::vector<std::pair<const char*, std::vector<std::string>>> {
                 { "check-shared-hctx", {} }, { "check-shared-hctx", { "kernel.restart=\"rr-shared\"" } },
                 { "check-ida-lock-split", {} }, { "check-completion", { "kernel.threadirqs=true" } } }) {
            Scenario base = load(preset, sets);
            base.choices.on = true;
            std::map<std::pair<std::uint64_t, std::uint64_t>, Meeting> seen;
            int pairs = 0;
            for (int run = 0; run < 600 && pairs < 40; ++run) {
                Scenario sc = base;
                for (int i = 0; i < 64; ++i)
                    sc.choices.taken.push_back(static_cast<std::uint8_t>(rng.below(4)));
                Engine e(sc);
                while (e.step()) {
                    const std::vector<Choice>& made = e.choices().made;
                    std::vector<std::uint8_t> script;
                    for (const Choice& c : made)
                        script.push_back(c.taken);
                    const StateHash::Value v = e.stateHash();
                    const auto [it, isNew] = seen.try_emplace({ v.a, v.b }, Meeting { script, e.events() });
                    if (isNew || it->second.script == script)
                        continue;
                    ++pairs;
                    std::vector<std::uint8_t> after;
                    for (int i = 0; i < 64; ++i)
                        after.push_back(static_cast<std::uint8_t>(rng.below(4)));
                    const auto a = future(base, it->second, after);
                    const auto b = future(base, Meeting { script, e.events() }, after);
                    QVERIFY2(a == b, (std::string(preset) + ": two equal states went on differently").c_str());
                    ++compared;
                    break; // this run's path from here is the other's
                }
            }
            QVERIFY2(pairs > 0, (std::string(preset) + ": no two paths met").c_str());
        }
        QVERIFY(compared >= 4);
    }

    void boundsAreKept()
    {
        CheckBounds few;
        few.maxRuns = 10;
        const CheckResult r
            = check("check-shared-hctx", CheckProperty::NoStall, { "kernel.restart=\"rr-shared\"" }, few);
        QCOMPARE(r.verdict, CheckResult::Verdict::Unfinished);
        QCOMPARE(r.runs, std::uint64_t(10));
        CheckBounds shallow;
        shallow.maxDepth = 3;
        const CheckResult s
            = check("check-shared-hctx", CheckProperty::NoStall, { "kernel.restart=\"rr-shared\"" }, shallow);
        QCOMPARE(s.verdict, CheckResult::Verdict::Holds);
        QVERIFY(s.depthCut);
        QVERIFY(s.runs <= 8); // at most 2 x 2 x 2 paths over three choices
    }

    void vacuousPropertiesAreNamed()
    {
        QVERIFY(vacuous(CheckProperty::NoTagLost, load("check-shared-hctx")).find("percpu_ida") != std::string::npos);
        QVERIFY(vacuous(CheckProperty::AllComplete, load("default")).find("number_ios") != std::string::npos);
        QVERIFY(vacuous(CheckProperty::NoTagLost, load("check-ida-lock-split")).empty());
        QVERIFY(vacuous(CheckProperty::NoStall, load("default")).empty());
    }
};

QTEST_GUILESS_MAIN(TestCheck)
#include "tst_check.moc"
