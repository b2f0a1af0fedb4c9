#pragma once

#include "sim/Cloned.h"
#include "tags/TagAllocator.h"
#include "topo/Cacheline.h"
#include "topo/Costs.h"

#include <bit>
#include <cstdint>
#include <memory>
#include <vector>

namespace blkmq {

class Rng;

// The bitmap allocators: blk-mq's own bitmap of v3.16 (block/blk-mq-tag.c at
// 4bb659b15699, __bt_get / __bt_get_word / bt_clear_tag) and the sbitmap that
// generalised it (lib/sbitmap.c at v4.14, __sbitmap_queue_get / sbitmap_get /
// __sbitmap_get_word / sbitmap_queue_clear). Both search the same way:
//
// Words of 2^shift bits, each on its own cacheline; shift starts at 6 and
// shrinks while 4 words would hold more than the depth, so a small tag space
// spreads over at least 4 lines (31 tags: 8 words of 4; 255: 8 of 32). Each
// CPU has a hint (v3.16: its ctx's last_tag; sbitmap: alloc_hint), random at
// first. get: from the hint's bit to the end of its word, then that word from
// bit 0, then each later word from bit 0, wrapping; the hint moves to the tag
// after the one taken only if the hinted tag itself was taken (and to 0 from
// depth - 1 on, the kernel's off-by-one); a failed search sets it to 0. put:
// clear the bit and set the hint of the CPU that allocated the request (its
// ctx) to the freed tag.
//
// Costs: tag_get_ns / tag_put_ns; find_next_zero_bit reads each word it
// searches and test_and_set_bit / clear_bit own it, moving its line by
// distance (topo/Cacheline); a free on another CPU than the allocating one
// writes that CPU's hint line. No lock: one step.
//
// The two differ in how their wait queues wake sleepers (waitRules()).
class BitmapTags final : public TagAllocator {
public:
    enum class Kind : std::uint8_t {
        Bitmap, // v3.16 bt_alloc(): wake_cnt = 8, or max(1, depth / 4) if smaller; prepare_to_wait, wake_up
        Sbitmap, // v4.14 sbq_calc_wake_batch(): clamp(depth / 8, 1, 8); exclusive waiters, wake_up_nr
    };
    BitmapTags(Kind kind, int depth, const Topology& topo, const Costs& costs, Rng& rng);

    [[gnu::hot]] Step get(TagAlloc& a, TagAccess& cost) override;
    [[gnu::hot]] void put(int cpu, int tag, int allocCpu, TagAccess& cost) override;
    std::unique_ptr<TagAllocator> clone() const override { return std::make_unique<BitmapTags>(*this); }
    std::size_t bytes() const override { return heapBytes(m_words) + heapBytes(m_hint); }
    void hashState(StateHash& h) const override { h(m_inUse, m_words, m_hint); }
    int depth() const override { return m_depth; }
    int inUse() const override { return m_inUse; }
    bool isSet(int tag) const override;
    TagWaitRules waitRules() const override;

    // The own-line path (TagAllocator::getOwn): every line already this CPU's own and, for get(),
    // the hinted word has a free bit.
    bool hasOwnPath() const override { return true; }
    [[gnu::hot]] int getOwn(int cpu) override
    {
        Hint& h = m_hint[static_cast<std::size_t>(cpu)];
        const int index = h.tag >> m_shift;
        Word& word = m_words[static_cast<std::size_t>(index)];
        const std::uint64_t free = freeBits(word);
        if (!free || !h.line.readIsOwn(cpu) || !word.line.readThenTakeIsOwn(cpu))
            return -1;
        h.line.noteRead(cpu); // a free elsewhere may have written it: not this time
        const int bit = pickBit(free, h.tag & ((1 << m_shift) - 1));
        word.line.write(cpu); // test_and_set_bit_lock, after the read
        word.bits |= 1ULL << bit;
        const int tag = (index << m_shift) + bit;
        usedHint(h, tag, cpu);
        ++m_inUse;
        return tag;
    }
    [[gnu::hot]] bool putOwn(int cpu, int tag, int allocCpu) override
    {
        Word& word = m_words[static_cast<std::size_t>(tag >> m_shift)];
        Hint& h = m_hint[static_cast<std::size_t>(allocCpu)];
        if (!word.line.takeIsOwn(cpu) || !h.line.takeIsOwn(cpu))
            return false;
        word.line.write(cpu); // clear_bit_unlock
        word.bits &= ~(1ULL << (tag & ((1 << m_shift) - 1)));
        --m_inUse;
        h.line.write(cpu);
        h.tag = tag;
        return true;
    }
    int bitsPerWord() const { return 1 << m_shift; }
    int words() const { return static_cast<int>(m_words.size()); }
    int hint(int cpu) const { return m_hint[static_cast<std::size_t>(cpu)].tag; }

private:
    struct Word {
        std::uint64_t bits = 0;
        int depth = 0; // bits in use in this word (the last may be short)
        Cacheline line;
        void hashState(StateHash& h) const { h(bits, line); }
    };
    [[gnu::hot]] int getWord(int w, int hintBit, int cpu, TagAccess& cost); // __sbitmap_get_word / __bt_get_word
    static std::uint64_t freeBits(const Word& w) // the clear bits of the word's depth
    {
        const std::uint64_t valid = w.depth == 64 ? ~0ULL : (1ULL << w.depth) - 1;
        return ~w.bits & valid;
    }
    static int pickBit(std::uint64_t free, int hintBit) // find_next_zero_bit from the hint, then from bit 0
    {
        const std::uint64_t fromHint = free & (~0ULL << hintBit);
        return std::countr_zero(fromHint ? fromHint : free);
    }

    // A CPU's hint (v3.16: its ctx's last_tag; sbitmap: per_cpu alloc_hint) and the line it lives on.
    struct Hint {
        int tag = 0;
        Cacheline line;
        void hashState(StateHash& h) const { h(tag, line); }
    };

    // "Only update the hint if we used it": to the tag after it (0 from depth - 1 on, the kernel's
    // off-by-one), on the CPU's own hint line.
    void usedHint(Hint& h, int tag, int cpu)
    {
        if (tag != h.tag)
            return;
        h.tag = tag + 1 >= m_depth - 1 ? 0 : tag + 1;
        h.line.write(cpu);
    }

    Kind m_kind;
    int m_depth;
    int m_shift = 6;
    int m_inUse = 0;
    std::vector<Word> m_words;
    std::vector<Hint> m_hint; // per CPU
};

} // namespace blkmq
