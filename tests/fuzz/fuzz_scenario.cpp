// libFuzzer target: a scenario document as a file would hold it.
#include "FuzzRun.h"

#include "scenario/ScenarioLoader.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string text(reinterpret_cast<const char*>(data), size);
    auto s = blkmq::ScenarioLoader::fromText(text, "fuzz");
    if (s)
        blkmq::fuzz::runBriefly(*s);
    return 0;
}
