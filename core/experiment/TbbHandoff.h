#pragma once

#include <mutex>

namespace blkmq {

// TBB hands work to its workers through its own atomics, inside an
// uninstrumented libtbb, so ThreadSanitizer cannot see that what a thread
// wrote before submitting a task happens-before the task. Passing this mutex
// on both sides (before submitting, first thing in the task; last thing in
// the task, after waiting for it) makes the hand-off visible. It is
// constant-initialised, so its own construction needs no ordering, and
// uncontended in practice (a lock and an unlock per hand-off).
//
// Qt's queued calls hand a closure over the same way, through an uninstrumented
// event queue: the posting thread holds the mutex while it builds and posts the
// closure (hold()), and the closure passes it first thing, before it reads
// what it captured.
class TbbHandoff {
public:
    static void pass() { std::lock_guard lock(s_mutex); }
    [[nodiscard]] static std::unique_lock<std::mutex> hold() { return std::unique_lock(s_mutex); }

private:
    static constinit inline std::mutex s_mutex {};
};

} // namespace blkmq
