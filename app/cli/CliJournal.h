#pragma once

#include "experiment/Experiment.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace blkmq::cli {

// One thing the runs depend on, in the journal's first line as `name=value` (a hash where the
// thing is long), and named by `what` when a resumed command's differs: {"fio", hash, "--fio (the
// job file's bytes)"}.
struct JournalPart {
    std::string name;
    std::string value;
    std::string what;
};
// FNV-1a of `text` as 16 hex digits: a part's value.
std::string journalHash(const std::string& text);

// The journal of long work (OUT.journal beside a sweep's CSV, or explore's and ab's JSON): a line
// that names the work by its parts, a header (a sweep's CSV header), then one line per finished run
// as soon as it is done, so that a killed command leaves the runs it finished and --resume goes on
// after them. Each run's line ends in a seal, a hash of the work and the line, so a line changed
// after it was written is refused, not resumed from. Written with write(2) on an O_APPEND
// descriptor: what was written survives the process, not the machine (no fsync: a journal is for
// a killed command, not a lost machine).
class Journal {
public:
    Journal() = default;
    Journal(const Journal&) = delete;
    Journal& operator=(const Journal&) = delete;
    ~Journal();
    // Opens it for `command`'s work. Resuming, a journal of other work (a part differs) is refused,
    // naming each part that differs; a line whose seal does not match is refused, naming the line.
    // The lines after the header that `accept(line, n)` (the line without its seal) takes as the
    // n-th (0-based) finished run are kept, up to the first it does not (a line cut short by the
    // kill), and returned in `lines` (without seals), n in `done`. Not resuming, or no journal:
    // starts one. Returns an error or empty.
    std::string open(const std::string& path, const std::string& command, const std::vector<JournalPart>& parts,
        const std::string& header, bool resume,
        const std::function<bool(const std::string& line, std::uint64_t n)>& accept, std::string& lines,
        std::uint64_t& done);
    // One finished run, a line ending in '\n'. The test hook BLKMQLAB_FAULT_KILL_AFTER_ROWS=N kills
    // the process with SIGKILL when the line it writes is the journal's N-th (so a resumed run that
    // starts past N finishes): tst_cli and the Slurm test kill sweeps, explores and ABs that way.
    void append(const std::string& line);
    // The output is written whole: the journal has served.
    void remove();

private:
    std::string seal(const std::string& line) const;

    std::string m_path;
    std::string m_work; // the first line: what every seal covers
    int m_fd = -1;
    std::uint64_t m_lines = 0; // finished runs in the journal
};

// A run's result as one journal line (JSON, doubles that read back as the same bits, NaN and
// infinities by name), and back; nullopt for a line that is not one.
std::string journalLine(const RunResult& r);
std::optional<RunResult> fromJournalLine(const std::string& line);

// Opens OUT.journal for explore and ab (`command`, what the runs depend on in `parts`; the lab's
// model is added): the results of the runs it holds come back in `resumed`, in grid order, for
// Experiment::Options. Returns an error or empty; `resume` without OUT a file is the caller's usage
// error.
std::string openResultJournal(Journal& journal, const std::string& out, const std::string& command,
    std::vector<JournalPart> parts, bool resume, std::vector<RunResult>& resumed);

} // namespace blkmq::cli
