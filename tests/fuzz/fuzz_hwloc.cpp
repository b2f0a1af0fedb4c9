// libFuzzer target: the hwloc XML importer (hwloc parses, BlkMQ Lab maps the
// objects to nodes, LLCs, cores and threads).
#include "topo/TopologyLoader.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string xml(reinterpret_cast<const char*>(data), size);
    auto t = blkmq::TopologyLoader::fromHwlocXmlText(xml, "fuzz", "fuzz");
    if (t) {
        (void)t->describeTree();
        (void)t->describeDistances();
    }
    return 0;
}
