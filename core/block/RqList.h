#pragma once

#include "block/Request.h"

#include <vector>

namespace blkmq {

// Intrusive FIFO of requests, linked by Request::next within one pool.
struct RqList {
    std::int32_t head = -1;
    std::int32_t tail = -1;
    std::int32_t size = 0;

    bool empty() const { return size == 0; }
    template<class Hash>
    void hashState(Hash& h) const // the order is in the requests' next links
    {
        h(head, tail, size);
    }

    void pushBack(std::vector<Request>& pool, int rq)
    {
        pool[static_cast<std::size_t>(rq)].next = -1;
        if (tail >= 0)
            pool[static_cast<std::size_t>(tail)].next = rq;
        else
            head = rq;
        tail = rq;
        ++size;
    }
    int popFront(std::vector<Request>& pool)
    {
        const int rq = head;
        head = pool[static_cast<std::size_t>(rq)].next;
        if (head < 0)
            tail = -1;
        pool[static_cast<std::size_t>(rq)].next = -1;
        --size;
        return rq;
    }
    // Moves every request of `from` to the front of this list, keeping order.
    void spliceFront(std::vector<Request>& pool, RqList& from)
    {
        if (from.empty())
            return;
        pool[static_cast<std::size_t>(from.tail)].next = head;
        if (tail < 0)
            tail = from.tail;
        head = from.head;
        size += from.size;
        from = RqList {};
    }
    // Takes the whole list (llist_del_all / list_splice_init).
    RqList take()
    {
        RqList out = *this;
        *this = RqList {};
        return out;
    }
};

} // namespace blkmq
