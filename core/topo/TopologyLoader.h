#pragma once

#include "io/FieldTable.h"
#include "io/Limits.h"
#include "sim/Result.h"
#include "topo/Topology.h"

#include <cstdint>
#include <string>
#include <vector>

namespace blkmq {

struct TopologyPreset {
    std::string name;
    std::string spec;
    std::string description;
};

// Builds topologies from the four kinds of input `blkmqlab-cli topology` and
// scenario files accept. Errors name what was wrong with the input.
class TopologyLoader {
public:
    // Grammar (docs/scenario.md):
    //   spec := ([N "n:"] node | node ("+" node)*) ["/adjacent"]
    //   node := [P "p:"] [L "l:"] C "c" [":" T "t"]
    // P packages per node, L LLC domains per package, C cores per package,
    // T threads per core. CPUs are numbered as Linux does on x86: every core's
    // first thread first (core order node, package, llc), then every core's
    // second thread, so SMT siblings are N and N + total cores. With
    // "/adjacent", a core's threads are numbered one after another, as QEMU's
    // -smp numbers them (siblings 0,1).
    static Result<Topology> fromSpec(const std::string& spec, const std::string& name = {});
    static Result<Topology> fromPreset(const std::string& name);
    static Result<Topology> fromHwlocXml(const std::string& path);
    // An hwloc XML document in memory (the fuzz target and fromHwlocXml use it). hwloc reads it in a
    // child process that is killed, and the document refused, when it takes longer than readLimitNs.
    static Result<Topology> fromHwlocXmlText(const std::string& xml, const std::string& name, const std::string& origin,
        std::int64_t readLimitNs = limits::kHwlocReadNs);
    static Result<Topology> fromHost();
    // A preset name, "host", a path ending in .xml, or a spec string.
    static Result<Topology> load(const std::string& what);

    static const std::vector<TopologyPreset>& presets();
    // What the hwloc XML importer reads, element by element (blkmqlab-cli fields hwloc): everything
    // else in the file is hwloc's to check, and is not used.
    static const FieldTable& hwlocFields();
    // The rows of hwlocFields() the importer reads from a trusted document, in the order first read:
    // every read names its row, so the test that compares the two keeps the table true.
    static std::vector<std::string> hwlocRowsRead(const std::string& xml);
};

} // namespace blkmq
