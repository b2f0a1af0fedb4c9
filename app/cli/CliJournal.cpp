#include "CliJournal.h"
#include "ModelId.h"

#include "io/Limits.h"
#include "io/SafeFile.h"
#include "metrics/Metrics.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <unistd.h>

namespace blkmq::cli {

Journal::~Journal()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

std::string Journal::open(const std::string& path, const std::string& preamble, bool resume,
    const std::function<bool(const std::string& line, std::uint64_t n)>& accept, std::string& lines,
    std::uint64_t& done)
{
    m_path = path;
    lines.clear();
    done = 0;
    std::string text;
    if (resume && std::filesystem::exists(std::filesystem::symlink_status(path))) {
        if (const std::string e = SafeFile::read(path, limits::kMergeInputBytes, text); !e.empty())
            return e;
        if (text.compare(0, preamble.size(), preamble) != 0)
            return "'" + path
                + "' is the journal of other work (another grid, shard, scenario or seed range, or another build of "
                  "the lab): delete it to start afresh";
        for (std::size_t at = preamble.size();;) {
            const std::size_t nl = text.find('\n', at);
            if (nl == std::string::npos)
                break; // a line cut short by the kill: its run runs again
            const std::string line = text.substr(at, nl - at);
            if (!accept(line, done))
                break; // not the next run's: it runs again
            lines.append(line).append("\n");
            ++done;
            at = nl + 1;
        }
    }
    m_lines = done;
    // Rewritten as kept: the preamble and the complete lines, whatever followed them.
    if (const std::string e = SafeFile::write(path, preamble + lines); !e.empty())
        return e;
    return SafeFile::openAppend(path, false, m_fd);
}

void Journal::append(const std::string& line)
{
    if (m_fd < 0)
        return;
    std::size_t off = 0;
    while (off < line.size()) {
        const ssize_t n = ::write(m_fd, line.data() + off, line.size() - off);
        if (n <= 0 && errno != EINTR)
            return; // the output itself is written at the end; a journal that fails only loses resumption
        off += n > 0 ? static_cast<std::size_t>(n) : 0;
    }
    ++m_lines;
    static const char* killAfter = std::getenv("BLKMQLAB_FAULT_KILL_AFTER_ROWS");
    if (killAfter && std::to_string(m_lines) == killAfter)
        ::raise(SIGKILL);
}

void Journal::remove()
{
    if (m_fd >= 0)
        ::close(m_fd);
    m_fd = -1;
    ::unlink(m_path.c_str());
}

namespace {

// JSON has no NaN or infinity: those go by name, every other double as the shortest text that
// reads back as the same bits.
nlohmann::json number(double v)
{
    if (std::isnan(v))
        return "nan";
    if (std::isinf(v))
        return v > 0 ? "inf" : "-inf";
    return v;
}

bool number(const nlohmann::json& j, double& v)
{
    if (j.is_number()) {
        v = j.get<double>();
        return true;
    }
    if (!j.is_string())
        return false;
    const std::string s = j.get<std::string>();
    if (s == "nan")
        v = NAN;
    else if (s == "inf")
        v = INFINITY;
    else if (s == "-inf")
        v = -INFINITY;
    else
        return false;
    return true;
}

std::string hex64(std::uint64_t v)
{
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
}

} // namespace

std::string journalLine(const RunResult& r)
{
    nlohmann::json metrics = nlohmann::json::array();
    for (const double m : r.metrics)
        metrics.push_back(number(m));
    const nlohmann::json j = { { "index", r.index }, { "seed", r.seed }, { "fingerprint", r.fingerprint },
        { "stalled", r.stalled }, { "first_stuck_ns", r.firstStallNs }, { "stall_events", r.stallEvents },
        { "explanation", r.stallExplanation }, { "events", r.events }, { "lost_tags", r.lostTags },
        { "missed_wakeups", r.missedWakeups }, { "metrics", std::move(metrics) } };
    return j.dump() + "\n";
}

std::optional<RunResult> fromJournalLine(const std::string& line)
{
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object())
        return std::nullopt;
    RunResult r;
    try {
        r.index = j.at("index").get<std::uint64_t>();
        r.seed = j.at("seed").get<std::uint64_t>();
        r.fingerprint = j.at("fingerprint").get<std::string>();
        r.stalled = j.at("stalled").get<bool>();
        r.firstStallNs = j.at("first_stuck_ns").get<std::int64_t>();
        r.stallEvents = j.at("stall_events").get<std::uint64_t>();
        r.stallExplanation = j.at("explanation").get<std::string>();
        r.events = j.at("events").get<std::uint64_t>();
        r.lostTags = j.at("lost_tags").get<std::uint64_t>();
        r.missedWakeups = j.at("missed_wakeups").get<std::uint64_t>();
        const nlohmann::json& m = j.at("metrics");
        if (!m.is_array() || m.size() != r.metrics.size())
            return std::nullopt;
        for (std::size_t i = 0; i < r.metrics.size(); ++i)
            if (!number(m[i], r.metrics[i]))
                return std::nullopt;
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;
    }
    return r;
}

std::string openResultJournal(Journal& journal, const std::string& out, const std::string& command,
    const std::string& identity, bool resume, std::vector<RunResult>& resumed)
{
    std::uint64_t h = 1469598103934665603ULL; // FNV-1a of what the work is
    for (const unsigned char c : identity) {
        h ^= c;
        h *= 1099511628211ULL;
    }
    const std::string preamble
        = "# blkmqlab-cli " + command + " journal work=" + hex64(h) + " model=" + kModelId + "\n";
    resumed.clear();
    std::string lines;
    std::uint64_t done = 0;
    return journal.open(
        out + ".journal", preamble, resume,
        [&](const std::string& line, std::uint64_t n) {
            auto r = fromJournalLine(line);
            if (!r || r->index != n)
                return false;
            resumed.push_back(std::move(*r));
            return true;
        },
        lines, done);
}

} // namespace blkmq::cli
