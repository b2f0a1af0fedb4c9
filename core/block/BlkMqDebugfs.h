#pragma once

#include "block/BlockLayer.h"
#include "sim/Result.h"

#include <string>
#include <utility>
#include <vector>

namespace blkmq {

// blk-mq's debugfs files for the lab's devices, with the names and formats Linux 6.1 gives them
// under /sys/kernel/debug/block/ (block/blk-mq-debugfs.c and lib/sbitmap.c at v6.1, 830b3c68c1fb),
// so that a developer can diff the lab's tree against a kernel's. Per hctx: state, flags, type,
// active, run, dispatch, busy, tags and tags_bitmap. What the lab does not model is left out, so a
// diff shows it: the files ctx_map, dispatch_busy, sched_tags, sched_tags_bitmap and the cpuN/
// folders; the tags file's cleared and alloc_hint lines; a request's pointer (the lab writes its
// request number), .op, .cmd_flags, .rq_flags and .internal_tag. Pairs of (path relative to
// /sys/kernel/debug/block, content). An error when a device's tags are not an sbitmap: blk-mq's
// debugfs came with v4.11, long after percpu_ida left blk-mq.
Result<std::vector<std::pair<std::string, std::string>>> blkMqDebugfs(const BlockLayer& block);

} // namespace blkmq
