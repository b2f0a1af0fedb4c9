// The Chrome trace-event export (docs/trace.md), read back as Perfetto would read it: every CPU a
// named thread of its node's process, slices that nest, flows with both ends, counters that agree
// with the run summary, and a run that is the same with the trace attached.
#include "TestUtil.h"
#include "engine/ChromeTrace.h"

#include <algorithm>
#include <map>

using namespace blkmq;
using namespace blkmq::test;

namespace {

struct Traced {
    nlohmann::json doc;
    nlohmann::json summary;
    std::string fingerprint;
    Counters counters;
};

Traced traced(const Scenario& sc, ChromeTrace::Options options = {}, const std::vector<Command>& at1ms = {})
{
    Engine e(sc);
    ChromeTrace trace(e, options);
    e.addTraceSink(&trace);
    for (SimTime t = sc.sample_interval; !e.finished(); t = t + sc.sample_interval) {
        if (t == msec(1))
            for (const Command& c : at1ms)
                e.inbox().post(c);
        e.runUntil(std::min(t, sc.duration));
        trace.sample(e);
    }
    return { nlohmann::json::parse(trace.finish(e)), e.summary(), e.fingerprint(), e.counters() };
}

std::vector<nlohmann::json> ofPhase(const nlohmann::json& doc, const char* ph)
{
    std::vector<nlohmann::json> out;
    for (const auto& ev : doc["traceEvents"])
        if (ev["ph"] == ph)
            out.push_back(ev);
    return out;
}

} // namespace

class TestTrace : public QObject {
    Q_OBJECT
private slots:
    void aRunReadsBackAsPerfettoWouldReadIt()
    {
        const Scenario sc = load("default", { "duration=3ms" });
        const Traced t = traced(sc);
        Engine plain(sc);
        plain.run();
        QCOMPARE(t.fingerprint, plain.fingerprint()); // the trace observes, it does not change the run

        // One process per node, one thread per CPU named "CPU n".
        std::map<int, std::string> threads;
        for (const auto& m : ofPhase(t.doc, "M"))
            if (m["name"] == "thread_name") {
                QCOMPARE(m["pid"].get<int>(), sc.topology.cpu(m["tid"].get<int>()).node);
                threads[m["tid"].get<int>()] = m["args"]["name"];
            }
        QCOMPARE(static_cast<int>(threads.size()), sc.topology.nrCpus());
        QCOMPARE(threads[5], std::string("CPU 5"));

        // Complete events nest on every thread: sorted by start (longer first), each ends within the
        // one it starts in.
        std::map<int, std::vector<std::pair<double, double>>> slices;
        int hardirqSpans = 0, completes = 0;
        for (const auto& x : ofPhase(t.doc, "X")) {
            QVERIFY(x["dur"].get<double>() >= 0);
            slices[x["tid"].get<int>()].emplace_back(
                x["ts"].get<double>(), x["ts"].get<double>() + x["dur"].get<double>());
            hardirqSpans += x["name"] == "hardirq";
            completes += x["name"].get<std::string>().find("->complete") != std::string::npos;
        }
        QVERIFY(hardirqSpans > 100);
        QVERIFY(completes > 100);
        for (auto& [tid, list] : slices) {
            std::sort(list.begin(), list.end(),
                [](auto& a, auto& b) { return a.first != b.first ? a.first < b.first : a.second > b.second; });
            std::vector<double> open; // ends of the enclosing slices
            for (const auto& [b, e] : list) {
                while (!open.empty() && open.back() <= b + 1e-9)
                    open.pop_back();
                QVERIFY2(open.empty() || e <= open.back() + 1e-9,
                    qPrintable(QStringLiteral("CPU %1: a slice at %2 us overlaps its parent").arg(tid).arg(b)));
                open.push_back(e);
            }
        }

        // Every flow has its two ends, the end not before the start; IPIs are the IPIs sent (the last
        // ones may still be on their way when the run ends).
        std::map<std::uint64_t, int> starts, ends;
        std::map<std::uint64_t, double> startAt;
        for (const auto& s : ofPhase(t.doc, "s")) {
            ++starts[s["id"].get<std::uint64_t>()];
            startAt[s["id"].get<std::uint64_t>()] = s["ts"].get<double>();
        }
        for (const auto& f : ofPhase(t.doc, "f")) {
            ++ends[f["id"].get<std::uint64_t>()];
            QVERIFY(f["ts"].get<double>() >= startAt[f["id"].get<std::uint64_t>()]);
            QCOMPARE(f["bp"], nlohmann::json("e"));
        }
        QCOMPARE(starts.size(), ends.size());
        for (const auto& [id, n] : starts)
            QVERIFY(n == 1 && ends[id] == 1);
        const auto ipis = static_cast<std::uint64_t>(starts.size());
        QVERIFY(ipis <= t.counters.ipis && ipis + static_cast<std::uint64_t>(sc.topology.nrCpus()) >= t.counters.ipis);

        // Counters: the last in-flight value is the summary's; IOPS over the intervals add up to the
        // completions.
        double completed = 0, lastT = 0, inFlight = -1;
        for (const auto& c : ofPhase(t.doc, "C")) {
            if (c["name"] == "IOPS") {
                completed += c["args"]["iops"].get<double>() * (c["ts"].get<double>() - lastT) / 1e6;
                lastT = c["ts"].get<double>();
            } else if (c["name"] == "requests in flight") {
                inFlight = c["args"]["requests"].get<double>();
            }
        }
        QCOMPARE(std::llround(completed), static_cast<long long>(t.counters.completed));
        QCOMPARE(static_cast<long long>(inFlight), t.summary["io"]["in_flight"].get<long long>());
        QCOMPARE(t.doc["otherData"]["fingerprint"].get<std::string>(), t.fingerprint);
        QCOMPARE(t.doc["otherData"]["truncated"].get<bool>(), false);
    }

    void switchesStallsAndStealsAreMarked()
    {
        // A live patch switch is an instant event.
        const Traced sw
            = traced(load("default", { "duration=2ms" }), {}, { { "kernel.patches.complete-llist", "true" } });
        const auto instants = ofPhase(sw.doc, "i");
        QVERIFY(std::any_of(instants.begin(), instants.end(), [](const auto& i) {
            return i["name"].template get<std::string>().find("complete-llist") != std::string::npos;
        }));
        // The stall.
        const Traced stall = traced(load("shared-hctx-stall"));
        const auto marks = ofPhase(stall.doc, "i");
        QVERIFY(std::any_of(
            marks.begin(), marks.end(), [](const auto& i) { return i["name"] == "stall: request A is stuck"; }));
        // percpu_ida steals are flows from the victim's CPU to the stealer's.
        const Traced steals = traced(load("ida-lock-split-race", { "duration=2ms" }));
        int n = 0;
        for (const auto& s : ofPhase(steals.doc, "s"))
            n += s["name"] == "tag steal";
        QVERIFY(n > 0);
        QVERIFY(static_cast<std::uint64_t>(n) <= steals.counters.tag_steals);
    }

    void windowAndCapBoundTheFile()
    {
        const Scenario sc = load("default", { "duration=3ms" });
        ChromeTrace::Options window;
        window.from = msec(1);
        window.to = msec(2);
        const Traced w = traced(sc, window);
        for (const auto& ev : w.doc["traceEvents"]) {
            if (ev["ph"] == "M")
                continue;
            const double b = ev["ts"].get<double>(), e = b + (ev.contains("dur") ? ev["dur"].get<double>() : 0);
            QVERIFY(e >= 1000 - 1e-9 && b <= 2000 + 1e-9);
        }
        ChromeTrace::Options cap;
        cap.maxEvents = 100;
        const Traced c = traced(sc, cap);
        QCOMPARE(c.doc["otherData"]["truncated"].get<bool>(), true);
        QCOMPARE(c.doc["otherData"]["events"].get<int>(), 100);
        QVERIFY(ofPhase(c.doc, "X").size() + ofPhase(c.doc, "s").size() + ofPhase(c.doc, "f").size()
                + ofPhase(c.doc, "C").size() + ofPhase(c.doc, "i").size()
            == 100);
    }
};

QTEST_GUILESS_MAIN(TestTrace)
#include "tst_trace.moc"
