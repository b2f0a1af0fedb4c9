#pragma once

#include "spec/Scenario.h"
#include "engine/Engine.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace blkmq::fuzz {

// Runs a scenario that loaded for a few simulated microseconds, so the
// engine meets what the loader accepted. Large machines are skipped to keep
// each input fast (the loader's totals are what matter for them).
inline void runBriefly(Scenario s)
{
    std::int64_t hctxs = 0;
    for (const auto& d : s.devices)
        hctxs += d.submit_queues;
    std::int64_t inFlight = 0;
    for (const auto& j : s.jobs)
        inFlight += std::int64_t(j.numjobs) * j.iodepth;
    if (s.topology.nrCpus() > 64 || hctxs > 256 || inFlight > 4096)
        return;
    s.duration = SimTime(std::min<std::int64_t>(s.duration.ns(), 50'000));
    Engine engine(s);
    engine.run();
    (void)engine.summary().dump(); // every name and value in it is text a JSON writer takes
}

} // namespace blkmq::fuzz
