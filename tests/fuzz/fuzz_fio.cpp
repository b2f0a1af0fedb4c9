// libFuzzer target: a fio job file, read as `--fio` reads one (FioJobFile::run) on the default
// preset, whose summary is then written as JSON (any text the reader let through must be text).
#include "FuzzRun.h"

#include "scenario/FioJobFile.h"
#include "scenario/ScenarioLoader.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const blkmq::Scenario base = *blkmq::ScenarioLoader::fromPreset("default");
    static const std::vector<std::string> devices = [] {
        std::vector<std::string> names;
        for (const blkmq::DeviceSpec& d : base.devices)
            names.push_back(d.name);
        return names;
    }();
    const auto job
        = blkmq::FioJobFile::read(std::string(reinterpret_cast<const char*>(data), size), "fuzz.fio", devices);
    if (!job)
        return 0;
    auto s = blkmq::ScenarioLoader::fromPreset("default", job->sets);
    if (s)
        blkmq::fuzz::runBriefly(*s);
    return 0;
}
