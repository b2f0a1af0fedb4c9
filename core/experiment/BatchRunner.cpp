// TBB headers first: see TOOLCHAIN.md (TBB's `emit` vs Qt's macro).
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>

#include "experiment/BatchRunner.h"
#include "experiment/TbbHandoff.h"

#include "engine/Engine.h"

#include <memory>

namespace blkmq {

namespace {

RunOutcome runOne(const Scenario& s, bool withSummary)
{
    Engine engine(s);
    engine.run();
    return { engine.fingerprint(), engine.totals(), engine.stallDetected(),
        engine.stallDetected() ? engine.firstStall().ns() : -1, engine.stallExplanation(), engine.events(),
        withSummary ? engine.summary() : nlohmann::json(), engine.counters().tag_lost,
        engine.counters().tag_missed_wakeups, engine.stallDetected() ? engine.eventsAtFirstStall() : 0 };
}

} // namespace

std::vector<RunOutcome> BatchRunner::runSerial(const std::vector<Scenario>& scenarios, bool withSummary)
{
    std::vector<RunOutcome> out;
    out.reserve(scenarios.size());
    for (const auto& s : scenarios)
        out.push_back(runOne(s, withSummary));
    return out;
}

std::vector<RunOutcome> BatchRunner::runParallel(const std::vector<Scenario>& scenarios, int threads, bool withSummary,
    const std::atomic<bool>* stop, std::vector<char>* ran)
{
    if (ran)
        ran->assign(scenarios.size(), 0);
    std::unique_ptr<tbb::global_control> limit;
    if (threads > 0)
        limit = std::make_unique<tbb::global_control>(
            tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
    std::vector<RunOutcome> out(scenarios.size());
    TbbHandoff::pass();
    tbb::parallel_for(std::size_t(0), scenarios.size(), [&](std::size_t i) {
        TbbHandoff::pass();
        if (stop && stop->load(std::memory_order_relaxed))
            return;
        out[i] = runOne(scenarios[i], withSummary);
        if (ran)
            (*ran)[i] = 1;
        TbbHandoff::pass();
    });
    TbbHandoff::pass();
    return out;
}

} // namespace blkmq
