#include "scenario/FioJobFile.h"

#include "io/Limits.h"
#include "io/SafeFile.h"
#include "io/Text.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <sstream>

namespace blkmq {

namespace {

std::string trim(const std::string& s)
{
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos)
        return {};
    const auto e = s.find_last_not_of(" \t\r");
    return s.substr(b, e - b + 1);
}

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

// fio's integers with a unit suffix: "4k" = 4096 (kb_base = 1024, fio's default).
std::optional<std::int64_t> sizeValue(const std::string& v)
{
    if (v.empty() || !std::isdigit(static_cast<unsigned char>(v[0])))
        return std::nullopt;
    std::size_t used = 0;
    std::int64_t n = 0;
    try {
        n = std::stoll(v, &used);
    } catch (const std::logic_error&) {
        return std::nullopt;
    }
    const std::string unit = lower(v.substr(used));
    std::int64_t mult = 1;
    if (unit.empty() || unit == "b")
        mult = 1;
    else if (unit == "k" || unit == "kb" || unit == "kib")
        mult = 1024;
    else if (unit == "m" || unit == "mb" || unit == "mib")
        mult = 1024 * 1024;
    else
        return std::nullopt;
    if (n > (INT64_MAX / mult))
        return std::nullopt;
    return n * mult;
}

// fio's times: a bare number is in `bareUnit` ("s" for runtime, "us" for thinktime).
std::optional<std::string> timeValue(const std::string& v, const char* bareUnit)
{
    if (v.empty() || !std::isdigit(static_cast<unsigned char>(v[0])))
        return std::nullopt;
    std::size_t digits = 0;
    while (digits < v.size() && std::isdigit(static_cast<unsigned char>(v[digits])))
        ++digits;
    if (digits > 12)
        return std::nullopt;
    const std::string unit = lower(v.substr(digits));
    const std::string n = v.substr(0, digits);
    if (unit.empty())
        return n + bareUnit;
    if (unit == "us" || unit == "usec" || unit == "ms" || unit == "msec" || unit == "s" || unit == "sec")
        return n + unit.substr(0, unit[0] == 's' ? 1 : 2);
    if (unit == "m" || unit == "min")
        return std::to_string(std::stoll(n) * 60) + "s";
    return std::nullopt;
}

bool isTrue(const std::string& v) { return v.empty() || v == "1" || lower(v) == "true" || lower(v) == "yes"; }
bool isFalse(const std::string& v) { return v == "0" || lower(v) == "false" || lower(v) == "no"; }

struct Setting {
    std::string value;
    std::string where; // "job.fio:7: iodepth=4"
};

} // namespace

const std::vector<FioJobFile::Key>& FioJobFile::keys()
{
    static const std::vector<Key> table {
        { "filename", "/dev/NAME: the scenario's device NAME (none: the first device)" },
        { "ioengine", "libaio, io_uring: asynchronous, iodepth in flight; psync, sync, pvsync: one I/O at a time" },
        { "iodepth", "iodepth" },
        { "iodepth_batch_submit", "iodepth_batch_submit (also iodepth_batch)" },
        { "numjobs", "numjobs" },
        { "cpus_allowed", "cpus_allowed (a cpulist)" },
        { "cpus_allowed_policy", "cpus_allowed_policy: shared or split" },
        { "rw", "rw (also readwrite): read, write, randread, randwrite, rw, randrw; reads and writes cost alike" },
        { "bs", "bs (also blocksize), with k or m suffixes" },
        { "direct", "must be 1: buffered I/O goes through the page cache, which the lab does not model" },
        { "runtime", "the scenario's duration (seconds unless a unit is given)" },
        { "time_based", "accepted: the lab always runs for the duration" },
        { "size", "accepted: the lab models no addresses, so the region read changes nothing" },
        { "thinktime", "thinktime (microseconds unless a unit is given)" },
        { "number_ios", "number_ios" },
        { "hipri", "hipri: polled I/O" },
        { "name", "the job's name" },
        { "group_reporting", "accepted: fio's reporting only" },
        { "thread", "accepted: threads or processes are the same task to the lab" },
    };
    return table;
}

Result<FioJobFile::Import> FioJobFile::read(
    const std::string& text, const std::string& origin, const std::vector<std::string>& devices)
{
    using Settings = std::map<std::string, Setting>;
    Settings global;
    std::vector<std::pair<std::string, Settings>> jobs;
    Settings* current = nullptr;
    std::istringstream in(text);
    std::string line;
    int number = 0;
    const auto at = [&](int n) { return origin + ":" + std::to_string(n); };
    while (std::getline(in, line)) {
        ++number;
        // Text is text: a line that is not UTF-8, or holds a control character (a terminal escape),
        // is refused here, before any of it reaches a name, a value or a message.
        if (!line.empty() && line.back() == '\r')
            line.pop_back(); // a file written on Windows
        if (const std::string why = textProblem(line, true); !why.empty())
            return Result<Import>::failure(at(number) + ": the line " + why);
        const std::string t = trim(line);
        if (t.empty() || t[0] == ';' || t[0] == '#')
            continue;
        if (t[0] == '[') {
            if (t.back() != ']' || t.size() < 3)
                return Result<Import>::failure(at(number) + ": '" + t + "' is not a section header such as [job1]");
            const std::string section = trim(t.substr(1, t.size() - 2));
            if (section == "global") {
                current = &global;
            } else {
                jobs.emplace_back(section, Settings {});
                current = &jobs.back().second;
            }
            continue;
        }
        if (!current)
            return Result<Import>::failure(at(number) + ": '" + t + "' comes before any section ([global] or a job)");
        const auto eq = t.find('=');
        std::string key = lower(trim(t.substr(0, eq)));
        const std::string value = eq == std::string::npos ? std::string() : trim(t.substr(eq + 1));
        if (key == "readwrite")
            key = "rw";
        else if (key == "blocksize")
            key = "bs";
        else if (key == "iodepth_batch")
            key = "iodepth_batch_submit";
        const bool known = std::any_of(keys().begin(), keys().end(), [&](const Key& k) { return key == k.name; });
        if (!known) {
            std::string list;
            for (const Key& k : keys())
                list += (list.empty() ? "" : ", ") + std::string(k.name);
            return Result<Import>::failure(
                at(number) + ": '" + key + "' is not modelled by the lab (the keys it reads: " + list + ")");
        }
        (*current)[key] = { value, at(number) + ": " + key + "=" + value };
    }
    if (jobs.empty())
        return Result<Import>::failure(origin + ": no job section (a [name] other than [global])");

    Import out;
    nlohmann::json list = nlohmann::json::array();
    std::optional<std::string> runtime;
    std::string runtimeWhere;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        Settings s = global;
        for (const auto& [k, v] : jobs[i].second)
            s[k] = v;
        const std::string path = "workload.jobs[" + std::to_string(i) + "]";
        nlohmann::json job;
        job["name"] = s.count("name") ? s["name"].value : jobs[i].first;
        const auto bad = [&](const std::string& key, const std::string& why) {
            return Result<Import>::failure(s[key].where + ": " + why);
        };
        const auto integer = [&](const std::string& key, const char* field) -> std::string {
            if (!s.count(key))
                return {};
            const auto v = sizeValue(s[key].value);
            if (!v || s[key].value.find_first_not_of("0123456789") != std::string::npos)
                return s[key].where + ": must be a whole number";
            job[field] = *v;
            out.origin[path + "." + field] = s[key].where;
            return {};
        };
        for (const auto& [key, field] :
            std::vector<std::pair<std::string, const char*>> { { "iodepth", "iodepth" }, { "numjobs", "numjobs" },
                { "iodepth_batch_submit", "iodepth_batch_submit" }, { "number_ios", "number_ios" } })
            if (std::string e = integer(key, field); !e.empty())
                return Result<Import>::failure(e);
        if (s.count("filename")) {
            const std::string& f = s["filename"].value;
            const std::string dev = f.rfind("/dev/", 0) == 0 ? f.substr(5) : std::string();
            if (std::find(devices.begin(), devices.end(), dev) == devices.end()) {
                std::string names;
                for (const auto& d : devices)
                    names += (names.empty() ? "/dev/" : ", /dev/") + d;
                return bad("filename", "names no device of the scenario (its devices: " + names + ")");
            }
            job["device"] = dev;
            out.origin[path + ".device"] = s["filename"].where;
        }
        if (s.count("ioengine")) {
            const std::string e = s["ioengine"].value;
            if (e == "psync" || e == "sync" || e == "pvsync") {
                job["iodepth"] = 1; // fio: a synchronous engine has one I/O in flight whatever iodepth says
            } else if (e != "libaio" && e != "io_uring") {
                return bad("ioengine", "'" + e + "' is not modelled (libaio, io_uring, psync, sync, pvsync)");
            }
        }
        if (s.count("direct") && !isTrue(s["direct"].value))
            return bad("direct", "buffered I/O (direct=0) goes through the page cache, which the lab does not model");
        if (s.count("cpus_allowed")) {
            job["cpus_allowed"] = s["cpus_allowed"].value;
            out.origin[path + ".cpus_allowed"] = s["cpus_allowed"].where;
        }
        if (s.count("cpus_allowed_policy")) {
            job["cpus_allowed_policy"] = s["cpus_allowed_policy"].value;
            out.origin[path + ".cpus_allowed_policy"] = s["cpus_allowed_policy"].where;
        }
        if (s.count("rw")) {
            job["rw"] = s["rw"].value == "readwrite" ? std::string("rw") : s["rw"].value;
            out.origin[path + ".rw"] = s["rw"].where;
        }
        if (s.count("bs")) {
            const auto v = sizeValue(s["bs"].value);
            if (!v)
                return bad("bs", "must be a size such as 4k");
            job["bs"] = *v;
            out.origin[path + ".bs"] = s["bs"].where;
        }
        if (s.count("thinktime")) {
            const auto v = timeValue(s["thinktime"].value, "us");
            if (!v)
                return bad("thinktime", "must be a time such as 10 (microseconds) or 1ms");
            job["thinktime"] = *v;
            out.origin[path + ".thinktime"] = s["thinktime"].where;
        }
        if (s.count("hipri")) {
            if (!isTrue(s["hipri"].value) && !isFalse(s["hipri"].value))
                return bad("hipri", "must be 0 or 1");
            job["hipri"] = isTrue(s["hipri"].value);
            out.origin[path + ".hipri"] = s["hipri"].where;
        }
        if (s.count("runtime")) {
            const auto v = timeValue(s["runtime"].value, "s");
            if (!v)
                return bad("runtime", "must be a time such as 1 (seconds) or 500ms");
            if (runtime && *runtime != *v)
                return bad("runtime", "differs from another job's (" + runtimeWhere + "): the lab runs one duration");
            runtime = *v;
            runtimeWhere = s["runtime"].where;
        }
        list.push_back(std::move(job));
    }
    out.sets.push_back("workload.jobs=" + list.dump());
    if (runtime) {
        out.sets.push_back("duration=\"" + *runtime + "\"");
        out.origin["duration"] = runtimeWhere;
    }
    return out;
}

Result<std::string> FioJobFile::write(const Scenario& s)
{
    const auto refuse = [](const std::string& field, const std::string& why) {
        return Result<std::string>::failure(field + ": " + why);
    };
    if (s.jobs.empty())
        return refuse("workload.jobs", "the scenario has no fio jobs to write");
    // fio's time values take a unit suffix (us, ms, s); the lab's are nanoseconds.
    const auto fioTime = [](std::int64_t ns) -> std::optional<std::string> {
        if (ns % 1'000'000 == 0)
            return std::to_string(ns / 1'000'000) + "ms";
        if (ns % 1'000 == 0)
            return std::to_string(ns / 1'000) + "us";
        return std::nullopt;
    };
    const auto runtime = fioTime(s.duration.ns());
    if (!runtime)
        return refuse("duration", "fio's runtime takes whole microseconds");
    std::string text = "; " + s.name
        + "'s workload as a fio job file (blkmqlab-cli)\n[global]\nioengine=libaio\n"
          "direct=1\ntime_based=1\nruntime="
        + *runtime + "\n";
    for (std::size_t i = 0; i < s.jobs.size(); ++i) {
        const JobSpec& j = s.jobs[i];
        const std::string path = "workload.jobs[" + std::to_string(i) + "]";
        if (std::none_of(s.devices.begin(), s.devices.end(), [&](const DeviceSpec& d) { return d.name == j.device; }))
            return refuse(path + ".device", "names several devices (nr_devices); a fio job has one filename");
        if (j.bypass_pct != 0)
            return refuse(path + ".bypass_pct", "fio has no requests that bypass the scheduler");
        if (j.name.empty()
            || j.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
                != std::string::npos)
            return refuse(
                path + ".name", "fio reads a job's name from its section header: letters, digits, '_', '.' and '-'");
        const auto think = fioTime(j.thinktime_ns);
        if (!think)
            return refuse(path + ".thinktime", "fio's thinktime takes whole microseconds");
        text += "\n[" + j.name + "]\nfilename=/dev/" + j.device + "\nnumjobs=" + std::to_string(j.numjobs)
            + "\niodepth=" + std::to_string(j.iodepth) + "\n";
        if (j.iodepth_batch_submit != 1)
            text += "iodepth_batch_submit=" + std::to_string(j.iodepth_batch_submit) + "\n";
        if (!j.cpus_allowed.empty())
            text += "cpus_allowed=" + cpuList(j.cpus_allowed) + "\n";
        text += std::string("cpus_allowed_policy=")
            + (j.cpus_allowed_policy == CpusAllowedPolicy::Split ? "split" : "shared") + "\nrw=" + j.rw
            + "\nbs=" + std::to_string(j.bs) + "\n";
        if (j.thinktime_ns)
            text += "thinktime=" + *think + "\n";
        if (j.number_ios)
            text += "number_ios=" + std::to_string(j.number_ios) + "\n";
        if (j.hipri)
            text += "hipri=1\n";
    }
    return text;
}

std::string FioJobFile::explain(const Import& import, const std::string& loaderError)
{
    // The loader's errors start with the field's path: "workload.jobs[0].iodepth: must be ...".
    const auto colon = loaderError.find(": ");
    if (colon == std::string::npos)
        return loaderError;
    const auto it = import.origin.find(loaderError.substr(0, colon));
    if (it == import.origin.end())
        return loaderError;
    return it->second + ": " + loaderError.substr(colon + 2);
}

Result<Scenario> FioJobFile::run(
    const std::string& path, const Scenario& base, const Loader& loader, const std::string& readErrorPrefix)
{
    std::string text;
    if (const std::string e = SafeFile::read(path, limits::kScenarioFileBytes, text); !e.empty())
        return Result<Scenario>::failure(readErrorPrefix + e);
    std::vector<std::string> devices;
    for (const DeviceSpec& d : base.devices)
        devices.push_back(d.name);
    const auto job = read(text, path, devices);
    if (!job)
        return Result<Scenario>::failure(job.error());
    Result<Scenario> s = loader(job->sets);
    if (!s)
        return Result<Scenario>::failure(explain(job.value(), s.error()));
    return s;
}

} // namespace blkmq
