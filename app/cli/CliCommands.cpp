#include "CliCommands.h"

#include "Cli.h"

#include <sstream>

namespace blkmq::cli {

const std::vector<CommandInfo>& commands()
{
    static const std::vector<CommandInfo> table = {
        { "run",
            R"(blkmqlab-cli run [FILE|JOB.fio] [--preset NAME] [--fio JOB.fio] [--set key=value]... [--duration D] [--seed N]
                 [--json FILE|-] [--csv FILE] [--fail-on-stall] [--quiet] [--until COND]
                 [--function-profile blk_mq_sched_restart]
                 [--trace FILE.json [--trace-window FROM:TO] [--trace-cap N]] [--save-session FILE.blkmqlab]
                 [--debugfs DIR]
blkmqlab-cli run --session FILE.blkmqlab [--at TIME] [--json FILE|-] [--csv FILE])",
            "one run: its summary, time series, Perfetto trace, ftrace-like function profile; blk-mq's debugfs files "
            "where it stopped, as Linux 6.1 writes them; a session (docs/sessions.md) replayed to where it stood, or "
            "to TIME",
            runCommand },
        { "explore",
            R"(blkmqlab-cli explore [FILE] [--preset NAME] [--set key=value]... [--seeds N] [--first-seed S]
                     [--duration D] [--threads T] [--json FILE|-] [--fail-on-stall]
                     [--variant SETTINGS]... [--save-counterexample FILE[.blkmqlab]] [--resume])",
            "stall hunting: per kernel variant, the seeds that stall, p with its 95% Wilson interval, and the "
            "earliest stall (saved as a scenario, or a session at it)",
            exploreCommand },
        { "check",
            R"(blkmqlab-cli check [FILE] [--preset NAME] [--set key=value]... [--property P] [--max-runs N]
                   [--max-depth N] [--max-states N] [--latency-points N] [--lock-boundaries] [--json FILE|-]
                   [--save-counterexample FILE[.blkmqlab]])",
            "every ordering of a small configuration's choice points: the property holds for all of them within "
            "the bounds, or the shortest run that violates it (--properties lists them: no-stall, no-tag-lost, "
            "no-missed-wakeup, all-complete; docs/check.md)",
            checkCommand },
        { "sweep",
            R"(blkmqlab-cli sweep SWEEP.json [--set key=value]... [--threads T] [--csv FILE|-] [--json FILE|-]
                   [--shard I/N] [--yes] [--resume] [--fail-on-stall] [--chart FILE.png|svg|pdf --metric ID [--x AXIS]]
blkmqlab-cli sweep [FILE] [--preset NAME] --vary key=v1,v2,... [...])",
            "a grid over scenario fields, kernel switches and seeds (docs/sweep.md); --vary is the one-field "
            "shorthand",
            sweepCommand },
        { "merge", "blkmqlab-cli merge SHARD.csv... [--csv FILE|-]", "joins the shards of one sweep into its CSV",
            mergeCommand },
        { "ab",
            R"(blkmqlab-cli ab [FILE] [--preset NAME] [--a SETTINGS] --b SETTINGS [--seeds K] [--first-seed S]
                [--set key=value]... [--threads T] [--json FILE|-] [--resume])",
            "A and B on the same K seeds: per metric A, B, B/A +- its spread, and whether a paired t-test over the "
            "seeds (95%) finds B different from A",
            abCommand },
        { "oracle",
            R"(blkmqlab-cli oracle [FILE] [--preset NAME] [--fio JOB.fio] [--set key=value]... [--json FILE|-]
                    [--cache DIR] [--timeout D] [--console FILE] [--debugfs DIR]
blkmqlab-cli oracle --case CASE.json [...])",
            "the real kernel as referee: Debian's Linux 6.1 under QEMU runs the same fio job on the same machine; "
            "what each counted, side by side (docs/oracle.md); --case judges the figures by its bands (exit 4 if "
            "one leaves its band); --figures lists them",
            oracleCommand },
        { "fio-keys", "blkmqlab-cli fio-keys", "the fio job file keys the lab reads, and what it does with each",
            fioKeysCommand },
        { "outputs", "blkmqlab-cli outputs",
            "every file each command can write (two of one command on one file are refused)", outputsCommand },
        { "fields", "blkmqlab-cli fields [FORMAT]",
            "every field of an input format (scenario, sweep, lesson, session, hwloc), or every option of the "
            "commands (options): its kind and what it takes",
            fieldsCommand },
        { "presets", "blkmqlab-cli presets", "the scenario and topology presets", presetsCommand },
        { "lessons", "blkmqlab-cli lessons", "the guided lessons, and the values their expectations name",
            lessonsCommand },
        { "lesson", "blkmqlab-cli lesson NAME|FILE [--check]",
            "plays a lesson step by step; --check prints only failures and exits 4 when an expectation does not "
            "hold",
            lessonCommand },
        { "topology", "blkmqlab-cli topology <spec | preset | file.xml | host>",
            "a machine's tree of nodes, packages, caches, cores and threads, and its distance matrix",
            topologyCommand },
        { "patches", "blkmqlab-cli patches", "every kernel switch (kernel.*): patches, variants, their commits",
            patchesCommand },
        { "costs", "blkmqlab-cli costs", "the cost parameters and their defaults (docs/model.md)", costsCommand },
        { "metrics", "blkmqlab-cli metrics", "every metric: id, unit, plot, how it is computed (docs/scenario.md)",
            metricsCommand },
        { "limits", "blkmqlab-cli limits", "the limits on inputs and outputs (docs/limits.md)", limitsCommand },
        { "validate", "blkmqlab-cli validate [baseline|completion|restart|tags|all]",
            "the threads' figures beside the simulated ones, and the counts per family", validateCommand },
        { "help", "blkmqlab-cli help [commands]",
            "this text (commands: only the usage above); COMMAND --help prints one command's usage and options",
            nullptr }, // main() prints it: the notes and conditions are its own
    };
    return table;
}

const CommandInfo* findCommand(std::string_view name)
{
    for (const CommandInfo& c : commands())
        if (name == c.name)
            return &c;
    return nullptr;
}

std::string commandUsage(const CommandInfo& c, int indent)
{
    const std::string pad(static_cast<std::size_t>(indent), ' ');
    std::string out;
    std::istringstream lines(c.synopsis);
    for (std::string line; std::getline(lines, line);)
        out += pad + line + "\n";
    // The summary, wrapped at 100 columns under the command's arguments.
    const std::string under(std::string("blkmqlab-cli ").size() + std::string(c.name).size() + 1, ' ');
    std::istringstream words(c.summary);
    std::string line;
    for (std::string w; words >> w;) {
        if (!line.empty() && pad.size() + under.size() + line.size() + 1 + w.size() > 100) {
            out += pad + under + line + "\n";
            line.clear();
        }
        line += (line.empty() ? "" : " ") + w;
    }
    if (!line.empty())
        out += pad + under + line + "\n";
    return out;
}

std::string allCommandsUsage(int indent)
{
    std::string out;
    for (const CommandInfo& c : commands())
        out += commandUsage(c, indent);
    return out;
}

std::string commandNames()
{
    std::string out;
    for (const CommandInfo& c : commands())
        out += (out.empty() ? "" : ", ") + std::string(c.name);
    return out;
}

} // namespace blkmq::cli
