#pragma once

#include <atomic>
#include <chrono>
#include <string>

namespace blkmq::cli {

// A progress line on stderr for long sweeps and explores: runs done, rate and time left, redrawn in
// place at most a few times a second. Nothing at all when stderr is not a terminal (a log, a pipe,
// a Slurm job's output).
class Progress {
public:
    explicit Progress(std::string what);
    void update(std::uint64_t done, std::uint64_t total);
    void done(); // ends the line it drew, if any

private:
    std::string m_what;
    bool m_tty;
    bool m_drawn = false;
    std::chrono::steady_clock::time_point m_start, m_last;
};

// While alive, SIGINT (Ctrl-C) sets flag() instead of killing the process: the command stops
// starting runs, writes the complete rows it has and exits with kExitInterrupted. The previous
// handler comes back when it goes.
class InterruptGuard {
public:
    InterruptGuard();
    ~InterruptGuard();
    InterruptGuard(const InterruptGuard&) = delete;
    InterruptGuard& operator=(const InterruptGuard&) = delete;
    const std::atomic<bool>* flag() const;
};

} // namespace blkmq::cli
