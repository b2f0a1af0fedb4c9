// libFuzzer target: --set overrides, one per line, on a preset named by the
// first line (the default preset when it names none).
#include "FuzzRun.h"

#include "scenario/ScenarioLoader.h"

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
    std::string preset;
    std::getline(in, preset);
    std::vector<std::string> sets;
    for (std::string line; std::getline(in, line) && sets.size() < 64;)
        sets.push_back(line);
    auto s = blkmq::ScenarioLoader::fromPreset(preset, sets);
    if (!s)
        s = blkmq::ScenarioLoader::fromPreset("default", sets);
    if (s)
        blkmq::fuzz::runBriefly(*s);
    return 0;
}
