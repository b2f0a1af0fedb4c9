// TBB headers first: see TOOLCHAIN.md (TBB's `emit` vs Qt's macro).
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>

#include "experiment/BatchRunner.h"
#include "experiment/TbbHandoff.h"

#include "engine/Engine.h"

#include <algorithm>
#include <memory>
#include <numeric>

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

std::uint64_t BatchRunner::estimateEvents(const Scenario& s)
{
    Scenario pilot = s;
    pilot.duration = SimTime(std::max<std::int64_t>(1, s.duration.ns() / 64));
    Engine engine(pilot);
    engine.run();
    return engine.events() * 64;
}

std::vector<RunOutcome> BatchRunner::runParallel(const std::vector<Scenario>& scenarios, int threads, bool withSummary,
    const std::atomic<bool>* stop, std::vector<char>* ran, Schedule schedule)
{
    if (ran)
        ran->assign(scenarios.size(), 0);
    std::unique_ptr<tbb::global_control> limit;
    if (threads > 0)
        limit = std::make_unique<tbb::global_control>(
            tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
    const std::size_t workers = std::min<std::size_t>(scenarios.size(),
        static_cast<std::size_t>(tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism)));
    std::vector<RunOutcome> out(scenarios.size());
    // The order runs start in; results stay where their scenario is.
    std::vector<std::size_t> order(scenarios.size());
    std::iota(order.begin(), order.end(), std::size_t(0));
    // TbbHandoff::pass() right before each parallel_for: everything its tasks read is written by then.
    if (schedule == Schedule::CostFirst && scenarios.size() > workers && workers > 1) {
        std::vector<std::uint64_t> cost(scenarios.size());
        TbbHandoff::pass();
        tbb::parallel_for(std::size_t(0), scenarios.size(), [&](std::size_t i) {
            TbbHandoff::pass();
            if (!(stop && stop->load(std::memory_order_relaxed)))
                cost[i] = estimateEvents(scenarios[i]);
            TbbHandoff::pass();
        });
        TbbHandoff::pass();
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });
    }
    // Each worker takes the next run in `order` until none is left.
    std::atomic<std::size_t> next { 0 };
    TbbHandoff::pass();
    tbb::parallel_for(
        tbb::blocked_range<std::size_t>(0, std::max<std::size_t>(workers, 1), 1),
        [&](const tbb::blocked_range<std::size_t>&) {
            TbbHandoff::pass();
            for (std::size_t k = next++; k < order.size(); k = next++) {
                if (stop && stop->load(std::memory_order_relaxed))
                    break;
                const std::size_t i = order[k];
                out[i] = runOne(scenarios[i], withSummary);
                if (ran)
                    (*ran)[i] = 1;
            }
            TbbHandoff::pass();
        },
        tbb::simple_partitioner());
    TbbHandoff::pass();
    return out;
}

} // namespace blkmq
