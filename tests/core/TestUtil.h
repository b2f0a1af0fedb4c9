#pragma once

#include "scenario/ScenarioLoader.h"
#include "engine/Engine.h"

#include <nlohmann/json.hpp>

#include <QtTest>

#include <memory>

namespace blkmq::test {

// Loads a scenario or fails the test with the loader's message.
inline Scenario load(const std::string& jsonOrPreset, const std::vector<std::string>& sets = {})
{
    auto s = jsonOrPreset.front() == '{' ? ScenarioLoader::fromText(jsonOrPreset, "test", sets)
                                         : ScenarioLoader::fromPreset(jsonOrPreset, sets);
    if (!s.ok())
        qFatal("scenario does not load: %s", s.error().c_str());
    return *s;
}

inline nlohmann::json run(const std::string& jsonOrPreset, const std::vector<std::string>& sets = {})
{
    Engine e(load(jsonOrPreset, sets));
    e.run();
    return e.summary();
}

inline std::uint64_t u(const nlohmann::json& j) { return j.get<std::uint64_t>(); }

// Every completion was redirected to its submitter (remote is counted when
// redirected, so requests still on their way at the end count too).
inline bool allRemote(const nlohmann::json& s)
{
    const auto remote = u(s["completion"]["remote"]);
    const auto completed = u(s["io"]["completed"]);
    return completed > 0 && remote >= completed && remote <= completed + u(s["io"]["in_flight"]);
}

} // namespace blkmq::test
