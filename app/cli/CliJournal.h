#pragma once

#include "experiment/Experiment.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace blkmq::cli {

// The journal of long work (OUT.journal beside a sweep's CSV, or explore's and ab's JSON): a
// preamble that names the work, then one line per finished run as soon as it is done, so that a
// killed command leaves the runs it finished and --resume goes on after them. Written with
// write(2) on an O_APPEND descriptor: what was written survives the process, not the machine.
class Journal {
public:
    Journal() = default;
    Journal(const Journal&) = delete;
    Journal& operator=(const Journal&) = delete;
    ~Journal();
    // Opens it; resuming, keeps the lines after the preamble that `accept(line, n)` takes as the n-th
    // (0-based) finished run, up to the first it does not (a line cut short by the kill, another
    // order), and returns them in `lines`, n in `done`. Not resuming, or no journal: starts one.
    // Returns an error or empty.
    std::string open(const std::string& path, const std::string& preamble, bool resume,
        const std::function<bool(const std::string& line, std::uint64_t n)>& accept, std::string& lines,
        std::uint64_t& done);
    // One finished run, a line ending in '\n'. The test hook BLKMQLAB_FAULT_KILL_AFTER_ROWS=N kills
    // the process with SIGKILL when the line it writes is the journal's N-th (so a resumed run that
    // starts past N finishes): tst_cli and the Slurm test kill sweeps, explores and ABs that way.
    void append(const std::string& line);
    // The output is written whole: the journal has served.
    void remove();

private:
    std::string m_path;
    int m_fd = -1;
    std::uint64_t m_lines = 0; // finished runs in the journal
};

// A run's result as one journal line (JSON, doubles that read back as the same bits, NaN and
// infinities by name), and back; nullopt for a line that is not one.
std::string journalLine(const RunResult& r);
std::optional<RunResult> fromJournalLine(const std::string& line);

// Opens OUT.journal for explore and ab (`command`, what identifies the work in `identity`): the
// results of the runs it holds come back in `resumed`, in grid order, for Experiment::Options.
// Returns an error or empty; `resume` without OUT a file is the caller's usage error.
std::string openResultJournal(Journal& journal, const std::string& out, const std::string& command,
    const std::string& identity, bool resume, std::vector<RunResult>& resumed);

} // namespace blkmq::cli
