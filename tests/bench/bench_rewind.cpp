// Going back in a run, in CPU time and ratios, never wall-clock pass/fail. For each preset, a run
// to --duration the way the window plays it (stretches of 50 µs, the checkpoint store offered after
// each), then, each the median of --repeat:
//  - the copies: the state of the run at its end (Engine::stateBytes) and the spacing it gives,
//    how many the store kept, their bytes, the CPU time of one Engine::clone(), and
//    what offering costs the run (CPU time with offers / without, both runs timed here);
//  - Step back: the session replayed to one event before its end from t = 0, and from the
//    checkpoints (Session::replayInto), with the ratio; and as the window does it, from a copy at
//    least 65,536 events back (its event log's history);
//  - a drag along the timeline: replays to 20 times spread over the run from the checkpoints,
//    median and slowest position.
//
// Usage: bench_rewind [--duration 20ms] [--repeat N] [--presets a,b,...]
#include "BenchClock.h"
#include "engine/Checkpoints.h"
#include "scenario/ScenarioLoader.h"
#include "session/Session.h"
#include "sim/Duration.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

using namespace blkmq;

namespace {

using bench::cpuNow;
using bench::median;

double timed(const std::function<void()>& f)
{
    const double t0 = cpuNow();
    f();
    return cpuNow() - t0;
}

// The window's way: stretches of 50 µs of simulated time, the store offered after each.
void play(Engine& e, Checkpoints* store)
{
    while (!e.finished()) {
        e.runFor(usec(50));
        if (store)
            store->offer(e);
    }
}

void replay(const Scenario& s, const Session& session, Session::To to, SimTime t, std::uint64_t n,
    const Checkpoints* from, std::uint64_t history = 0)
{
    Engine e(s);
    if (const std::string error = session.replayInto(e, to, t, n, from, history); !error.empty()) {
        std::fprintf(stderr, "replay failed: %s\n", error.c_str());
        std::exit(1);
    }
}

} // namespace

int main(int argc, char** argv)
{
    std::string duration = "20ms";
    int repeat = 3;
    std::vector<std::string> presets = { "default", "nvme-2s64-mq", "restart-128x64", "axboe-4s64-far-high" };
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool hasValue = i + 1 < argc;
        if (a == "--duration" && hasValue) {
            duration = argv[++i];
        } else if (a == "--repeat" && hasValue) {
            repeat = std::max(1, std::atoi(argv[++i]));
        } else if (a == "--presets" && hasValue) {
            presets.clear();
            std::string list = argv[++i];
            for (std::size_t at = 0; at <= list.size();) {
                const std::size_t end = std::min(list.find(',', at), list.size());
                presets.push_back(list.substr(at, end - at));
                at = end + 1;
            }
        } else {
            std::fprintf(stderr, "usage: bench_rewind [--duration 20ms] [--repeat N] [--presets a,b]\n");
            return 2;
        }
    }
    std::printf("| preset | events | state MB | spacing | copies kept | MB kept | clone ms | run with offers / "
                "without | Step back from t = 0 ms | from checkpoints ms | ratio | window's ms | drag median ms | drag "
                "slowest ms |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (const std::string& name : presets) {
        auto loaded = ScenarioLoader::fromPreset(name, { "duration=\"" + duration + "\"" });
        if (!loaded) {
            std::fprintf(stderr, "%s\n", loaded.error().c_str());
            return 2;
        }
        const Scenario& s = *loaded;
        std::vector<double> plain, offered, clone, fromStart, fromCopies, window, drag;
        Checkpoints store;
        Engine live(s);
        for (int r = 0; r < repeat; ++r) {
            plain.push_back(timed([&] {
                Engine e(s);
                play(e, nullptr);
            }));
            offered.push_back(timed([&] {
                Engine e(s);
                Checkpoints kept;
                play(e, &kept);
            }));
        }
        play(live, &store);
        for (int r = 0; r < repeat; ++r)
            clone.push_back(timed([&] { const auto copy = live.clone(); }));
        const Session session = Session::of(live, s.sourceJson);
        const std::uint64_t back = session.events - 1;
        for (int r = 0; r < repeat; ++r) {
            fromStart.push_back(timed([&] { replay(s, session, Session::To::Event, {}, back, nullptr); }));
            fromCopies.push_back(timed([&] { replay(s, session, Session::To::Event, {}, back, &store); }));
            window.push_back(timed([&] { replay(s, session, Session::To::Event, {}, back, &store, 65536); }));
        }
        for (int i = 0; i < 20; ++i) {
            const SimTime t(s.duration.ns() * (2 * i + 1) / 40);
            std::vector<double> one;
            for (int r = 0; r < repeat; ++r)
                one.push_back(timed([&] { replay(s, session, Session::To::Time, t, 0, &store); }));
            drag.push_back(median(one));
        }
        const std::size_t state = live.stateBytes();
        const auto spacing = std::max(Checkpoints::kMinSpacing,
            static_cast<std::uint64_t>(static_cast<double>(state) * Checkpoints::kEventsPerByte));
        std::printf(
            "| %s | %llu | %.2f | %llu | %zu | %.1f | %.2f | %.3f | %.1f | %.1f | %.0f× | %.1f | %.1f | %.1f |\n",
            name.c_str(), static_cast<unsigned long long>(live.events()), static_cast<double>(state) / 1e6,
            static_cast<unsigned long long>(spacing), store.size(), static_cast<double>(store.bytes()) / 1e6,
            median(clone) * 1e3, median(offered) / median(plain), median(fromStart) * 1e3, median(fromCopies) * 1e3,
            median(fromStart) / median(fromCopies), median(window) * 1e3, median(drag) * 1e3,
            *std::max_element(drag.begin(), drag.end()) * 1e3);
        std::fflush(stdout);
    }
    return 0;
}
