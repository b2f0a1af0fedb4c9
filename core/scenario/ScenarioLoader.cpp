#include "scenario/ScenarioLoader.h"

#include "io/SafeFile.h"
#include "io/Limits.h"
#include "io/Text.h"
#include "block/DeviceModel.h"
#include "scenario/KernelSwitches.h"
#include "scenario/PresetData.h"
#include "sim/Choices.h"
#include "sim/Duration.h"
#include "topo/TopologyLoader.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <utility>
#include <fstream>
#include <set>
#include <sstream>

namespace blkmq {

using json = nlohmann::json;

namespace {

// Thrown inside the loader only; converted to a Result at the boundary.
struct FieldError {
    std::string message;
};

// Keeps a message on one readable line even when a hostile document has a
// megabyte-long key.
std::string shortened(const std::string& text, std::size_t most)
{
    return text.size() <= most ? text : text.substr(0, most - 3) + "...";
}

[[noreturn]] void fail(const std::string& path, const std::string& what)
{
    throw FieldError { printable(path, 120) + ": " + shortened(what, 400) };
}

// A value as an error message shows it: short, on one line.
std::string brief(const json& v)
{
    std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
    if (text.size() > 60)
        text = text.substr(0, 57) + "...";
    return text;
}

std::string typeName(const json& v) { return std::string(v.type_name()) + " " + brief(v); }

// The field inventory (ScenarioLoader::fields()): while it is being built, every typed read notes
// its field's path ("devices[].submit_queues"), kind and rule, in the order the loader reads them.
thread_local std::vector<FieldInfo>* t_inventory = nullptr;

void note(const std::string& path, const char* kind, const std::string& rule)
{
    if (!t_inventory)
        return;
    std::string p; // array indices as []
    for (std::size_t i = 0; i < path.size(); ++i) {
        p.push_back(path[i]);
        if (path[i] == '[') {
            while (i + 1 < path.size() && path[i + 1] != ']')
                ++i;
        }
    }
    for (const FieldInfo& f : *t_inventory)
        if (f.path == p)
            return;
    t_inventory->push_back({ p, kind, rule });
}

// Walks one JSON object, hands out typed fields and rejects unknown keys.
class ObjectReader {
public:
    ObjectReader(const json& obj, std::string path)
        : m_obj(obj)
        , m_path(std::move(path))
    {
        if (!m_obj.is_object())
            fail(m_path.empty() ? "(top level)" : m_path, "must be an object, got " + typeName(m_obj));
    }

    std::string field(const std::string& key) const { return m_path.empty() ? key : m_path + "." + key; }
    const json* get(const std::string& key)
    {
        m_seen.insert(key);
        auto it = m_obj.find(key);
        return it == m_obj.end() ? nullptr : &*it;
    }
    bool has(const std::string& key) const { return m_obj.contains(key); }

    std::int64_t integer(const std::string& key, std::int64_t def, std::int64_t lo, std::int64_t hi)
    {
        note(field(key), "integer", std::to_string(lo) + ".." + std::to_string(hi));
        const json* v = get(key);
        if (!v)
            return def;
        if (!v->is_number_integer() || v->get<std::int64_t>() < lo || v->get<std::int64_t>() > hi)
            fail(field(key),
                "must be an integer in " + std::to_string(lo) + ".." + std::to_string(hi) + " (got " + brief(*v) + ")");
        return v->get<std::int64_t>();
    }
    bool boolean(const std::string& key, bool def)
    {
        note(field(key), "boolean", "true, false");
        const json* v = get(key);
        if (!v)
            return def;
        if (!v->is_boolean())
            fail(field(key), "must be true or false (got " + brief(*v) + ")");
        return v->get<bool>();
    }
    std::string string(const std::string& key, const std::string& def)
    {
        note(field(key), "string", "");
        const json* v = get(key);
        if (!v)
            return def;
        if (!v->is_string())
            fail(field(key), "must be a string (got " + brief(*v) + ")");
        return v->get<std::string>();
    }
    std::string choice(const std::string& key, const std::string& def, const std::vector<std::string>& allowed)
    {
        std::string names;
        for (const auto& a : allowed)
            names += (names.empty() ? "" : ", ") + a;
        note(field(key), "choice", names);
        const std::string s = string(key, def);
        if (std::find(allowed.begin(), allowed.end(), s) == allowed.end()) {
            std::string list;
            for (const auto& a : allowed)
                list += (list.empty() ? "" : ", ") + a;
            fail(field(key), "must be one of " + list + " (got " + brief(s) + ")");
        }
        return s;
    }
    SimTime duration(const std::string& key, SimTime def, SimTime lo)
    {
        note(field(key), "duration", ">= " + formatDuration(lo));
        const json* v = get(key);
        if (!v)
            return def;
        std::optional<SimTime> t;
        if (v->is_number_integer() && v->get<std::int64_t>() >= 0)
            t = SimTime(v->get<std::int64_t>());
        else if (v->is_string())
            t = parseDuration(v->get<std::string>());
        if (!t || *t < lo)
            fail(field(key),
                "must be a duration >= " + formatDuration(lo)
                    + " (nanoseconds, or a string with ns/us/ms/s such as \"10ms\"; got " + brief(*v) + ")");
        return *t;
    }
    void finish() const
    {
        for (auto it = m_obj.begin(); it != m_obj.end(); ++it) {
            if (!m_seen.count(it.key()))
                fail(field(it.key()), "unknown key");
        }
    }

private:
    const json& m_obj;
    std::string m_path;
    std::set<std::string> m_seen;
};

std::vector<int> parseCpuList(const json& v, const std::string& path, int nrCpus)
{
    std::vector<int> cpus;
    const auto add = [&](std::int64_t c) {
        if (c < 0 || c >= nrCpus)
            fail(path,
                "CPU " + std::to_string(c) + " does not exist (the topology has CPUs 0.." + std::to_string(nrCpus - 1)
                    + ")");
        cpus.push_back(static_cast<int>(c));
    };
    if (v.is_array()) {
        for (const auto& e : v) {
            if (!e.is_number_integer())
                fail(path, "must list CPU numbers (got " + brief(e) + ")");
            add(e.get<std::int64_t>());
        }
    } else if (v.is_number_integer()) {
        add(v.get<std::int64_t>());
    } else if (v.is_string()) {
        // Linux cpulist: "0-3,8,10-11"
        std::stringstream ss(v.get<std::string>());
        std::string part;
        while (std::getline(ss, part, ',')) {
            const auto dash = part.find('-');
            try {
                std::size_t used = 0;
                const int lo = std::stoi(part.substr(0, dash), &used);
                if (used != (dash == std::string::npos ? part.size() : dash))
                    throw std::invalid_argument(part);
                int hi = lo;
                if (dash != std::string::npos) {
                    const auto rest = part.substr(dash + 1);
                    hi = std::stoi(rest, &used);
                    if (used != rest.size())
                        throw std::invalid_argument(part);
                }
                if (hi < lo)
                    fail(path, "range '" + part + "' runs backwards");
                for (int c = lo; c <= hi; ++c)
                    add(c);
            } catch (const std::logic_error&) {
                fail(path, "'" + part + "' is not a CPU number or range (cpulist syntax: 0-3,8)");
            }
        }
    } else {
        fail(path, "must be a cpulist string such as \"0-3,8\" or an array of CPU numbers (got " + brief(v) + ")");
    }
    if (cpus.empty())
        fail(path, "names no CPU");
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    return cpus;
}

CompletionDist parseCompletion(const json& v, const std::string& path)
{
    CompletionDist d;
    if (v.is_number_integer() || v.is_string()) {
        std::optional<SimTime> t;
        if (v.is_number_integer() && v.get<std::int64_t>() >= 0)
            t = SimTime(v.get<std::int64_t>());
        else if (v.is_string())
            t = parseDuration(v.get<std::string>());
        if (!t)
            fail(path, "must be a duration (ns or \"10us\") or {\"dist\": ...} (got " + brief(v) + ")");
        if (t->ns() > limits::kDurationNs)
            fail(path,
                "must be at most " + formatDuration(SimTime(limits::kDurationNs)) + ", the longest run (got " + brief(v)
                    + ")");
        d.a = d.b = t->ns();
        return d;
    }
    ObjectReader r(v, path);
    const std::string dist = r.choice("dist", "fixed", { "fixed", "uniform", "exponential" });
    if (dist == "fixed") {
        d.a = d.b = r.duration("value", SimTime(10000), SimTime(0)).ns();
    } else if (dist == "uniform") {
        d.kind = CompletionDist::Kind::Uniform;
        d.a = r.duration("min", SimTime(5000), SimTime(0)).ns();
        d.b = r.duration("max", SimTime(15000), SimTime(0)).ns();
        if (d.b < d.a)
            fail(path + ".max", "must be >= min");
    } else {
        d.kind = CompletionDist::Kind::Exponential;
        d.a = d.b = r.duration("mean", SimTime(10000), SimTime(1)).ns();
    }
    r.finish();
    if (d.b > limits::kDurationNs) // a sample past int64 would wrap; none past the longest run can complete
        fail(path,
            "must be at most " + formatDuration(SimTime(limits::kDurationNs)) + ", the longest run (got "
                + formatDuration(SimTime(d.b)) + ")");
    return d;
}

// Totals over the whole scenario, checked before anything is allocated for
// them (docs/limits.md). Each message names the total, its value and the limit.
void checkTotals(const Scenario& s)
{
    const auto over = [](const char* field, const char* total, std::int64_t value, std::int64_t limit) {
        if (value > limit)
            fail(field,
                std::string(total) + " come to " + std::to_string(value) + ", more than the limit of "
                    + std::to_string(limit) + " (docs/limits.md)");
    };
    std::int64_t hctxs = 0, tags = 0;
    std::set<std::string> tagSets;
    for (const auto& d : s.devices) {
        hctxs += d.submit_queues;
        if (tagSets.insert(d.tag_set).second)
            tags += std::int64_t(d.submit_queues) * d.hw_queue_depth;
    }
    over("devices", "devices (after nr_devices)", static_cast<std::int64_t>(s.devices.size()), limits::kDevices);
    over("devices", "hardware queues over all devices", hctxs, limits::kHctxs);
    over("devices", "driver tags over all tag sets", tags, limits::kDriverTags);
    std::int64_t threads = 0, inFlight = 0;
    for (const auto& j : s.jobs) {
        threads += j.numjobs;
        inFlight += std::int64_t(j.numjobs) * j.iodepth;
    }
    over("workload.jobs", "job threads (numjobs summed over the jobs)", threads, limits::kJobThreads);
    over("workload.jobs", "I/Os in flight (numjobs x iodepth summed over the jobs)", inFlight, limits::kIosInFlight);
    over("workload.script", "script steps", static_cast<std::int64_t>(s.script.size()), limits::kScriptSteps);
    over("workload.net_rx", "net_rx loads", static_cast<std::int64_t>(s.net_rx.size()), limits::kNetRxLoads);
    std::int64_t sources = 0;
    for (const auto& l : s.net_rx)
        sources += static_cast<std::int64_t>(l.cpus.size());
    over("workload.net_rx", "net_rx packet sources (CPUs summed over the loads)", sources, limits::kNetRxSources);
}

// How deep arrays and objects nest, counted without parsing (strings and
// their escapes skipped), so that a hostile document cannot exhaust the stack
// of anything that walks it recursively.
std::int64_t nestingDepth(const std::string& text)
{
    std::int64_t depth = 0, most = 0;
    bool inString = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
        } else if (c == '"') {
            inString = true;
        } else if (c == '[' || c == '{') {
            most = std::max(most, ++depth);
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return most;
}

std::string arrayPath(const std::string& base, std::size_t i) { return base + "[" + std::to_string(i) + "]"; }

// kernel.patches: an object of patch id → true/false, ids from the switch table.
void readPatches(const json* p, KernelSpec& kernel)
{
    note("kernel.patches", "object", "patch id -> true/false");
    for (const KernelSwitch& k : KernelSwitches::all())
        if (k.key.rfind("patches.", 0) == 0)
            note("kernel." + k.key, "boolean", "true, false");
    if (!p)
        return;
    if (!p->is_object())
        fail("kernel.patches", "must be an object of patch id → true/false");
    for (auto it = p->begin(); it != p->end(); ++it) {
        const KernelSwitch* sw = KernelSwitches::find("patches." + it.key());
        if (!sw) {
            std::string list;
            for (const KernelSwitch& k : KernelSwitches::all())
                if (k.key.rfind("patches.", 0) == 0)
                    list += (list.empty() ? "" : ", ") + k.key.substr(8);
            fail("kernel.patches." + it.key(), "unknown patch id (known: " + list + ")");
        }
        if (!it->is_boolean())
            fail("kernel.patches." + it.key(), "must be true or false (got " + brief(*it) + ")");
        sw->flag(kernel) = it->get<bool>();
    }
}

Scenario parse(const json& doc)
{
    // Text the loader may echo or store (io/Text.h); newlines and tabs only in the description.
    if (const std::string why = jsonTextProblem(doc, { "description" }); !why.empty())
        throw FieldError { why };
    Scenario s;
    ObjectReader top(doc, "");
    top.integer("format", 1, 1, 1);
    s.name = top.string("name", s.name);
    s.description = top.string("description", "");
    {
        note("seed", "integer", "0..18446744073709551615");
        const json* seed = top.get("seed");
        if (seed) {
            if (!seed->is_number_unsigned() && !(seed->is_number_integer() && seed->get<std::int64_t>() >= 0))
                fail("seed", "must be a non-negative integer (got " + brief(*seed) + ")");
            s.seed = seed->get<std::uint64_t>();
        }
    }
    s.duration = top.duration("duration", s.duration, SimTime(1));
    if (s.duration.ns() > limits::kDurationNs)
        fail("duration",
            "must be at most " + formatDuration(SimTime(limits::kDurationNs)) + " (got " + formatDuration(s.duration)
                + "; docs/limits.md)");
    s.sample_interval = top.duration("sample_interval", s.sample_interval, usec(1));
    s.stall_age = top.duration("stall_age", s.stall_age, usec(1));
    if (s.duration.ns() / s.sample_interval.ns() > limits::kSamples)
        fail("sample_interval",
            formatDuration(s.sample_interval) + " over a duration of " + formatDuration(s.duration) + " gives "
                + std::to_string(s.duration.ns() / s.sample_interval.ns()) + " samples, more than the limit of "
                + std::to_string(limits::kSamples) + " (docs/limits.md); use a longer interval or a shorter duration");

    s.topologyText = top.string("topology", s.topologyText);
    auto topo = TopologyLoader::load(s.topologyText);
    if (!topo) {
        // The topology loader's messages start with "topology: " already.
        const std::string& why = topo.error();
        throw FieldError { shortened(why.rfind("topology:", 0) == 0 ? why : "topology: " + why, 400) };
    }
    s.topology = std::move(*topo);
    const int nrCpus = s.topology.nrCpus();
    // The topology's CPUs are all online; a machine may have more possible ones (hot-pluggable).
    s.possible_cpus = static_cast<int>(top.integer("possible_cpus", nrCpus, nrCpus, limits::kCpus));

    // Devices
    std::vector<std::size_t> namedTagSets; // per device: the entry that named its tag_set, or SIZE_MAX
    note("devices", "array", "device objects, at least one");
    if (const json* devs = top.get("devices")) {
        if (!devs->is_array() || devs->empty())
            fail("devices", "must be a non-empty array of device objects");
        for (std::size_t i = 0; i < devs->size(); ++i) {
            const std::string path = arrayPath("devices", i);
            ObjectReader r((*devs)[i], path);
            DeviceSpec d;
            d.name = r.string("name", "nvme" + std::to_string(i));
            d.entry = static_cast<int>(i);
            d.entryName = d.name;
            // The name is a --set path component and a CSV column: no separators, quotes or control characters.
            if (d.name.empty() || d.name.find_first_of(".=[] ,\"") != std::string::npos
                || std::any_of(d.name.begin(), d.name.end(),
                    [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }))
                fail(r.field("name"),
                    "must be a non-empty name without '.', '=', '[', ']', ',', '\"', spaces or control characters");
            const int nrDevices = static_cast<int>(r.integer("nr_devices", 1, 1, 1024));
            if (static_cast<std::int64_t>(s.devices.size()) + nrDevices > limits::kDevices)
                fail(r.field("nr_devices"),
                    "brings the devices to more than the limit of " + std::to_string(limits::kDevices)
                        + " (docs/limits.md)");
            const bool sharedTags = r.boolean("shared_tags", false);
            d.submit_queues = static_cast<int>(r.integer("submit_queues", 1, 1, 4096));
            d.hw_queue_depth = static_cast<int>(r.integer("hw_queue_depth", 64, 1, 4096));
            std::string modeNames;
            for (const DeviceModel* model : DeviceModel::all())
                modeNames.append(model->name()).append(", ");
            note(r.field("irqmode"), "choice", modeNames + "0, 1, 2");
            if (const json* m = r.get("irqmode")) {
                const DeviceModel* model = nullptr;
                if (m->is_string())
                    model = DeviceModel::find(m->get<std::string>());
                else if (m->is_number_integer() && m->get<std::int64_t>() >= 0 && m->get<std::int64_t>() <= 2)
                    model = DeviceModel::find(std::to_string(m->get<std::int64_t>())); // null_blk's numbers
                if (!model || (m->is_string() && m->get<std::string>() != model->name()))
                    fail(r.field("irqmode"),
                        "must be one of " + modeNames.substr(0, modeNames.size() - 2)
                            + " (or 0, 1, 2 as null_blk) (got " + brief(*m) + ")");
                d.irqmode = model->mode();
                if (const std::string why = model->refuses(d); !why.empty())
                    fail(r.field("irqmode"), why);
            }
            note(r.field("completion_nsec"), "duration or distribution",
                ">= 0, <= 3600s; or {dist: fixed|uniform|exponential, value|min, max|mean}");
            if (const json* c = r.get("completion_nsec"))
                d.completion = parseCompletion(*c, r.field("completion_nsec"));
            note(r.field("irq_affinity"), "CPU per hw queue", "\"spread\" or one CPU per hw queue");
            if (const json* a = r.get("irq_affinity")) {
                if (!(a->is_string() && a->get<std::string>() == "spread")) {
                    if (!a->is_array())
                        fail(r.field("irq_affinity"), "must be \"spread\" or an array with one CPU per hw queue");
                    for (const auto& e : *a) {
                        if (!e.is_number_integer() || e.get<std::int64_t>() < 0 || e.get<std::int64_t>() >= nrCpus)
                            fail(r.field("irq_affinity"),
                                "CPU " + brief(e) + " does not exist (the topology has CPUs 0.."
                                    + std::to_string(nrCpus - 1) + ")");
                        d.irq_affinity.push_back(e.get<int>());
                    }
                    if (static_cast<int>(d.irq_affinity.size()) != d.submit_queues)
                        fail(r.field("irq_affinity"),
                            "must list one CPU per hw queue (" + std::to_string(d.submit_queues) + "), got "
                                + std::to_string(d.irq_affinity.size()));
                }
            }
            note(r.field("queue_map"), "choice or cpulists", "managed, sequential, or one cpulist per hw queue");
            if (const json* m = r.get("queue_map"); m && m->is_array()) {
                // One cpulist per hw queue, as the kernel's map_queues left them (/sys/block/X/mq/N/cpu_list).
                const std::string mapPath = r.field("queue_map");
                if (static_cast<int>(m->size()) != d.submit_queues)
                    fail(mapPath,
                        "must list one cpulist per hw queue (" + std::to_string(d.submit_queues) + "), got "
                            + std::to_string(m->size()));
                d.queue_of_cpu.assign(static_cast<std::size_t>(nrCpus), -1);
                for (std::size_t q = 0; q < m->size(); ++q)
                    for (const int cpu : parseCpuList((*m)[q], arrayPath(mapPath, q), nrCpus)) {
                        if (d.queue_of_cpu[static_cast<std::size_t>(cpu)] >= 0)
                            fail(arrayPath(mapPath, q),
                                "CPU " + std::to_string(cpu) + " is already mapped to hw queue "
                                    + std::to_string(d.queue_of_cpu[static_cast<std::size_t>(cpu)]));
                        d.queue_of_cpu[static_cast<std::size_t>(cpu)] = static_cast<int>(q);
                    }
                const auto unmapped = std::find(d.queue_of_cpu.begin(), d.queue_of_cpu.end(), -1);
                if (unmapped != d.queue_of_cpu.end())
                    fail(mapPath, "maps no hw queue to CPU " + std::to_string(unmapped - d.queue_of_cpu.begin()));
                d.queue_map = QueueMap::Explicit;
            } else {
                const bool spread = d.irq_affinity.empty();
                const std::string def
                    = DeviceModel::of(d.irqmode).vectorPerHwQueue() && spread ? "managed" : "sequential";
                const std::string map = r.choice("queue_map", def, { "managed", "sequential" });
                if (map == "managed" && !spread)
                    fail(r.field("queue_map"),
                        "\"managed\" follows the spread interrupt vectors; it cannot go with an explicit irq_affinity");
                d.queue_map = map == "managed" ? QueueMap::Managed : QueueMap::Sequential;
            }
            note(r.field("rss_cpus"), "cpulist", "CPUs of the topology");
            if (const json* rss = r.get("rss_cpus"))
                d.rss_cpus = parseCpuList(*rss, r.field("rss_cpus"), nrCpus);
            d.scheduler = r.choice("scheduler", "none", { "none", "mq-deadline" }) == "none"
                ? SchedulerKind::None
                : SchedulerKind::MqDeadline;
            d.rq_affinity = static_cast<int>(r.integer("rq_affinity", 1, 0, 2));
            d.queue_limit = static_cast<int>(r.integer("queue_limit", 0, 0, 1 << 20));
            d.channels = static_cast<int>(r.integer("channels", 0, 0, 4096));
            d.cmd_issue_lock = r.boolean("cmd_issue_lock", false);
            const bool namedTagSet = r.has("tag_set");
            d.tag_set = r.string("tag_set", "");
            r.finish();
            if (nrDevices == 1) {
                if (d.tag_set.empty())
                    d.tag_set = d.name;
                s.devices.push_back(d);
                namedTagSets.push_back(namedTagSet ? i : SIZE_MAX);
            } else {
                const std::string entry = d.name;
                if (d.tag_set.empty() && sharedTags)
                    d.tag_set = entry + ".tags";
                for (int k = 0; k < nrDevices; ++k) {
                    DeviceSpec e = d;
                    e.name = entry + std::to_string(k);
                    if (e.tag_set.empty())
                        e.tag_set = e.name;
                    s.devices.push_back(e);
                    namedTagSets.push_back(namedTagSet ? i : SIZE_MAX);
                }
            }
        }
    } else {
        DeviceSpec d;
        d.name = d.tag_set = "nvme0";
        s.devices.push_back(d);
        namedTagSets.push_back(SIZE_MAX);
    }
    note("tag_sets", "array", "tag set objects");
    if (const json* sets = top.get("tag_sets")) {
        // Declared tag sets: every device's tag_set must name one, and each must be used.
        if (!sets->is_array())
            fail("tag_sets", "must be an array of {\"name\": ...} objects");
        if (static_cast<std::int64_t>(sets->size()) > limits::kDevices)
            fail("tag_sets",
                "declares more tag sets than the limit of " + std::to_string(limits::kDevices) + " devices");
        std::vector<std::string> names;
        for (std::size_t i = 0; i < sets->size(); ++i) {
            ObjectReader r((*sets)[i], arrayPath("tag_sets", i));
            TagSetSpec t;
            t.name = r.string("name", "");
            if (t.name.empty())
                fail(r.field("name"), "is required");
            t.driver_permits = static_cast<int>(r.integer("driver_permits", 0, 0, 1 << 20));
            r.finish();
            names.push_back(t.name);
            s.tag_sets.push_back(std::move(t));
        }
        for (std::size_t i = 0; i < s.devices.size(); ++i) {
            const auto& d = s.devices[i];
            if (namedTagSets[i] != SIZE_MAX && std::find(names.begin(), names.end(), d.tag_set) == names.end())
                fail(arrayPath("devices", namedTagSets[i]) + ".tag_set",
                    "names tag set '" + d.tag_set + "', which tag_sets does not declare");
        }
        for (std::size_t i = 0; i < names.size(); ++i)
            if (std::none_of(s.devices.begin(), s.devices.end(), [&](auto& d) { return d.tag_set == names[i]; }))
                fail(arrayPath("tag_sets", i), "tag set '" + names[i] + "' is used by no device");
    }
    for (std::size_t i = 0; i < s.devices.size(); ++i) {
        for (std::size_t j = 0; j < i; ++j) {
            if (s.devices[i].name == s.devices[j].name)
                fail("devices", "two devices are named '" + s.devices[i].name + "'");
            if (s.devices[i].tag_set == s.devices[j].tag_set
                && (s.devices[i].submit_queues != s.devices[j].submit_queues
                    || s.devices[i].hw_queue_depth != s.devices[j].hw_queue_depth))
                fail("devices",
                    "'" + s.devices[i].name + "' and '" + s.devices[j].name + "' share tag set '" + s.devices[i].tag_set
                        + "' and so must have the same submit_queues and hw_queue_depth");
        }
    }
    const auto deviceExists = [&](const std::string& name) {
        for (const auto& d : s.devices)
            if (d.name == name)
                return true;
        // an nr_devices entry name: name0, name1, ...
        for (const auto& d : s.devices)
            if (d.name.rfind(name, 0) == 0 && d.name.size() > name.size()
                && std::all_of(d.name.begin() + static_cast<std::ptrdiff_t>(name.size()), d.name.end(), ::isdigit))
                return true;
        return false;
    };
    const auto deviceList = [&] {
        std::string list;
        for (const auto& d : s.devices)
            list += (list.empty() ? "" : ", ") + d.name;
        return list;
    };

    // Workload
    note("workload", "object", "jobs, script, net_rx");
    if (const json* w = top.get("workload")) {
        ObjectReader wr(*w, "workload");
        note("workload.jobs", "array", "job objects");
        if (const json* jobs = wr.get("jobs")) {
            if (!jobs->is_array())
                fail("workload.jobs", "must be an array of job objects");
            if (static_cast<std::int64_t>(jobs->size()) > limits::kJobThreads)
                fail("workload.jobs",
                    "has " + std::to_string(jobs->size()) + " jobs, more than the limit of "
                        + std::to_string(limits::kJobThreads) + " job threads (docs/limits.md)");
            for (std::size_t i = 0; i < jobs->size(); ++i) {
                const std::string path = arrayPath("workload.jobs", i);
                ObjectReader r((*jobs)[i], path);
                JobSpec j;
                j.name = r.string("name", "job" + std::to_string(i));
                j.device = r.string("device", s.devices.front().name);
                if (!deviceExists(j.device))
                    fail(r.field("device"), "names no device (devices: " + deviceList() + ")");
                j.numjobs = static_cast<int>(r.integer("numjobs", 1, 1, 4096));
                j.iodepth = static_cast<int>(r.integer("iodepth", 1, 1, 65536));
                note(r.field("cpus_allowed"), "cpulist", "CPUs of the topology");
                if (const json* c = r.get("cpus_allowed"))
                    j.cpus_allowed = parseCpuList(*c, r.field("cpus_allowed"), nrCpus);
                j.cpus_allowed_policy = r.choice("cpus_allowed_policy", "shared", { "shared", "split" }) == "shared"
                    ? CpusAllowedPolicy::Shared
                    : CpusAllowedPolicy::Split;
                j.rw = r.choice("rw", "randread", { "read", "write", "randread", "randwrite", "rw", "randrw" });
                j.bs = static_cast<int>(r.integer("bs", 4096, 512, 16 << 20));
                if (j.bs % 512)
                    fail(r.field("bs"), "must be a multiple of 512");
                j.iodepth_batch_submit = static_cast<int>(r.integer("iodepth_batch_submit", 1, 1, j.iodepth));
                j.thinktime_ns = r.duration("thinktime", SimTime(0), SimTime(0)).ns();
                j.number_ios = r.integer("number_ios", 0, 0, std::int64_t(1) << 40);
                j.hipri = r.boolean("hipri", false);
                j.bypass_pct = static_cast<double>(r.integer("bypass_pct", 0, 0, 100));
                r.finish();
                s.jobs.push_back(j);
            }
        }
        note("workload.script", "array", "step objects");
        if (const json* steps = wr.get("script")) {
            if (!steps->is_array())
                fail("workload.script", "must be an array of steps");
            if (static_cast<std::int64_t>(steps->size()) > limits::kScriptSteps)
                fail("workload.script",
                    "has " + std::to_string(steps->size()) + " steps, more than the limit of "
                        + std::to_string(limits::kScriptSteps) + " (docs/limits.md)");
            std::set<std::string> ids;
            for (std::size_t i = 0; i < steps->size(); ++i) {
                const std::string path = arrayPath("workload.script", i);
                ObjectReader r((*steps)[i], path);
                ScriptStep st;
                st.at = r.duration("at", SimTime(0), SimTime(0));
                const std::string op = r.choice("op", "submit", { "submit", "complete", "run" });
                st.op = op == "submit" ? ScriptStep::Op::Submit
                    : op == "complete" ? ScriptStep::Op::Complete
                                       : ScriptStep::Op::Run;
                if (st.op == ScriptStep::Op::Run) {
                    // blk_mq_run_hw_queue() of the hctx `cpu` maps to, on that CPU
                    st.cpu = static_cast<int>(r.integer("cpu", 0, 0, nrCpus - 1));
                    st.device = r.string("device", s.devices.front().name);
                    if (std::none_of(s.devices.begin(), s.devices.end(), [&](auto& d) { return d.name == st.device; }))
                        fail(r.field("device"), "names no device (devices: " + deviceList() + ")");
                    r.finish();
                    s.script.push_back(st);
                    continue;
                }
                st.id = r.string("id", "");
                if (st.id.empty())
                    fail(r.field("id"), "is required: a name for the request (such as \"A\")");
                if (st.op == ScriptStep::Op::Submit) {
                    if (!ids.insert(st.id).second)
                        fail(r.field("id"), "request '" + st.id + "' is submitted twice");
                    st.cpu = static_cast<int>(r.integer("cpu", 0, 0, nrCpus - 1));
                    st.device = r.string("device", s.devices.front().name);
                    if (std::none_of(s.devices.begin(), s.devices.end(), [&](auto& d) { return d.name == st.device; }))
                        fail(r.field("device"), "names no device (devices: " + deviceList() + ")");
                    st.bypass = r.boolean("bypass", false);
                    st.hold = r.boolean("hold", false);
                    st.run = r.boolean("run", true);
                    const auto dev = std::find_if(
                        s.devices.begin(), s.devices.end(), [&](auto& d) { return d.name == st.device; });
                    if (st.hold && !DeviceModel::of(dev->irqmode).holds())
                        fail(r.field("hold"),
                            "needs a device that does not end requests inside ->queue_rq ('" + st.device
                                + "' is irqmode " + DeviceModel::of(dev->irqmode).name() + ", which does)");
                } else if (!ids.count(st.id)) {
                    fail(r.field("id"), "completes request '" + st.id + "', which no earlier step submits");
                }
                r.finish();
                s.script.push_back(st);
            }
            std::stable_sort(s.script.begin(), s.script.end(), [](auto& a, auto& b) { return a.at < b.at; });
        }
        note("workload.net_rx", "array", "load objects");
        if (const json* loads = wr.get("net_rx")) {
            if (!loads->is_array())
                fail("workload.net_rx", "must be an array of {cpus, pps, cost} objects");
            if (static_cast<std::int64_t>(loads->size()) > limits::kNetRxLoads)
                fail("workload.net_rx",
                    "has " + std::to_string(loads->size()) + " loads, more than the limit of "
                        + std::to_string(limits::kNetRxLoads) + " (docs/limits.md)");
            for (std::size_t i = 0; i < loads->size(); ++i) {
                ObjectReader r((*loads)[i], arrayPath("workload.net_rx", i));
                NetRxLoad l;
                note(r.field("cpus"), "cpulist", "CPUs of the topology");
                if (const json* list = r.get("cpus"))
                    l.cpus = parseCpuList(*list, r.field("cpus"), nrCpus);
                else
                    for (int c = 0; c < nrCpus; ++c)
                        l.cpus.push_back(c);
                l.pps = static_cast<double>(r.integer("pps", 100000, 1, 100000000));
                l.cost_ns = r.duration("cost", usec(2), SimTime(0)).ns();
                r.finish();
                s.net_rx.push_back(l);
            }
        }
        wr.finish();
    }

    // Kernel
    note("kernel", "object", "kernel switches");
    if (const json* k = top.get("kernel")) {
        ObjectReader r(*k, "kernel");
        // Every switch of the table (scenario/KernelSwitches.cpp), in its order.
        bool patchesRead = false;
        for (const KernelSwitch& sw : KernelSwitches::all()) {
            if (sw.key.rfind("patches.", 0) == 0) {
                if (!std::exchange(patchesRead, true))
                    readPatches(r.get("patches"), s.kernel);
                continue;
            }
            switch (sw.type) {
            case KernelSwitch::Type::Bool:
                sw.flag(s.kernel) = r.boolean(sw.key, sw.flag(s.kernel));
                break;
            case KernelSwitch::Type::Choice:
                sw.setChoice(s.kernel, r.choice(sw.key, sw.choiceOf(s.kernel), sw.choiceNames()));
                if (sw.key == "version") // first in the table
                    KernelSwitches::applyVersion(s.kernel);
                break;
            case KernelSwitch::Type::Duration:
                sw.duration(s.kernel) = r.duration(sw.key, sw.duration(s.kernel), SimTime(0));
                break;
            }
        }
        r.finish();
        if (const FieldProblem p = KernelSwitches::problem(s.kernel, s.devices))
            fail(p.field, p.why);
    }

    // Costs
    note("costs", "object", "cost parameters");
    if (const json* c = top.get("costs")) {
        ObjectReader r(*c, "costs");
        for (const auto& p : Costs::params()) {
            note(r.field(p.name), p.scalar ? "integer" : "object",
                p.scalar ? "0.." + std::to_string(Costs::kMost) : "self, smt, llc, node, remote");
            const json* v = r.get(p.name);
            if (!v)
                continue;
            if (p.scalar) {
                s.costs.*(p.scalar) = r.integer(p.name, 0, 0, Costs::kMost);
            } else {
                ObjectReader t(*v, r.field(p.name));
                auto& tab = s.costs.*(p.table);
                for (int d = 0; d < kDistanceClasses; ++d)
                    tab[d] = t.integer(distanceName(static_cast<Distance>(d)), tab[d], 0, Costs::kMost);
                t.finish();
            }
        }
        r.finish();
        if (const FieldProblem p = s.costs.problem())
            fail(p.field, p.why);
    }
    // Choice points (docs/check.md)
    note("choices", "object",
        "latency_points, lock_boundaries, taken: the run's choice points, as blkmqlab-cli check makes them");
    if (const json* c = top.get("choices")) {
        ObjectReader r(*c, "choices");
        s.choices.on = true;
        s.choices.latency_points
            = static_cast<int>(r.integer("latency_points", s.choices.latency_points, 1, limits::kLatencyPoints));
        note("choices.lock_boundaries", "bool",
            "a CPU at a lock boundary (a percpu_ida steal step, a restart walk batch) may be held until the next "
            "event");
        s.choices.lock_boundaries = r.boolean("lock_boundaries", s.choices.lock_boundaries);
        note("choices.taken", "array", "options 0..254, one per choice point in order; later ones take 0");
        if (const json* t = r.get("taken")) {
            if (!t->is_array())
                fail("choices.taken", "must be an array of option numbers (got " + brief(*t) + ")");
            if (static_cast<std::int64_t>(t->size()) > limits::kChoicesTaken)
                fail("choices.taken",
                    "has " + std::to_string(t->size()) + " choices, more than the limit of "
                        + std::to_string(limits::kChoicesTaken) + " (docs/limits.md)");
            for (std::size_t i = 0; i < t->size(); ++i) {
                const json& v = (*t)[i];
                if (!v.is_number_integer() || v.get<std::int64_t>() < 0
                    || v.get<std::int64_t>() >= Choices::kMaxOptions)
                    fail(arrayPath("choices.taken", i),
                        "must be an option number 0.." + std::to_string(Choices::kMaxOptions - 1) + " (got " + brief(v)
                            + ")");
                s.choices.taken.push_back(static_cast<std::uint8_t>(v.get<std::int64_t>()));
            }
        }
        r.finish();
    }
    top.finish();
    checkTotals(s);
    s.sourceJson = doc.dump();
    return s;
}

} // namespace

Result<Scenario> ScenarioLoader::fromJson(const json& doc)
{
    try {
        return parse(doc);
    } catch (const FieldError& e) {
        return Result<Scenario>::failure(e.message);
    } catch (const json::exception& e) {
        return Result<Scenario>::failure(shortened(std::string("scenario: ") + e.what(), 400));
    }
}

Result<bool> ScenarioLoader::applySet(json& doc, const std::string& assignment)
{
    const auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
        return Result<bool>::failure("--set '" + printable(assignment, 120)
            + "': expected key=value with a dotted key such as kernel.threadirqs=true");
    const std::string path = assignment.substr(0, eq);
    const std::string text = assignment.substr(eq + 1);
    if (nestingDepth(text) > limits::kJsonDepth)
        return Result<bool>::failure("--set " + shortened(path, 120) + ": the value nests deeper than "
            + std::to_string(limits::kJsonDepth) + " levels (docs/limits.md)");
    json value = json::parse(text, nullptr, false);
    if (value.is_discarded())
        value = text;
    std::vector<std::string> keys;
    // A patch id is one key even with dots in it (kernel.patches.ida-v3.13-steal).
    const std::string patches = "kernel.patches.";
    const bool patch = path.size() > patches.size() && path.rfind(patches, 0) == 0;
    std::stringstream ss(patch ? patches.substr(0, patches.size() - 1) : path);
    std::string key;
    while (std::getline(ss, key, '.')) {
        if (key.empty())
            return Result<bool>::failure(
                "--set '" + shortened(assignment, 120) + "': empty component in key '" + shortened(path, 120) + "'");
        keys.push_back(key);
    }
    if (patch)
        keys.push_back(path.substr(patches.size()));
    if (static_cast<std::int64_t>(keys.size()) > limits::kJsonDepth)
        return Result<bool>::failure("--set '" + shortened(path, 120) + "': the key has more than "
            + std::to_string(limits::kJsonDepth) + " components (docs/limits.md)");
    json* node = &doc;
    std::string walked;
    for (std::size_t i = 0; i < keys.size(); ++i) {
        const std::string& k = keys[i];
        const bool last = i + 1 == keys.size();
        walked += (walked.empty() ? "" : ".") + k;
        if (node->is_array()) {
            json* next = nullptr;
            if (std::all_of(k.begin(), k.end(), ::isdigit)) {
                // More digits than any array here can have elements is simply "no element".
                const auto idx = k.size() <= 9 ? std::stoul(k) : SIZE_MAX;
                if (idx < node->size())
                    next = &(*node)[idx];
            } else {
                for (auto& e : *node)
                    if (e.is_object() && e.value("name", std::string()) == k)
                        next = &e;
            }
            if (!next)
                return Result<bool>::failure(
                    "--set " + shortened(walked, 120) + ": no element with that index or name");
            if (last)
                *next = value;
            node = next;
            continue;
        }
        if (node->is_null())
            *node = json::object();
        if (!node->is_object())
            return Result<bool>::failure("--set " + shortened(walked, 120) + ": the parent is not an object");
        if (last) {
            (*node)[k] = value;
        } else {
            if (!node->contains(k)) {
                const std::string& next = keys[i + 1]; // an index into a list the scenario does not have
                if (k == "devices" || k == "jobs" || k == "script" || std::all_of(next.begin(), next.end(), ::isdigit))
                    return Result<bool>::failure("--set " + shortened(path, 120) + ": the scenario has no "
                        + shortened(k, 120) + " to address; give them in the scenario file");
                (*node)[k] = json::object();
            }
            node = &(*node)[k];
        }
    }
    return true;
}

std::string ScenarioLoader::withChanges(const std::string& text, const std::vector<Command>& changes)
{
    json doc = json::parse(text);
    for (const Command& c : changes)
        applySet(doc, c.path + "=" + c.value); // a change the engine applied: its path is in the document
    return doc.dump();
}

Result<Scenario> ScenarioLoader::fromText(
    const std::string& text, const std::string& origin, const std::vector<std::string>& sets)
{
    using R = Result<Scenario>;
    if (const auto depth = nestingDepth(text); depth > limits::kJsonDepth)
        return R::failure(origin + ": nests deeper than " + std::to_string(limits::kJsonDepth)
            + " levels (docs/limits.md); a scenario needs about 5");
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::exception& e) {
        // parse_error carries the byte position; out_of_range a number beyond a double (1e400).
        std::string why = e.what();
        if (text.find_first_not_of(" \t\r\n") == std::string::npos)
            why = "the file is empty";
        return R::failure(shortened(origin + ": not valid JSON: " + why, 400));
    }
    if (!doc.is_object())
        return R::failure(origin + ": (top level): must be an object, got " + typeName(doc));
    for (const auto& s : sets) {
        auto r = applySet(doc, s);
        if (!r)
            return R::failure(r.error());
    }
    return fromJson(doc);
}

Result<Scenario> ScenarioLoader::fromFile(const std::string& path, const std::vector<std::string>& sets)
{
    if (path.empty())
        return Result<Scenario>::failure("scenario file: the name is empty");
    std::string text;
    if (const std::string err = SafeFile::read(path, limits::kScenarioFileBytes, text); !err.empty())
        return Result<Scenario>::failure("scenario file: " + err);
    return fromText(text, path, sets);
}

Result<std::string> ScenarioLoader::presetText(const std::string& name)
{
    for (const auto& p : builtinPresets())
        if (p.name == name)
            return std::string(p.json);
    std::string list;
    for (const auto& p : builtinPresets())
        list += (list.empty() ? "" : ", ") + std::string(p.name);
    return Result<std::string>::failure("preset: unknown preset '" + printable(name) + "' (presets: " + list + ")");
}

std::int64_t ScenarioLoader::nestingDepth(const std::string& text) { return blkmq::nestingDepth(text); }

Result<Scenario> ScenarioLoader::fromPreset(const std::string& name, const std::vector<std::string>& sets)
{
    auto text = presetText(name);
    if (!text)
        return Result<Scenario>::failure(text.error());
    return fromText(*text, "preset " + name, sets);
}

std::vector<PresetInfo> ScenarioLoader::presets()
{
    std::vector<PresetInfo> out;
    for (const auto& p : builtinPresets()) {
        const json doc = json::parse(p.json, nullptr, false);
        std::string summary = doc.is_object() ? doc.value("description", std::string()) : std::string();
        const auto dot = summary.find(". ");
        if (dot != std::string::npos)
            summary = summary.substr(0, dot + 1);
        out.push_back({ std::string(p.name), summary });
    }
    return out;
}

nlohmann::json ScenarioLoader::fullDocument()
{
    json kernel = json::object();
    for (const KernelSwitch& sw : KernelSwitches::all()) {
        const std::string v = sw.defaultValue();
        json value = sw.type == KernelSwitch::Type::Bool ? json(v == "true") : json(v);
        if (sw.key.rfind("patches.", 0) == 0)
            kernel["patches"][sw.key.substr(8)] = value;
        else
            kernel[sw.key] = value;
    }
    json costs = json::object();
    const Costs defaults = Costs::defaults();
    for (const auto& p : Costs::params()) {
        if (p.scalar) {
            costs[p.name] = defaults.*(p.scalar);
        } else {
            for (int d = 0; d < kDistanceClasses; ++d)
                costs[p.name][distanceName(static_cast<Distance>(d))]
                    = (defaults.*(p.table))[static_cast<std::size_t>(d)];
        }
    }
    return {
        { "format", 1 },
        { "name", "every-field" },
        { "description", "Every field of the format set once: the base of the field tests." },
        { "seed", 1 },
        { "duration", "1ms" },
        { "sample_interval", "1ms" },
        { "stall_age", "50ms" },
        { "topology", "2n:1p:2c:1t" },
        { "possible_cpus", 4 },
        { "tag_sets", { { { "name", "t" }, { "driver_permits", 0 } } } },
        { "devices",
            { { { "name", "a" }, { "nr_devices", 1 }, { "shared_tags", false }, { "tag_set", "t" },
                { "submit_queues", 2 }, { "hw_queue_depth", 4 }, { "irqmode", "nvme" }, { "completion_nsec", "1us" },
                { "irq_affinity", { 0, 2 } }, { "queue_map", { "0-1", "2-3" } }, { "rss_cpus", "0-3" },
                { "scheduler", "none" }, { "rq_affinity", 1 }, { "queue_limit", 0 }, { "channels", 0 },
                { "cmd_issue_lock", false } } } },
        { "workload",
            { { "jobs",
                  { { { "name", "j" }, { "device", "a" }, { "numjobs", 1 }, { "iodepth", 2 }, { "cpus_allowed", "0-3" },
                      { "cpus_allowed_policy", "split" }, { "rw", "randread" }, { "bs", 4096 },
                      { "iodepth_batch_submit", 1 }, { "thinktime", "0ns" }, { "number_ios", 0 }, { "hipri", false },
                      { "bypass_pct", 0 } } } },
                { "script",
                    { { { "at", "0ns" }, { "op", "submit" }, { "id", "A" }, { "cpu", 0 }, { "device", "a" },
                          { "bypass", false }, { "hold", false }, { "run", true } },
                        { { "at", "1us" }, { "op", "complete" }, { "id", "A" } },
                        { { "at", "2us" }, { "op", "run" }, { "cpu", 0 }, { "device", "a" } } } },
                { "net_rx", { { { "cpus", "0-3" }, { "pps", 1000 }, { "cost", "1us" } } } } } },
        { "kernel", kernel },
        { "costs", costs },
        { "choices", { { "latency_points", 2 }, { "lock_boundaries", false }, { "taken", { 0, 1 } } } },
    };
}

std::vector<FieldInfo> ScenarioLoader::fields()
{
    std::vector<FieldInfo> out;
    t_inventory = &out;
    const auto loaded = fromJson(fullDocument());
    t_inventory = nullptr;
    if (!loaded.ok())
        return { { "(the full document does not load)", "error", loaded.error() } };
    return out;
}

} // namespace blkmq
