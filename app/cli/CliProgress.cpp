#include "CliProgress.h"

#include <csignal>
#include <cstdio>
#include <unistd.h>

namespace blkmq::cli {

namespace {
std::atomic<bool> g_interrupted { false };
void (*g_previous)(int) = SIG_DFL;
extern "C" void onInterrupt(int) { g_interrupted.store(true); }
} // namespace

Progress::Progress(std::string what)
    : m_what(std::move(what))
    , m_tty(isatty(STDERR_FILENO) == 1)
    , m_start(std::chrono::steady_clock::now())
    , m_last(m_start)
{
}

void Progress::update(std::uint64_t done, std::uint64_t total)
{
    if (!m_tty)
        return;
    const auto now = std::chrono::steady_clock::now();
    if (done < total && m_drawn && now - m_last < std::chrono::milliseconds(250))
        return;
    m_last = now;
    const double seconds = std::chrono::duration<double>(now - m_start).count();
    const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0;
    const double left = rate > 0 ? static_cast<double>(total - done) / rate : 0;
    std::fprintf(stderr, "\r%s: %llu of %llu runs, %.1f runs/s, about %.0f s left   ", m_what.c_str(),
        static_cast<unsigned long long>(done), static_cast<unsigned long long>(total), rate, left);
    std::fflush(stderr);
    m_drawn = true;
}

void Progress::done()
{
    if (m_drawn)
        std::fputc('\n', stderr);
    m_drawn = false;
}

InterruptGuard::InterruptGuard()
{
    g_interrupted.store(false);
    g_previous = std::signal(SIGINT, onInterrupt);
}

InterruptGuard::~InterruptGuard() { std::signal(SIGINT, g_previous == SIG_ERR ? SIG_DFL : g_previous); }

const std::atomic<bool>* InterruptGuard::flag() const { return &g_interrupted; }

} // namespace blkmq::cli
