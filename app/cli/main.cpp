#include "Cli.h"
#include "CliOptions.h"

#include "engine/StopCondition.h"
#include "io/Text.h"

#include <algorithm>
#include <iostream>
#include <streambuf>
#include <string>

namespace {

const char* kUsage = R"(blkmqlab-cli — the Linux blk-mq laboratory, headless

usage:
  blkmqlab-cli run [FILE|JOB.fio] [--preset NAME] [--fio JOB.fio] [--set key=value]... [--duration D] [--seed N]
                   [--json FILE|-] [--csv FILE] [--fail-on-stall] [--quiet] [--until COND]
                   [--function-profile blk_mq_sched_restart]
                   [--trace FILE.json [--trace-window FROM:TO] [--trace-cap N]] [--save-session FILE.blkmqlab]
                   [--debugfs DIR]   blk-mq's debugfs files where the run stopped, as Linux 6.1 writes them
  blkmqlab-cli run --session FILE.blkmqlab [--at TIME] [--json FILE|-] [--csv FILE]
                   a session (docs/sessions.md) replayed to where it stood, or to TIME: its summary there
  blkmqlab-cli explore [FILE] [--preset NAME] [--set key=value]... [--seeds N] [--first-seed S]
                       [--duration D] [--threads T] [--json FILE|-] [--fail-on-stall]
                       [--variant SETTINGS]... [--save-counterexample FILE[.blkmqlab]] [--resume]
                       stall hunting: per kernel variant, the seeds that stall, p with its 95%
                       Wilson interval, and the earliest stall (saved as a scenario, or a session at it)
  blkmqlab-cli check [FILE] [--preset NAME] [--set key=value]... [--property P] [--max-runs N]
                     [--max-depth N] [--max-states N] [--latency-points N] [--lock-boundaries] [--json FILE|-]
                     [--save-counterexample FILE[.blkmqlab]]
                     every ordering of a small configuration's choice points: the property holds
                     for all of them within the bounds, or the shortest run that violates it
                     (--properties lists the properties: no-stall, no-tag-lost, no-missed-wakeup,
                     all-complete; docs/check.md)
  blkmqlab-cli sweep SWEEP.json [--set key=value]... [--threads T] [--csv FILE|-] [--json FILE|-]
                     [--shard I/N] [--yes] [--resume] [--fail-on-stall] [--chart FILE.png|svg|pdf --metric ID [--x AXIS]]
                     a grid over scenario fields, kernel switches and seeds (docs/sweep.md)
  blkmqlab-cli sweep [FILE] [--preset NAME] --vary key=v1,v2,... [...]   one field, the shorthand
  blkmqlab-cli merge SHARD.csv... [--csv FILE|-]   joins the shards of one sweep into its CSV
  blkmqlab-cli ab [FILE] [--preset NAME] [--a SETTINGS] --b SETTINGS [--seeds K] [--first-seed S]
                  [--set key=value]... [--threads T] [--json FILE|-] [--resume]
                  A and B on the same K seeds: per metric A, B, B/A +- its spread, and whether a
                  paired t-test over the seeds (95%) finds B different from A
  blkmqlab-cli oracle [FILE] [--preset NAME] [--fio JOB.fio] [--set key=value]... [--json FILE|-]
                      [--cache DIR] [--timeout D] [--console FILE] [--debugfs DIR]
  blkmqlab-cli oracle --case CASE.json [...]   the real kernel as referee: Debian's Linux 6.1 under
                      QEMU runs the same fio job on the same machine; what each counted, side by
                      side (docs/oracle.md); --case judges the figures by its bands (exit 4 if one
                      leaves its band); --figures lists them
  blkmqlab-cli fio-keys       the fio job file keys the lab reads, and what it does with each
  blkmqlab-cli outputs        every file each command can write (two of one command on one file are refused)
  blkmqlab-cli fields [FORMAT] every field of an input format (scenario, sweep, lesson, session, hwloc),
                              or every option of the commands (options): its kind and what it takes
  blkmqlab-cli presets
  blkmqlab-cli lessons        the guided lessons, and the values their expectations name
  blkmqlab-cli lesson NAME|FILE [--check]   plays a lesson step by step; --check prints only
                              failures and exits 4 when an expectation does not hold
  blkmqlab-cli topology <spec | preset | file.xml | host>
  blkmqlab-cli patches        every kernel switch (kernel.*): patches, variants, their commits
  blkmqlab-cli costs          the cost parameters and their defaults (docs/model.md)
  blkmqlab-cli metrics        every metric: id, unit, plot, how it is computed (docs/scenario.md)
  blkmqlab-cli limits         the limits on inputs and outputs (docs/limits.md)
  blkmqlab-cli validate [baseline|completion|restart|tags|all]   the threads' figures beside the simulated ones
  blkmqlab-cli help

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
        std::cerr << kUsage << blkmq::stop::help();
        return blkmq::cli::kExitUsage;
    }
    const std::string cmd = args.front();
    args.erase(args.begin());
    if (cmd == "help" || cmd == "--help" || cmd == "-h") {
        std::cout << kUsage << blkmq::stop::help();
        return blkmq::cli::flushStdout() ? blkmq::cli::kExitOk : blkmq::cli::kExitIo;
    }
    // Every command, by name; a command that printed its output to a stdout that could not take it
    // (a full disk, a closed pipe) fails with exit 1, whatever it returned.
    using Command = int (*)(const std::vector<std::string>&);
    static const std::pair<const char*, Command> kCommands[] = {
        { "run", blkmq::cli::runCommand },
        { "oracle", blkmq::cli::oracleCommand },
        { "fio-keys", blkmq::cli::fioKeysCommand },
        { "outputs", blkmq::cli::outputsCommand },
        { "fields", blkmq::cli::fieldsCommand },
        { "explore", blkmq::cli::exploreCommand },
        { "check", blkmq::cli::checkCommand },
        { "sweep", blkmq::cli::sweepCommand },
        { "merge", blkmq::cli::mergeCommand },
        { "ab", blkmq::cli::abCommand },
        { "presets", blkmq::cli::presetsCommand },
        { "topology", blkmq::cli::topologyCommand },
        { "validate", blkmq::cli::validateCommand },
        { "patches", blkmq::cli::patchesCommand },
        { "costs", blkmq::cli::costsCommand },
        { "metrics", blkmq::cli::metricsCommand },
        { "limits", blkmq::cli::limitsCommand },
        { "lessons", blkmq::cli::lessonsCommand },
        { "lesson", blkmq::cli::lessonCommand },
    };
    for (const auto& [name, command] : kCommands)
        if (cmd == name) {
            if (blkmq::cli::asksForHelp(cmd, args)) {
                std::cout << blkmq::cli::commandHelp(cmd, kUsage);
                return blkmq::cli::flushStdout() ? blkmq::cli::kExitOk : blkmq::cli::kExitIo;
            }
            args = blkmq::cli::splitOptionValues(cmd, args);
            if (const std::string e = blkmq::cli::optionProblem(cmd, args); !e.empty()) {
                std::cerr << "blkmqlab-cli " << cmd << ": " << e << " (see blkmqlab-cli help)\n";
                return blkmq::cli::kExitUsage;
            }
            const int rc = command(args);
            return blkmq::cli::flushStdout() ? rc : blkmq::cli::kExitIo;
        }
    std::cerr << "blkmqlab-cli: unknown command '" << blkmq::printable(cmd)
              << "' (commands: run, explore, check, sweep, merge, ab, oracle, fio-keys, outputs, fields, presets, "
                 "lessons, lesson, "
                 "topology, "
                 "patches, costs, metrics, limits, validate, help)\n";
    return blkmq::cli::kExitUsage;
}
