#include "Cli.h"

#include "scenario/ScenarioLoader.h"
#include "topo/TopologyLoader.h"

#include <iostream>

namespace blkmq::cli {

int topologyCommand(const std::vector<std::string>& args)
{
    if (args.size() != 1) {
        std::cerr << "blkmqlab-cli topology: expected one argument: a spec (2n:1p:8c:2t), a preset, an hwloc XML file or 'host'\n";
        return kExitUsage;
    }
    auto topo = TopologyLoader::load(args.front());
    if (!topo) {
        std::cerr << "blkmqlab-cli: " << topo.error() << '\n';
        return kExitUsage;
    }
    std::cout << topo->describeTree() << '\n' << topo->describeDistances();
    return kExitOk;
}

int presetsCommand(const std::vector<std::string>& args)
{
    if (!args.empty()) {
        std::cerr << "blkmqlab-cli presets: takes no arguments\n";
        return kExitUsage;
    }
    std::cout << "scenario presets (blkmqlab-cli run --preset NAME):\n";
    for (const auto& p : ScenarioLoader::presets())
        std::cout << "  " << p.name << std::string(p.name.size() < 22 ? 22 - p.name.size() : 1, ' ') << p.summary << '\n';
    std::cout << "\ntopology presets (\"topology\": NAME, or blkmqlab-cli topology NAME):\n";
    for (const auto& p : TopologyLoader::presets())
        std::cout << "  " << p.name << std::string(p.name.size() < 22 ? 22 - p.name.size() : 1, ' ') << p.description
                  << '\n';
    return kExitOk;
}

} // namespace blkmq::cli
