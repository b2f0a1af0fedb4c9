#include "engine/CommandInbox.h"

namespace blkmq {

void CommandInbox::post(Command c)
{
    LiveChange change = LiveChange::read(c);
    std::lock_guard lock(m_mutex);
    m_commands.push_back(std::move(change));
    m_pending.store(true, std::memory_order_release);
}

std::vector<LiveChange> CommandInbox::drain()
{
    std::lock_guard lock(m_mutex);
    std::vector<LiveChange> out;
    out.swap(m_commands);
    m_pending.store(false, std::memory_order_release);
    return out;
}

} // namespace blkmq
