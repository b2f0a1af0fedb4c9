#pragma once

namespace blkmq {

// The completion patches of the 2020 series (the 2020 completion thread) and the two
// alternatives discussed there, as switched in kernel.patches (scenario/KernelSwitches.cpp).
struct CompletionPatches {
    bool noRemoteThreaded = false; // complete-no-remote-threaded (patch 1/3)
    bool remoteSoftirq = false; // complete-remote-softirq (patch 2/3)
    bool llist = false; // complete-llist (patch 3/3)
    bool localBh = false; // complete-local-bh
    bool processDirect = false; // complete-process-direct
    bool singleCtxLocal = false; // complete-single-ctx-local (v6.1): an hctx with one CPU completes locally
};

} // namespace blkmq
