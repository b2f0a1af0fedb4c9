#pragma once

#include <cstdint>

namespace blkmq {

// What one tag operation cost the CPU that did it.
struct TagAccess {
    std::int64_t ns = 0;
    std::uint32_t cachelineTransfers = 0;
    bool local = true; // touched only cachelines this CPU already owned
};

// One hw queue's driver tags (struct blk_mq_tags). Allocation never sleeps:
// get() returns -1 when every tag is in use and the caller decides to wait.
class TagAllocator {
public:
    virtual ~TagAllocator() = default;
    virtual int get(int cpu, TagAccess& cost) = 0;
    virtual void put(int cpu, int tag, TagAccess& cost) = 0;
    virtual int depth() const = 0;
    virtual int inUse() const = 0;
    virtual bool isSet(int tag) const = 0;
};

} // namespace blkmq
