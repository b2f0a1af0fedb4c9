#pragma once

#include <string>

namespace blkmq {

// Where a kernel switch, a variant or an allocator comes from: one record for
// every registry (scenario/KernelSwitches, restart/, tags/), so each prints
// and shows its origin the same way.
struct Provenance {
    std::string thread; // the seed thread (switches; empty for a variant of one)
    std::string subject; // commit subject, or what was proposed
    std::string author;
    std::string commit; // commit id(s), if known
    std::string version; // where it landed, or "proposed"
    std::string effect; // one sentence on what it changes
};

} // namespace blkmq
