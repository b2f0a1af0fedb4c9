// libFuzzer target: the topology spec grammar ("2n:1p:8c:2t", "6c+2c").
#include "topo/TopologyLoader.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string spec(reinterpret_cast<const char*>(data), size);
    auto t = blkmq::TopologyLoader::fromSpec(spec);
    if (t) {
        (void)t->describeTree();
        (void)t->describeDistances();
    }
    return 0;
}
