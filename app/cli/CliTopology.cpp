#include "Cli.h"
#include "CliOptions.h"

#include "experiment/Sweep.h"
#include "experiment/Validation.h"
#include "io/Limits.h"
#include "io/Text.h"
#include "lesson/Lesson.h"
#include "io/Outputs.h"
#include "metrics/Metrics.h"
#include "scenario/FioJobFile.h"
#include "scenario/KernelSwitches.h"
#include "scenario/ScenarioLoader.h"
#include "session/Session.h"
#include "sim/Duration.h"
#include "topo/Costs.h"
#include "topo/TopologyLoader.h"

#include <algorithm>
#include <iostream>

namespace blkmq::cli {

int topologyCommand(const std::vector<std::string>& args)
{
    if (args.size() != 1) {
        std::cerr << "blkmqlab-cli topology: expected one argument: a spec (2n:1p:8c:2t), a preset, an hwloc XML file "
                     "or 'host'\n";
        return kExitUsage;
    }
    auto topo = TopologyLoader::load(args.front());
    if (!topo) {
        std::cerr << "blkmqlab-cli: " << topo.error() << '\n';
        return kExitUsage;
    }
    std::cout << topo->describeTree() << '\n' << topo->describeDistances();
    return kExitOk;
}

int presetsCommand(const std::vector<std::string>& args)
{
    if (!args.empty()) {
        std::cerr << "blkmqlab-cli presets: takes no arguments\n";
        return kExitUsage;
    }
    std::cout << "scenario presets (blkmqlab-cli run --preset NAME):\n";
    for (const auto& p : ScenarioLoader::presets())
        std::cout << "  " << p.name << std::string(p.name.size() < 22 ? 22 - p.name.size() : 1, ' ') << p.summary
                  << '\n';
    std::cout << "\ntopology presets (\"topology\": NAME, or blkmqlab-cli topology NAME):\n";
    for (const auto& p : TopologyLoader::presets())
        std::cout << "  " << p.name << std::string(p.name.size() < 22 ? 22 - p.name.size() : 1, ' ') << p.description
                  << '\n';
    return kExitOk;
}

int patchesCommand(const std::vector<std::string>& args)
{
    if (!args.empty()) {
        std::cerr << "blkmqlab-cli patches: takes no arguments\n";
        return kExitUsage;
    }
    // Every kernel switch, from the one table (scenario/KernelSwitches.cpp), by seed thread.
    const auto provenance = [](const Provenance& p, const char* indent) {
        std::string who;
        for (const std::string* part : { &p.author, &p.commit, &p.version })
            if (!part->empty())
                who += (who.empty() ? "" : ", ") + *part;
        if (!p.subject.empty())
            std::cout << indent << p.subject << "\n";
        if (!who.empty())
            std::cout << indent << who << "\n";
        if (!p.effect.empty())
            std::cout << indent << p.effect << "\n";
    };
    std::string thread;
    for (const KernelSwitch& sw : KernelSwitches::all()) {
        if (sw.from.thread != thread) {
            thread = sw.from.thread;
            std::cout << thread << "\n";
        }
        std::cout << "  " << sw.path() << " (default " << sw.defaultValue() << (sw.live ? ", live" : ", at start")
                  << ")\n";
        if (sw.type == KernelSwitch::Type::Bool && sw.key.rfind("patches.", 0) == 0)
            std::cout << "    --set " << sw.path() << "=true\n";
        provenance(sw.from, "    ");
        for (const SwitchChoice& c : sw.choices) {
            std::cout << "    " << c.name << "\n";
            provenance(c.from, "      ");
        }
    }
    return kExitOk;
}

int costsCommand(const std::vector<std::string>& args)
{
    if (!args.empty()) {
        std::cerr << "blkmqlab-cli costs: takes no arguments\n";
        return kExitUsage;
    }
    // A Markdown table: docs/model.md embeds this output.
    const Costs d = Costs::defaults();
    std::cout << "| `costs.` key | default | unit | source | what it is |\n| --- | --- | --- | --- | --- |\n";
    for (const auto& p : Costs::params()) {
        std::cout << "| `" << p.name << "` | ";
        if (p.scalar) {
            std::cout << d.*(p.scalar);
        } else {
            const auto& t = d.*(p.table);
            for (int k = 0; k < kDistanceClasses; ++k)
                std::cout << (k ? ", " : "") << distanceName(static_cast<Distance>(k)) << " " << t[k];
        }
        std::cout << " | " << p.unit << " | " << p.source << " | " << p.meaning << " |\n";
    }
    return kExitOk;
}

int metricsCommand(const std::vector<std::string>& args)
{
    if (!args.empty()) {
        std::cerr << "blkmqlab-cli metrics: takes no arguments\n";
        return kExitUsage;
    }
    // A Markdown table: docs/scenario.md embeds this output.
    std::cout << "| id | what | unit | plot | computed as |\n| --- | --- | --- | --- | --- |\n";
    for (const Metric& m : kMetrics) {
        std::string unit = unitInfo(m.unit).symbol;
        unit.erase(0, unit.find_first_not_of(' '));
        std::cout << "| `" << m.id << "` | " << m.label << " | " << (unit.empty() ? "count" : unit) << " | "
                  << (m.group.empty() ? "–" : m.group) << " | " << m.how << " |\n";
    }
    return kExitOk;
}

int limitsCommand(const std::vector<std::string>& args)
{
    if (!args.empty()) {
        std::cerr << "blkmqlab-cli limits: takes no arguments\n";
        return kExitUsage;
    }
    // A Markdown table: docs/limits.md embeds this output.
    std::cout << "| limit | value | why |\n| --- | --- | --- |\n";
    for (const auto& l : allLimits()) {
        std::string value;
        const std::string unit = l.unit;
        if (unit == "bytes")
            value = std::to_string(l.value >> 20) + " MiB";
        else if (unit == "ns")
            value = formatDuration(SimTime(l.value));
        else
            value = std::to_string(l.value);
        std::cout << "| " << l.name << " | " << value << " | " << l.why << " |\n";
    }
    return kExitOk;
}

int validateCommand(const std::vector<std::string>& args)
{
    const std::string family = args.empty() ? "all" : args.front();
    const auto families = Validation::families();
    if (args.size() > 1 || (family != "all" && std::find(families.begin(), families.end(), family) == families.end())) {
        std::string list = "all";
        for (const auto& f : families)
            list += ", " + f;
        std::cerr << "blkmqlab-cli validate: unknown family '" << family << "' (families: " << list << ")\n";
        return kExitUsage;
    }
    const auto results = Validation::run(Validation::claims(family));
    std::cout << Validation::markdown(results);
    return kExitOk; // a claim that does not hold is a finding, not an error
}

int fioKeysCommand(const std::vector<std::string>& args)
{
    if (!args.empty()) {
        std::cerr << "blkmqlab-cli fio-keys: takes no arguments (see blkmqlab-cli help)\n";
        return kExitUsage;
    }
    std::cout << "| key | what the lab does with it |\n| --- | --- |\n";
    for (const FioJobFile::Key& k : FioJobFile::keys())
        std::cout << "| `" << k.name << "` | " << k.meaning << " |\n";
    return kExitOk;
}

int outputsCommand(const std::vector<std::string>& args)
{
    if (!args.empty()) {
        std::cerr << "blkmqlab-cli outputs: takes no arguments (see blkmqlab-cli help)\n";
        return kExitUsage;
    }
    std::cout << "| command | option | writes |\n| --- | --- | --- |\n";
    for (const OutputOption& o : outputOptions())
        std::cout << "| " << o.command << " | `" << o.option << "` | " << o.what << " |\n";
    return kExitOk;
}

int fieldsCommand(const std::vector<std::string>& args)
{
    // Each input format's inventory: the scenario's from the loader's own reads, the others from the
    // tables their readers check keys against.
    const std::string format = args.empty() ? "scenario" : args[0];
    std::vector<FieldInfo> rows;
    if (format == "scenario")
        rows = ScenarioLoader::fields();
    else if (format == "sweep")
        rows = sweepFields().rows;
    else if (format == "lesson")
        rows = Lesson::fields().rows;
    else if (format == "session")
        rows = Session::fields().rows;
    else if (format == "hwloc")
        rows = TopologyLoader::hwlocFields().rows;
    else if (format == "options")
        for (const OptionInfo& o : options())
            rows.push_back({ o.option + " (" + o.commands + ")", o.value.empty() ? "flag" : o.value, o.what });
    if (args.size() > 1 || rows.empty()) {
        std::cerr << "blkmqlab-cli fields: '" << printable(format)
                  << "' is not a format (scenario, sweep, lesson, session, hwloc, options; see blkmqlab-cli help)\n";
        return kExitUsage;
    }
    std::cout << "| field | kind | takes |\n| --- | --- | --- |\n";
    for (const FieldInfo& f : rows)
        std::cout << "| `" << f.path << "` | " << f.kind << " | " << f.rule << " |\n";
    return kExitOk;
}

} // namespace blkmq::cli
