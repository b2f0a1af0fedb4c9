#pragma once

#include "scenario/LiveChange.h"

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

namespace blkmq {

// Thread-safe inbox. Producers (GUI, tests, lessons, session replay) post at any time; a command is
// read against the switch table on the poster's thread (LiveChange::read), and the engine drains
// the changes at the next event boundary. The engine's check is one relaxed load when the inbox is
// empty.
class CommandInbox {
public:
    void post(Command c);
    bool pending() const { return m_pending.load(std::memory_order_acquire); }
    std::vector<LiveChange> drain();

private:
    std::mutex m_mutex;
    std::vector<LiveChange> m_commands;
    std::atomic<bool> m_pending { false };
};

} // namespace blkmq
