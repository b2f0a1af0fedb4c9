// The engine's speed, in CPU time and ratios, never wall-clock pass/fail:
//
//  1. every preset: events and simulated I/Os per CPU-second, the real-time factor (simulated
//     seconds per CPU-second), ns per event, and the ratio to a bare 16-byte-event binary heap
//     (std::priority_queue) holding as many events as the engine held on average, timed side by
//     side in this process, one engine run then one heap run; beside it the project's own event
//     queue alone in the same hold model (what of the engine's cost is the data structure); median
//     of --repeat rounds, each of which times every preset and every scaling point once (a noisy
//     minute spreads over many);
//  2. how ns per event grows with the simulated machine: log-log slopes against CPU count (1 to
//     512), requests in flight (8 to 4096) and devices (8 to 128), each family holding the rest
//     fixed;
//  3. an uneven sweep grid at 1 and 2 threads, in grid order and longest first (wall time, as a
//     speed-up is: run it on idle cores).
//
// Usage: bench_engine [--cpu-seconds S] [--repeat N] [--presets a,b,...] [--no-scaling] [--no-sweep]
// (S: CPU time one timed engine run aims at; the test suite runs a short smoke of it.)
#include "BenchClock.h"
#include "engine/Engine.h"
#include "experiment/Experiment.h"
#include "scenario/ScenarioLoader.h"
#include "sim/EventQueue.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <queue>
#include <string>
#include <thread>
#include <vector>

using namespace blkmq;

namespace {

using bench::cpuNow;
using bench::median;

struct Options {
    double cpuSeconds = 0.2;
    int repeat = 3;
    std::vector<std::string> presets;
    bool scaling = true;
    bool sweep = true;
};

struct EngineRun {
    double cpu = 0; // process CPU seconds of run()
    std::uint64_t events = 0;
    double ios = 0;
    double simSeconds = 0;
    bool stalled = false;
};

EngineRun timeEngine(const Scenario& s)
{
    Engine e(s);
    const double t0 = cpuNow();
    e.run();
    const double t1 = cpuNow();
    return { t1 - t0, e.events(), static_cast<double>(e.counters().completed), e.now().seconds(), e.stallDetected() };
}

// The events the engine holds, averaged over 256 points of the run (untimed).
double meanPending(const Scenario& s)
{
    Engine e(s);
    double sum = 0;
    const int points = 256;
    for (int i = 1; i <= points; ++i) {
        e.runUntil(SimTime(s.duration.ns() * i / points));
        sum += static_cast<double>(e.pendingEvents());
    }
    return sum / points;
}

// The hold model's increments: xorshift, spread over [0, 2 * (pending * 100 + 1)) ns.
std::vector<std::int64_t> holdIncrements(std::size_t pending)
{
    std::vector<std::int64_t> inc(4096);
    std::uint64_t x = 88172645463325252ULL;
    const std::int64_t span = static_cast<std::int64_t>(pending) * 100 + 1;
    for (auto& v : inc) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v = static_cast<std::int64_t>(x % static_cast<std::uint64_t>(2 * span));
    }
    return inc;
}

// CPU ns per step of `ops` hold-model steps (pop the earliest, push one later); each step returns
// what it popped, summed so that the loop is kept.
template<class Step>
double holdNs(std::size_t ops, Step&& step)
{
    const double t0 = cpuNow();
    std::int64_t sink = 0;
    for (std::size_t i = 0; i < ops; ++i)
        sink += step(i);
    const double t1 = cpuNow();
    if (sink == 42)
        std::puts("");
    return (t1 - t0) * 1e9 / static_cast<double>(ops);
}

// The bare data structure: a binary heap of 16-byte events (time, sequence), `pending` of them, in
// the hold model (pop the earliest, push one later), as an engine's event loop uses its queue.
// ns per pop + push.
double bareHeapNs(std::size_t pending, std::size_t ops)
{
    struct Ev {
        std::int64_t time;
        std::uint64_t seq;
        bool operator>(const Ev& o) const { return time != o.time ? time > o.time : seq > o.seq; }
    };
    static_assert(sizeof(Ev) == 16);
    const std::vector<std::int64_t> inc = holdIncrements(pending);
    std::vector<Ev> storage;
    storage.reserve(pending + 1);
    std::priority_queue<Ev, std::vector<Ev>, std::greater<Ev>> q(std::greater<Ev>(), std::move(storage));
    std::uint64_t seq = 0;
    for (std::size_t i = 0; i < pending; ++i)
        q.push({ inc[i % inc.size()], seq++ });
    return holdNs(ops, [&](std::size_t i) {
        const Ev top = q.top();
        q.pop();
        q.push({ top.time + inc[i & 4095], seq++ });
        return top.time;
    });
}

// The engine's own EventQueue alone in the same hold model, its events carrying operands as the
// engine's do: what the data structure costs, apart from what the simulation does per event.
double queueAloneNs(std::size_t pending, std::size_t ops)
{
    const std::vector<std::int64_t> inc = holdIncrements(pending);
    EventQueue q;
    for (std::size_t i = 0; i < pending; ++i)
        q.push(SimTime(inc[i % inc.size()]), EventKind::CpuBoundary, EventPriority::Cpu, static_cast<int>(i), 0, 0);
    return holdNs(ops, [&](std::size_t i) {
        const Event top = q.pop();
        q.push(top.time + SimTime(inc[i & 4095]), top.kind, top.prio, top.a, top.b, top.c);
        return top.time.ns() + top.a;
    });
}

// A scenario's duration stretched so that one run costs about `cpuSeconds` (a pilot run says how
// much its own duration costs); never shorter than the scenario's own.
Scenario sized(Scenario s, double cpuSeconds)
{
    const EngineRun pilot = timeEngine(s);
    if (pilot.cpu > 0 && pilot.cpu < cpuSeconds && pilot.events > 0) {
        const double factor = std::min(200.0, cpuSeconds / pilot.cpu);
        s.duration = SimTime(static_cast<std::int64_t>(static_cast<double>(s.duration.ns()) * factor));
    }
    return s;
}

struct Measure {
    double nsPerEvent = 0, eventsPerCpuS = 0, iosPerCpuS = 0, rtf = 0, pending = 0, heapNs = 0, queueNs = 0, ratio = 0;
    std::uint64_t events = 0;
    bool stalled = false;
};

// One thing timed: a scenario sized to the CPU budget, its mean pending events, and its samples.
// Every case is timed once per round, all rounds in turn, so a burst of load from the machine's
// neighbours lands on one sample of many cases, not on every sample of a few.
struct Case {
    Scenario s;
    double pending = 0;
    std::vector<double> ns, evs, ios, rtf, heap, queue, ratio;
    std::uint64_t events = 0;
    bool stalled = false;

    Case(const Scenario& base, const Options& o)
        : s(sized(base, o.cpuSeconds))
        , pending(meanPending(s))
    {
    }
    // One engine run, then one bare-heap run and one run of the queue alone at the same pending count.
    void sample()
    {
        const EngineRun run = timeEngine(s);
        const double cpu = std::max(run.cpu, 1e-9);
        const double perEvent = cpu * 1e9 / static_cast<double>(std::max<std::uint64_t>(1, run.events));
        const auto held = static_cast<std::size_t>(std::max(1.0, std::round(pending)));
        const double h = bareHeapNs(held, 2000000);
        queue.push_back(queueAloneNs(held, 2000000));
        ns.push_back(perEvent);
        evs.push_back(static_cast<double>(run.events) / cpu);
        ios.push_back(run.ios / cpu);
        rtf.push_back(run.simSeconds / cpu);
        heap.push_back(h);
        ratio.push_back(perEvent / h);
        events = run.events;
        stalled = run.stalled;
    }
    Measure measure() const
    {
        Measure m;
        m.pending = pending;
        m.events = events;
        m.stalled = stalled;
        m.nsPerEvent = median(ns);
        m.eventsPerCpuS = median(evs);
        m.iosPerCpuS = median(ios);
        m.rtf = median(rtf);
        m.heapNs = median(heap);
        m.queueNs = median(queue);
        m.ratio = median(ratio);
        return m;
    }
};

double slope(const std::vector<double>& x, const std::vector<double>& y)
{
    double mx = 0, my = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        mx += std::log(x[i]);
        my += std::log(y[i]);
    }
    mx /= static_cast<double>(x.size());
    my /= static_cast<double>(x.size());
    double num = 0, den = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        num += (std::log(x[i]) - mx) * (std::log(y[i]) - my);
        den += (std::log(x[i]) - mx) * (std::log(x[i]) - mx);
    }
    return den > 0 ? num / den : 0;
}

Scenario load(const nlohmann::json& doc)
{
    auto s = ScenarioLoader::fromJson(doc);
    if (!s) {
        std::fprintf(stderr, "bench_engine: %s\n", s.error().c_str());
        std::exit(2);
    }
    return *s;
}

// NVMe-like devices (one vector per hctx, fixed 50 us service) and fio jobs, one per CPU up to `jobs`.
nlohmann::json family(int cpus, int devices, int queues, int jobs, int iodepth)
{
    // 1 and 2 CPUs: one core; from 4 on: two nodes of SMT pairs
    const std::string topo
        = cpus < 4 ? "1n:1p:1c:" + std::to_string(cpus) + "t" : "2n:1p:" + std::to_string(cpus / 4) + "c:2t";
    nlohmann::json doc = {
        { "format", 1 },
        { "name", "scaling" },
        { "seed", 1 },
        { "duration", "2ms" },
        { "topology", topo },
        { "devices",
            { { { "name", "nvme" }, { "nr_devices", devices }, { "submit_queues", queues }, { "hw_queue_depth", 1023 },
                { "irqmode", "nvme" }, { "completion_nsec", { { "dist", "fixed" }, { "value", "50us" } } } } } },
        { "workload",
            { { "jobs",
                { { { "name", "fio" }, { "device", "nvme" }, { "numjobs", jobs }, { "iodepth", iodepth },
                    { "cpus_allowed_policy", "split" }, { "rw", "randread" }, { "bs", 4096 } } } } } },
    };
    return doc;
}

struct Family {
    const char* what;
    std::vector<int> xs;
    std::function<nlohmann::json(int)> make;
    std::vector<Case> cases; // one per x
};

void printFamily(const Family& f)
{
    std::vector<double> x, y, perIo;
    std::printf("\n%s\n", f.what);
    std::printf("| x | events | pending | ns/event | events/CPU-s | I/Os per CPU-s | events per I/O |\n"
                "|---|---|---|---|---|---|---|\n");
    for (std::size_t i = 0; i < f.xs.size(); ++i) {
        const Measure m = f.cases[i].measure();
        std::printf("| %d | %llu | %.0f | %.1f | %.2fM | %.3fM | %.2f |\n", f.xs[i],
            static_cast<unsigned long long>(m.events), m.pending, m.nsPerEvent, m.eventsPerCpuS / 1e6,
            m.iosPerCpuS / 1e6, m.iosPerCpuS > 0 ? m.eventsPerCpuS / m.iosPerCpuS : 0.0);
        x.push_back(f.xs[i]);
        y.push_back(m.nsPerEvent);
        perIo.push_back(m.iosPerCpuS > 0 ? 1e9 / m.iosPerCpuS : 0);
    }
    // ns per simulated I/O too: where the event mix changes (events per I/O), the two differ.
    std::printf("log-log slope of ns/event: %.3f; of CPU ns per simulated I/O: %.3f\n", slope(x, y), slope(x, perIo));
}

double timeSweep(const Experiment& exp, int threads, BatchRunner::Schedule schedule, std::vector<std::string>& prints)
{
    Experiment::Options options;
    options.threads = threads;
    options.chunk = static_cast<std::size_t>(threads) * 16; // as blkmqlab-cli sweep
    options.schedule = schedule;
    prints.clear();
    const auto t0 = std::chrono::steady_clock::now();
    const auto status = exp.run(options, [&](RunResult&& r) { prints.push_back(r.fingerprint); });
    const auto t1 = std::chrono::steady_clock::now();
    if (!status.error.empty()) {
        std::fprintf(stderr, "bench_engine: %s\n", status.error.c_str());
        std::exit(2);
    }
    return std::chrono::duration<double>(t1 - t0).count();
}

// Whether the heap the engines ran in was backed by transparent huge pages: glibc's malloc asks for
// them only with GLIBC_TUNABLES=glibc.malloc.hugetlb=1, and the kernel's THP mode must allow it. Read
// from /proc/self/smaps_rollup at the end, when every case's engine has come and gone.
void printHeapPages()
{
    std::FILE* f = std::fopen("/proc/self/smaps_rollup", "r");
    if (!f)
        return;
    char line[256];
    long anon = -1, huge = -1;
    while (std::fgets(line, sizeof line, f)) {
        long kb = 0;
        if (std::sscanf(line, "Anonymous: %ld kB", &kb) == 1)
            anon = kb;
        else if (std::sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
            huge = kb;
    }
    std::fclose(f);
    const char* tunables = std::getenv("GLIBC_TUNABLES");
    if (anon >= 0 && huge >= 0)
        std::printf("\nHeap: %.1f of %.1f MiB of anonymous memory in transparent huge pages (GLIBC_TUNABLES=%s)\n",
            static_cast<double>(huge) / 1024, static_cast<double>(anon) / 1024, tunables ? tunables : "");
}

} // namespace

int main(int argc, char** argv)
{
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool hasValue = i + 1 < argc;
        if (a == "--cpu-seconds" && hasValue)
            o.cpuSeconds = std::max(0.001, std::atof(argv[++i]));
        else if (a == "--repeat" && hasValue)
            o.repeat = std::max(1, std::atoi(argv[++i]));
        else if (a == "--presets" && hasValue) {
            std::string list = argv[++i];
            for (std::size_t at = 0; at <= list.size();) {
                const std::size_t comma = std::min(list.find(',', at), list.size());
                if (comma > at)
                    o.presets.push_back(list.substr(at, comma - at));
                at = comma + 1;
            }
        } else if (a == "--no-scaling")
            o.scaling = false;
        else if (a == "--no-sweep")
            o.sweep = false;
        else {
            std::fprintf(stderr,
                "usage: bench_engine [--cpu-seconds S] [--repeat N] [--presets a,b] [--no-scaling] [--no-sweep]\n");
            return 2;
        }
    }
    if (o.presets.empty())
        for (const PresetInfo& p : ScenarioLoader::presets())
            o.presets.push_back(p.name);

    std::vector<Case> presets;
    for (const std::string& name : o.presets) {
        auto s = ScenarioLoader::fromPreset(name, {});
        if (!s) {
            std::fprintf(stderr, "bench_engine: %s\n", s.error().c_str());
            return 2;
        }
        presets.emplace_back(*s, o);
    }
    std::vector<Family> families;
    if (o.scaling) {
        // CPUs: one job per CPU, 512 requests in flight in all (QD 512 / CPUs).
        families.push_back({ "Against CPU count (one job per CPU, 512 in flight in all, one NVMe with a queue per CPU)",
            { 1, 4, 16, 64, 256, 512 }, [](int cpus) { return family(cpus, 1, cpus, cpus, std::max(1, 512 / cpus)); },
            {} });
        // In flight: 16 CPUs, 16 jobs, QD x / 16.
        families.push_back({ "Against requests in flight (16 CPUs, 16 jobs)", { 16, 64, 256, 1024, 4096 },
            [](int inflight) { return family(16, 1, 16, 16, inflight / 16); }, {} });
        // Devices: 64 CPUs, 64 jobs at QD 8 spread over the devices, 16 hctxs per device.
        families.push_back({ "Against devices (64 CPUs, 64 jobs at QD 8 spread over them, 16 hctxs each)",
            { 8, 16, 32, 64, 128 }, [](int devices) { return family(64, devices, 16, 64, 8); }, {} });
        for (Family& f : families)
            for (const int x : f.xs)
                f.cases.emplace_back(load(f.make(x)), o);
    }
    for (int r = 0; r < o.repeat; ++r) {
        std::fprintf(stderr, "bench_engine: round %d of %d\n", r + 1, o.repeat);
        for (Case& c : presets)
            c.sample();
        for (Family& f : families)
            for (Case& c : f.cases)
                c.sample();
    }

    std::printf("Engine speed, process CPU time, median of %d rounds (each times every case once, one engine run\n"
                "of about %.2f CPU-s); the bare heap is a std::priority_queue of 16-byte events holding the engine's\n"
                "mean pending events, timed right after each engine run; the queue alone is the engine's EventQueue\n"
                "in the same hold model; ratio is the engine's ns/event over the bare heap's\n\n",
        o.repeat, o.cpuSeconds);
    std::printf("| preset | events | pending | events/CPU-s | I/Os per CPU-s | real-time factor | ns/event | bare heap "
                "ns | queue alone ns | ratio |\n|---|---|---|---|---|---|---|---|---|---|\n");
    bool anyStall = false;
    for (std::size_t i = 0; i < presets.size(); ++i) {
        const Measure m = presets[i].measure();
        anyStall |= m.stalled;
        std::printf("| %s%s | %llu | %.0f | %.2fM | %.3fM | %.3f | %.1f | %.1f | %.1f | %.1f |\n", o.presets[i].c_str(),
            m.stalled ? " (stalls)" : "", static_cast<unsigned long long>(m.events), m.pending, m.eventsPerCpuS / 1e6,
            m.iosPerCpuS / 1e6, m.rtf, m.nsPerEvent, m.heapNs, m.queueNs, m.ratio);
    }
    if (anyStall)
        std::printf("(stalls): the run deadlocks early by design; after the stall only samples and stall checks run,\n"
                    "so its figures say little about the engine's speed.\n");
    for (const Family& f : families)
        printFamily(f);
    printHeapPages();
    std::fflush(stdout);

    if (o.sweep) {
        // An uneven grid: default at 8 ms to 1 s, each twice the last, cheapest first: taken in
        // grid order the longest run starts last, alone.
        const Experiment exp(
            [](const std::vector<std::string>& sets) { return ScenarioLoader::fromPreset("default", sets); },
            { Axis::values("duration", { "8ms", "16ms", "32ms", "64ms", "128ms", "256ms", "512ms", "1024ms" }) });
        std::vector<std::string> one, given, first;
        std::vector<double> t1s, tgs, tcs;
        for (int r = 0; r < o.repeat; ++r) { // side by side, median of each
            t1s.push_back(timeSweep(exp, 1, BatchRunner::Schedule::Given, one));
            tgs.push_back(timeSweep(exp, 2, BatchRunner::Schedule::Given, given));
            tcs.push_back(timeSweep(exp, 2, BatchRunner::Schedule::CostFirst, first));
        }
        const double t1 = median(t1s), tg = median(tgs), tc = median(tcs);
        std::printf("\nSweep of %llu uneven runs (default, 8 ms to 1 s), wall time on %u hardware threads, median of "
                    "%d:\n  1 thread %.2f s; 2 threads in grid order %.2f s (%.2fx); 2 threads longest first %.2f s "
                    "(%.2fx); results %s\n",
            static_cast<unsigned long long>(exp.size()), std::thread::hardware_concurrency(), o.repeat, t1, tg, t1 / tg,
            tc, t1 / tc, one == given && one == first ? "identical" : "DIFFER");
        if (one != given || one != first)
            return 1;
    }
    return 0;
}
