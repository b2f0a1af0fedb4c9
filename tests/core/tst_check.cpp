// The model checker (check/ModelChecker.h): choice points, the exhaustive search, the shortest
// counterexample and its replay.
#include "TestUtil.h"

#include "block/BlockLayer.h"
#include "check/ModelChecker.h"
#include "session/Session.h"

#include <QtTest>

#include <functional>

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
            QVERIFY(r.runs > 1000); // every path: two latencies, two ways through the scheduler, the orders
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
            QVERIFY(v314.runs > 1000);
        }
        // The lost tag is read from the free lists: the run the counterexample makes has one tag
        // that is neither in use nor findable.
        Engine e(*ScenarioLoader::fromText(lost.counterexampleJson, "cx"));
        while (e.events() < lost.violationEvents && e.step()) { }
        const TagAllocator& a = e.block().tags(0).alloc();
        QCOMPARE(a.depth() - a.inUse() - a.findableFree(), 1);
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
            QVERIFY(r.runs > 100);
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
