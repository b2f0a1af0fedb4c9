#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

namespace blkmq {

// A live change requested from another thread: set a scenario field that
// may change while running (a patch switch, rq_affinity, threadirqs...).
// Same dotted path and value syntax as `--set`.
struct Command {
    std::string path;
    std::string value;
    bool operator==(const Command&) const = default;
};

// Thread-safe inbox. Producers (GUI, tests) post at any time; the engine
// drains it at the next event boundary. The engine's check is one relaxed
// load when the inbox is empty.
class CommandInbox {
public:
    void post(Command c);
    bool pending() const { return m_pending.load(std::memory_order_acquire); }
    std::vector<Command> drain();

private:
    std::mutex m_mutex;
    std::vector<Command> m_commands;
    std::atomic<bool> m_pending { false };
};

} // namespace blkmq
