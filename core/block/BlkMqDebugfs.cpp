#include "block/BlkMqDebugfs.h"

#include "tags/BitmapTags.h"

#include <cstdio>

namespace blkmq {

namespace {

// blk_flags_show(): the names of the set bits, in bit order, joined by '|'.
std::string flagNames(const std::vector<std::pair<bool, const char*>>& bits)
{
    std::string out;
    for (const auto& [set, name] : bits)
        if (set)
            out += (out.empty() ? "" : "|") + std::string(name);
    return out;
}

// sbitmap_bitmap_show(): the bits, word by word (each its depth), as bytes: 16 to a line after the
// offset, a space before each pair.
std::string bitmapText(const BitmapTags& bits)
{
    std::string out;
    char buf[16];
    unsigned byte = 0, byteBits = 0, offset = 0;
    const auto emit = [&] {
        if ((offset & 0xf) == 0) {
            if (offset)
                out += '\n';
            std::snprintf(buf, sizeof buf, "%08x:", offset);
            out += buf;
        }
        if ((offset & 1) == 0)
            out += ' ';
        std::snprintf(buf, sizeof buf, "%02x", byte);
        out += buf;
        byte = byteBits = 0;
        ++offset;
    };
    for (int tag = 0; tag < bits.depth(); ++tag) {
        byte |= (bits.isSet(tag) ? 1u : 0u) << byteBits;
        // The kernel gathers bits across word boundaries: tag t is bit t % 8 of byte t / 8.
        if (++byteBits == 8)
            emit();
    }
    if (byteBits)
        emit();
    if (offset)
        out += '\n';
    return out;
}

} // namespace

Result<std::vector<std::pair<std::string, std::string>>> blkMqDebugfs(const BlockLayer& block)
{
    using Files = std::vector<std::pair<std::string, std::string>>;
    Files files;
    const auto& queues = block.queues();
    for (std::size_t d = 0; d < queues.size(); ++d) {
        const RequestQueue& q = queues[d];
        for (int i = 0; i < q.nrHwQueues; ++i) {
            const int h = q.firstHctx + i;
            const Hctx& hctx = block.hctxs()[static_cast<std::size_t>(h)];
            const BlkMqTags& tags = block.tags(hctx.tags);
            const auto* bits = dynamic_cast<const BitmapTags*>(&tags.alloc()); // what the tags file shows
            if (!bits)
                return Result<Files>::failure("devices[" + std::to_string(d) + "] (" + q.spec.name
                    + "): its tags are not an sbitmap; blk-mq's debugfs files came with Linux 4.11, when tags were");
            const std::string dir = q.spec.name + "/hctx" + std::to_string(i) + "/";
            // enum { BLK_MQ_S_STOPPED, BLK_MQ_S_TAG_ACTIVE, BLK_MQ_S_SCHED_RESTART, BLK_MQ_S_INACTIVE }
            files.emplace_back(dir + "state",
                flagNames({ { hctx.stopped, "STOPPED" }, { hctx.tagUse.active, "TAG_ACTIVE" },
                    { block.restart().marked(h), "SCHED_RESTART" } })
                    + "\n");
            // BLK_MQ_F_SHOULD_MERGE (set by every driver the lab models), BLK_MQ_F_TAG_QUEUE_SHARED
            files.emplace_back(dir + "flags",
                "alloc_policy=FIFO "
                    + flagNames({ { true, "SHOULD_MERGE" }, { hctx.tagUse.shared, "TAG_QUEUE_SHARED" } }) + "\n");
            files.emplace_back(dir + "type", "default\n");
            // __blk_mq_active_requests(): hctx->nr_active, counted only while the tags are shared
            files.emplace_back(dir + "active", std::to_string(hctx.tagUse.shared ? hctx.tagUse.held : 0) + "\n");
            files.emplace_back(dir + "run", std::to_string(hctx.run) + "\n");
            // __blk_mq_debugfs_rq_show(), less what the lab does not model (the header says what)
            const auto rqLine = [&](int rq, const char* state) {
                return "rq#" + std::to_string(rq) + " {.state=" + state
                    + ", .tag=" + std::to_string(block.request(rq).tag) + "}\n";
            };
            std::string dispatch;
            for (int rq = hctx.dispatch.head; rq >= 0; rq = block.request(rq).next)
                dispatch += rqLine(rq, "idle"); // a request back on hctx->dispatch was requeued: idle
            files.emplace_back(dir + "dispatch", dispatch);
            std::string busy; // started requests with a tag of this hctx (blk_mq_tagset_busy_iter)
            for (int rq = 0; rq < static_cast<int>(block.poolSize()); ++rq) {
                const Request& r = block.request(rq);
                if (r.hctx == h && r.tag >= 0 && (r.state == RqState::AtDevice || r.state == RqState::Complete))
                    busy += rqLine(rq, r.state == RqState::AtDevice ? "in_flight" : "complete");
            }
            files.emplace_back(dir + "busy", busy);
            // blk_mq_debugfs_tags_show() and sbitmap_queue_show()
            std::string t = "nr_tags=" + std::to_string(bits->depth()) + "\nnr_reserved_tags=0\nactive_queues="
                + std::to_string(tags.activeQueues()) + "\n\nbitmap_tags:\ndepth=" + std::to_string(bits->depth())
                + "\nbusy=" + std::to_string(bits->inUse()) + "\nbits_per_word=" + std::to_string(bits->bitsPerWord())
                + "\nmap_nr=" + std::to_string(bits->words()) + "\nwake_batch=" + std::to_string(tags.wakeBatch())
                + "\nwake_index=" + std::to_string(tags.wakeIndex()) + "\nws_active=" + std::to_string(tags.waiting())
                + "\nws={\n";
            for (int w = 0; w < BlkMqTags::kWaitQueues; ++w)
                t += std::string("\t{.wait=") + (tags.waitQueueActive(w) ? "active" : "inactive") + "},\n";
            t += "}\nround_robin=0\nmin_shallow_depth=4294967295\n";
            files.emplace_back(dir + "tags", t);
            files.emplace_back(dir + "tags_bitmap", bitmapText(*bits));
        }
    }
    return files;
}

} // namespace blkmq
