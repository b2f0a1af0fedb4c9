// Engine throughput on single-core-null (issue 2): simulated I/Os per wall
// second, events per second and the real-time factor (simulated seconds per
// wall second); then the same batch serial vs on TBB workers, as a ratio.
#include "experiment/BatchRunner.h"
#include "scenario/ScenarioLoader.h"
#include "sim/Duration.h"
#include "engine/Engine.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

using namespace blkmq;

int main(int argc, char** argv)
{
    std::string duration = "1s";
    int repeat = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--duration"))
            duration = argv[i + 1];
        else if (!std::strcmp(argv[i], "--repeat"))
            repeat = std::max(1, std::atoi(argv[i + 1]));
    }
    auto scenario = ScenarioLoader::fromPreset("single-core-null", { "duration=\"" + duration + "\"" });
    if (!scenario) {
        std::fprintf(stderr, "bench_engine: %s\n", scenario.error().c_str());
        return 2;
    }
    std::printf("single-core-null, %s simulated, best of %d\n", duration.c_str(), repeat);
    double best = 0;
    for (int r = 0; r < repeat; ++r) {
        Engine e(*scenario);
        e.run();
        const auto s = e.summary();
        const double wall = e.wallSeconds();
        const double ios = s["io"]["completed"].get<double>();
        std::printf("  run %d: %.0f I/Os in %.3f s wall: %.2fM simulated I/Os per wall second, %.2fM events/s, "
                    "real-time factor %.3f (simulated IOPS %.3fM)\n",
            r + 1, ios, wall, ios / wall / 1e6, static_cast<double>(e.events()) / wall / 1e6, e.now().seconds() / wall,
            s["io"]["iops"].get<double>() / 1e6);
        best = std::max(best, e.now().seconds() / wall);
    }
    std::printf("real-time factor (best): %.3f\n", best);

    // Parallel scaling: N engines, serial vs TBB.
    const unsigned n = std::max(2u, std::thread::hardware_concurrency());
    std::vector<Scenario> batch;
    for (unsigned i = 0; i < n; ++i) {
        auto s = ScenarioLoader::fromPreset("default", { "seed=" + std::to_string(i + 1) });
        batch.push_back(*s);
    }
    const auto t0 = std::chrono::steady_clock::now();
    const auto serial = BatchRunner::runSerial(batch);
    const auto t1 = std::chrono::steady_clock::now();
    const auto parallel = BatchRunner::runParallel(batch);
    const auto t2 = std::chrono::steady_clock::now();
    bool same = true;
    for (std::size_t i = 0; i < batch.size(); ++i)
        same &= serial[i].fingerprint == parallel[i].fingerprint;
    const double ts = std::chrono::duration<double>(t1 - t0).count();
    const double tp = std::chrono::duration<double>(t2 - t1).count();
    std::printf("%u x default: serial %.3f s, TBB %.3f s, speed-up %.2fx on %u hardware threads, fingerprints %s\n", n,
        ts, tp, ts / tp, std::thread::hardware_concurrency(), same ? "equal" : "DIFFER");
    return same ? 0 : 1;
}
