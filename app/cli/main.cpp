#include "Cli.h"
#include "CliCommands.h"
#include "CliOptions.h"

#include "engine/StopCondition.h"
#include "io/Text.h"

#include <algorithm>
#include <exception>
#include <iostream>
#include <streambuf>
#include <string>

namespace {

const char* kHead = "blkmqlab-cli — the Linux blk-mq laboratory, headless\n\nusage:\n";

const char* kNotes = R"(
`blkmqlab-cli COMMAND --help` prints a command's usage and options; --opt=value is --opt value.
Durations take ns, us, ms or s (e.g. 100ms). --set overrides any scenario field
by dotted path; array elements by index or by name (devices.nvme0.rq_affinity=2).
--fio JOB.fio (or a FILE ending in .fio) gives the workload as a fio job file: [global]
and job sections with the keys the lab models (docs/scenario.md); an error names the line.
Exit status: 0 ok, 1 output not written (or the oracle's QEMU failed), 2 usage or
validation error, 3 stall (with --fail-on-stall) or check's property violated, 4 a lesson's
expectation or an oracle case's band does not hold, 5 check's search ended at a bound, 130 interrupted
(Ctrl-C: sweep and explore write the complete rows so far). Scenario format: docs/scenario.md.

--function-profile prints ftrace's function profile of a kernel function:
per CPU, calls, wall time from entry to return (interrupts nested inside
included), average and s² (µs²); the summary JSON always has it.

--until stops a run early, at the first event after which COND holds
(A|B: either); the summary covers the run up to there. COND is one of:
)";

std::string usage() { return kHead + blkmq::cli::allCommandsUsage(2) + kNotes + blkmq::stop::help(); }

} // namespace

// Standard error as a terminal may show it: every message passes terminalSafe(), so a name, path or
// value a message quotes can never move the cursor, clear the screen or retitle the window, whatever
// the message's author forgot (progress lines, written with fprintf, hold only numbers).
class TerminalSafeErr : public std::streambuf {
public:
    explicit TerminalSafeErr(std::streambuf* to)
        : m_to(to)
    {
    }

protected:
    int_type overflow(int_type c) override
    {
        if (c != traits_type::eof())
            m_pending.push_back(traits_type::to_char_type(c));
        return m_pending.size() >= 4096 && sync() != 0 ? traits_type::eof() : traits_type::not_eof(c);
    }
    std::streamsize xsputn(const char* s, std::streamsize n) override
    {
        m_pending.append(s, static_cast<std::size_t>(n));
        return m_pending.size() >= 4096 && sync() != 0 ? 0 : n;
    }
    int sync() override
    {
        // Everything but an unfinished UTF-8 sequence at the end (the rest of it comes next).
        std::size_t keep = 0;
        for (std::size_t k = 1; k <= std::min<std::size_t>(3, m_pending.size()); ++k) {
            const auto c = static_cast<unsigned char>(m_pending[m_pending.size() - k]);
            if ((c >> 6) == 0x2)
                continue;
            const std::size_t need = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 1;
            keep = need > k ? k : 0;
            break;
        }
        const std::string out = blkmq::terminalSafe(std::string_view(m_pending).substr(0, m_pending.size() - keep));
        m_pending.erase(0, m_pending.size() - keep);
        if (m_to->sputn(out.data(), static_cast<std::streamsize>(out.size()))
            != static_cast<std::streamsize>(out.size()))
            return -1;
        return m_to->pubsync();
    }

private:
    std::streambuf* m_to;
    std::string m_pending;
};

int main(int argc, char** argv)
{
    // Never destroyed: a message written while statics are destroyed still finds it.
    std::cerr.rdbuf(new TerminalSafeErr(std::cerr.rdbuf()));
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) {
        std::cerr << usage();
        return blkmq::cli::kExitUsage;
    }
    const std::string cmd = args.front();
    args.erase(args.begin());
    if (cmd == "help" || cmd == "--help" || cmd == "-h") {
        if (cmd == "help" && args.size() == 1 && args[0] == "commands")
            std::cout << blkmq::cli::allCommandsUsage(0); // the README's block
        else if (cmd == "help" && !args.empty() && !blkmq::cli::asksForHelp(cmd, args)) {
            std::cerr << "blkmqlab-cli help: takes nothing, or 'commands' (see blkmqlab-cli help)\n";
            return blkmq::cli::kExitUsage;
        } else
            std::cout << usage();
        return blkmq::cli::flushStdout() ? blkmq::cli::kExitOk : blkmq::cli::kExitIo;
    }
    // A command that printed its output to a stdout that could not take it (a full disk, a closed
    // pipe) fails with exit 1, whatever it returned.
    const blkmq::cli::CommandInfo* command = blkmq::cli::findCommand(cmd);
    if (!command) {
        std::cerr << "blkmqlab-cli: unknown command '" << blkmq::printable(cmd)
                  << "' (commands: " << blkmq::cli::commandNames() << ")\n";
        return blkmq::cli::kExitUsage;
    }
    if (blkmq::cli::asksForHelp(cmd, args)) {
        std::cout << blkmq::cli::commandHelp(cmd, blkmq::cli::commandUsage(*command, 2));
        return blkmq::cli::flushStdout() ? blkmq::cli::kExitOk : blkmq::cli::kExitIo;
    }
    args = blkmq::cli::splitOptionValues(cmd, args);
    if (const std::string e = blkmq::cli::optionProblem(cmd, args); !e.empty()) {
        std::cerr << "blkmqlab-cli " << cmd << ": " << e << " (see blkmqlab-cli help)\n";
        return blkmq::cli::kExitUsage;
    }
    int rc = blkmq::cli::kExitIo;
    try {
        rc = command->handler(args);
    } catch (const std::exception& e) {
        // Every input is checked where it is read, so an exception that gets here is the lab's own
        // fault: one line naming it, never an abort (tst_cli's hostile inputs fail on this line).
        std::cerr << "blkmqlab-cli " << cmd << ": internal error: " << blkmq::printable(e.what(), 200)
                  << " (a bug in the lab; please report it with the command)\n";
        return blkmq::cli::kExitIo;
    }
    return blkmq::cli::flushStdout() ? rc : blkmq::cli::kExitIo;
}
