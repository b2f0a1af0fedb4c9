#include "CliJournal.h"
#include "ModelId.h"

#include "io/Limits.h"
#include "io/SafeFile.h"
#include "metrics/Metrics.h"

#include <nlohmann/json.hpp>

#include <algorithm>
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

std::string journalHash(const std::string& text)
{
    std::uint64_t h = 1469598103934665603ULL; // FNV-1a
    for (const unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ULL;
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

std::string Journal::seal(const std::string& line) const { return journalHash(m_work + line); }

std::string Journal::open(const std::string& path, const std::string& command, const std::vector<JournalPart>& parts,
    const std::string& header, bool resume, const std::function<bool(const std::string& line, std::uint64_t n)>& accept,
    std::string& lines, std::uint64_t& done)
{
    m_path = path;
    lines.clear();
    done = 0;
    const std::string intro = "# blkmqlab-cli " + command + " journal";
    m_work = intro;
    for (const JournalPart& p : parts)
        m_work += " " + p.name + "=" + p.value;
    m_work += "\n";
    const std::string preamble = m_work + header;
    std::string text, sealed;
    if (resume && std::filesystem::exists(std::filesystem::symlink_status(path))) {
        if (const std::string e = SafeFile::read(path, limits::kMergeInputBytes, text); !e.empty())
            return e;
        if (text.compare(0, m_work.size(), m_work) != 0) {
            // Name what differs: the parts of its first line against this command's.
            const std::string first = text.substr(0, text.find('\n'));
            if (first.compare(0, intro.size() + 1, intro + " ") != 0)
                return "'" + path + "' is not the journal of a blkmqlab-cli " + command + ": delete it to start afresh";
            std::string differs;
            for (const JournalPart& p : parts) {
                const std::string mine = " " + p.name + "=" + p.value + " ";
                if ((first + " ").find(mine) == std::string::npos)
                    differs += (differs.empty() ? "" : ", ") + p.what;
            }
            return "'" + path + "' is the journal of other work (different: " + (differs.empty() ? "its kind" : differs)
                + "): resume with what it was started with, or delete it to start afresh";
        }
        if (text.compare(0, preamble.size(), preamble) != 0)
            return "'" + path + "' has another header than the command's: delete it to start afresh";
        for (std::size_t at = preamble.size(),
                         line = 1 + static_cast<std::size_t>(std::count(preamble.begin(), preamble.end(), '\n'));
             ; ++line) {
            const std::size_t nl = text.find('\n', at);
            if (nl == std::string::npos)
                break; // a line cut short by the kill: its run runs again
            const std::string withSeal = text.substr(at, nl - at);
            const std::size_t space = withSeal.rfind(' ');
            const std::string content = withSeal.substr(0, space == std::string::npos ? 0 : space);
            if (space == std::string::npos || withSeal.substr(space + 1) != seal(content))
                return "'" + path + "': line " + std::to_string(line)
                    + " was changed after it was written (its seal does not match): delete the journal to start "
                      "afresh";
            if (!accept(content, done))
                break; // not the next run's: it runs again
            lines.append(content).append("\n");
            sealed.append(withSeal).append("\n");
            ++done;
            at = nl + 1;
        }
    }
    m_lines = done;
    // Rewritten as kept: the preamble and the complete lines, whatever followed them.
    if (const std::string e = SafeFile::write(path, preamble + sealed); !e.empty())
        return e;
    return SafeFile::openAppend(path, false, m_fd);
}

void Journal::append(const std::string& line)
{
    if (m_fd < 0)
        return;
    const std::string content = line.substr(0, line.size() - (!line.empty() && line.back() == '\n'));
    const std::string withSeal = content + " " + seal(content) + "\n";
    std::size_t off = 0;
    while (off < withSeal.size()) {
        const ssize_t n = ::write(m_fd, withSeal.data() + off, withSeal.size() - off);
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
    std::vector<JournalPart> parts, bool resume, std::vector<RunResult>& resumed)
{
    parts.push_back({ "model", kModelId, "the lab's model (another build of the lab)" });
    resumed.clear();
    std::string lines;
    std::uint64_t done = 0;
    return journal.open(
        out + ".journal", command, parts, "", resume,
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
