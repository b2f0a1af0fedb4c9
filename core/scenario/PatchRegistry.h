#pragma once

#include <string>
#include <vector>

namespace blkmq {

// A kernel patch the engine can switch on and off (kernel.patches.<id>).
// The GUI's patch panel and the CLI's error messages are built from this list.
struct PatchInfo {
    std::string id;
    std::string thread; // the seed thread it comes from
    std::string subject; // commit subject
    std::string author;
    std::string version; // where it landed, or "proposed"
    std::string effect; // one sentence on what it changes
};

class PatchRegistry {
public:
    static const std::vector<PatchInfo>& all();
    static const PatchInfo* find(const std::string& id);
};

} // namespace blkmq
