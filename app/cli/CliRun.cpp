#include "Cli.h"
#include "CliOptions.h"

#include "engine/ChromeTrace.h"
#include "io/SafeFile.h"
#include "io/Text.h"
#include "session/Session.h"
#include "block/BlkMqDebugfs.h"
#include "metrics/Format.h"
#include "metrics/FunctionProfile.h"
#include "metrics/Metrics.h"
#include "scenario/ScenarioLoader.h"
#include "sim/Duration.h"
#include "engine/Engine.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

namespace blkmq::cli {

namespace {

std::string report(const nlohmann::json& s)
{
    std::ostringstream out;
    char line[256];
    const auto& io = s["io"];
    const auto& lat = s["latency_ns"];
    const auto& clat = s["clat_ns"];
    const auto& c = s["completion"];
    const auto metric = [&](std::string_view id) { return s["metrics"][std::string(id)].get<double>(); };
    std::snprintf(line, sizeof line, "%s: seed %llu, %.3f ms simulated on %d CPUs\n",
        s["scenario"].get<std::string>().c_str(), static_cast<unsigned long long>(s["seed"].get<std::uint64_t>()),
        s["sim_time_ns"].get<double>() / 1e6, s["topology"]["cpus"].get<int>());
    out << line;
    out << "  io:         IOPS=" << formatQuantity(metric("iops"));
    std::snprintf(line, sizeof line, ", BW=%.1f MB/s, completed=%llu, in flight=%d\n", metric("bw_mbps"),
        static_cast<unsigned long long>(io["completed"].get<std::uint64_t>()), io["in_flight"].get<int>());
    out << line;
    const auto lats = [&](const char* name, const nlohmann::json& l, const char* none) {
        if (l["samples"].get<std::uint64_t>() == 0) { // no value, not a latency of 0
            std::snprintf(line, sizeof line, "  %-11s none yet: %s\n", name, none);
            out << line;
            return;
        }
        std::snprintf(line, sizeof line, "  %-11s mean=%.2f us, p50=%.2f, p99=%.2f, p99.9=%.2f, max=%.2f us\n", name,
            l["mean"].get<double>() / 1e3, l["p50"].get<double>() / 1e3, l["p99"].get<double>() / 1e3,
            l["p999"].get<double>() / 1e3, l["max"].get<double>() / 1e3);
        out << line;
    };
    lats("lat:", lat, "no request reaped (a job reaps when all its iodepth is in flight, as fio does)");
    lats("clat (D2C):", clat, "no request completed");
    const auto& by = c["by_context"];
    std::snprintf(line, sizeof line,
        "  completion: remote=%llu (%.1f%%), IPIs=%llu, softirq raises=%llu, ksoftirqd wake-ups=%llu\n"
        "              ->complete in hardirq=%llu softirq=%llu ksoftirqd=%llu process=%llu irq_thread=%llu\n",
        static_cast<unsigned long long>(c["remote"].get<std::uint64_t>()), metric("remote_pct"),
        static_cast<unsigned long long>(c["ipis"].get<std::uint64_t>()),
        static_cast<unsigned long long>(c["softirq_raises"].get<std::uint64_t>()),
        static_cast<unsigned long long>(c["ksoftirqd_wakeups"].get<std::uint64_t>()),
        static_cast<unsigned long long>(by["hardirq"].get<std::uint64_t>()),
        static_cast<unsigned long long>(by["softirq"].get<std::uint64_t>()),
        static_cast<unsigned long long>(by["ksoftirqd"].get<std::uint64_t>()),
        static_cast<unsigned long long>(by["process"].get<std::uint64_t>()),
        static_cast<unsigned long long>(by["irq_thread"].get<std::uint64_t>()));
    out << line;
    const auto& delay = c["delay_ns"];
    if (delay["samples"].get<std::uint64_t>() > 0) {
        std::snprintf(line, sizeof line,
            "              blk_mq_complete_request -> ->complete: mean=%.2f us, p99=%.2f us\n",
            delay["mean"].get<double>() / 1e3, delay["p99"].get<double>() / 1e3);
        out << line;
    }
    const auto& r = s["restart"];
    const auto& t = s["tags"];
    std::snprintf(line, sizeof line,
        "  restart:    calls=%llu, restarts=%llu;  tags: allocs=%llu, local hits=%.1f%%, sleeps=%llu, wake-ups=%llu\n",
        static_cast<unsigned long long>(r["calls"].get<std::uint64_t>()),
        static_cast<unsigned long long>(r["restarts"].get<std::uint64_t>()),
        static_cast<unsigned long long>(t["allocs"].get<std::uint64_t>()), metric("tag_local_hit_pct"),
        static_cast<unsigned long long>(t["sleeps"].get<std::uint64_t>()),
        static_cast<unsigned long long>(t["wakeups"].get<std::uint64_t>()));
    out << line;
    if (t["alloc_latency_ns"]["samples"].get<std::uint64_t>() > 0)
        lats("tag alloc:", t["alloc_latency_ns"], "no tag allocated");
    if (t["lost_tags"].get<std::uint64_t>() + t["missed_wakeups"].get<std::uint64_t>() > 0) {
        std::snprintf(line, sizeof line,
            "              tags lost=%llu, missed wake-ups=%llu (a race in the allocator)\n",
            static_cast<unsigned long long>(t["lost_tags"].get<std::uint64_t>()),
            static_cast<unsigned long long>(t["missed_wakeups"].get<std::uint64_t>()));
        out << line;
        for (const auto& race : t["races"]) {
            std::snprintf(line, sizeof line, "              first at %.3f ms: ", race["t_ns"].get<double>() / 1e6);
            out << line << race["text"].get<std::string>() << '\n';
        }
    }
    out << "  cpu busy:  ";
    const char* sep = " ";
    for (const Metric& m : kMetrics)
        if (m.group == kMetrics[metricIndex("busy_task_pct")].group) {
            std::snprintf(line, sizeof line, "%s%.*s %.1f%%", sep, static_cast<int>(m.label.size()), m.label.data(),
                metric(m.id));
            out << line;
            sep = ", ";
        }
    out << '\n';
    const auto& st = s["stall"];
    if (st["detected"].get<bool>()) {
        const auto nRq = st["stuck_requests"].get<std::size_t>();
        const auto nSub = st["stuck_submitters"].get<std::size_t>();
        std::string who;
        if (nRq > 0)
            who.append(std::to_string(nRq)).append(" request(s)");
        if (nSub > 0)
            who.append(nRq > 0 ? " and " : "").append(std::to_string(nSub)).append(" sleeping submitter(s)");
        std::snprintf(line, sizeof line, "  STALL at %.3f ms (%s stuck then, %zu at the end):\n",
            st["first_stuck_ns"].get<double>() / 1e6, who.c_str(), st["stuck_at_end"].get<std::size_t>());
        out << line << "    " << st["explanation"].get<std::string>() << '\n';
    }
    for (const auto& m : s["markers"]) {
        std::snprintf(line, sizeof line, "  marker at %.3f ms: ", m["t_ns"].get<double>() / 1e6);
        out << line << m["text"].get<std::string>() << '\n';
    }
    if (s.contains("until")) {
        const auto& u = s["until"];
        if (u["reached"].get<bool>())
            std::snprintf(line, sizeof line, "  stopped at %.6f ms: ", u["t_ns"].get<double>() / 1e6);
        else
            std::snprintf(line, sizeof line, "  ran to the end; never: ");
        out << line << u["what"].get<std::string>() << '\n';
    }
    const auto& e = s["engine"];
    std::snprintf(line, sizeof line,
        "  engine:     %llu events in %.3f s wall (%.2fM events/s, real-time factor %.3f)\n",
        static_cast<unsigned long long>(e["events"].get<std::uint64_t>()), e["wall_s"].get<double>(),
        e["events_per_s"].get<double>() / 1e6, e["realtime_factor"].get<double>());
    out << line;
    out << "  fingerprint " << s["fingerprint"].get<std::string>() << '\n';
    return out.str();
}

} // namespace

namespace {

// --json (the summary) and --csv (the time series) of a run; kExitIo if one could not be written.
int writeSummaryAndSeries(
    const Engine& engine, const nlohmann::json& summary, const std::string& jsonOut, const std::string& csvOut)
{
    int rc = kExitOk;
    if (!jsonOut.empty())
        if (auto werr = SafeFile::write(jsonOut, summary.dump(2) + "\n"); !werr.empty()) {
            std::cerr << "blkmqlab-cli: --json: " << werr << '\n';
            rc = kExitIo;
        }
    if (!csvOut.empty()) {
        std::string csv = TimeSeries::csvHeader() + "\n";
        for (const auto& row : engine.series().rows())
            csv += TimeSeries::csvRow(row) + "\n";
        if (auto werr = SafeFile::write(csvOut, csv); !werr.empty()) {
            std::cerr << "blkmqlab-cli: --csv: " << werr << '\n';
            rc = kExitIo;
        }
    }
    return rc;
}

// run --session FILE [--at TIME]: the session's run replayed to where it stood (or to TIME), and its
// summary there, as the GUI shows that moment.
int runSession(
    const std::string& file, const std::string& at, const ScenarioOptions& o, const std::string& csvOut, bool quiet)
{
    if (o.jsonOut == "-" && csvOut == "-") {
        std::cerr << "blkmqlab-cli run: --json - and --csv - would mix two formats on standard output; give one of "
                     "them a file name\n";
        return kExitUsage;
    }
    if (int code = 0; !outputsUsable("run", { { "--json", o.jsonOut }, { "--csv", csvOut } }, code))
        return code;
    auto session = Session::fromFile(file);
    if (!session) {
        std::cerr << "blkmqlab-cli: " << session.error() << '\n';
        return kExitUsage;
    }
    std::optional<SimTime> when;
    if (!at.empty()) {
        when = parseDuration(at);
        const auto sc = ScenarioLoader::fromJson(session->scenario);
        if (!when || when->ns() < 0 || (sc && *when > sc->duration)) {
            std::cerr << "blkmqlab-cli run: --at: '" << printable(at)
                      << "' is not a simulated time within the session's scenario (e.g. 0.55ms)\n";
            return kExitUsage;
        }
    }
    auto replayed = when ? session->replayTo(*when) : session->replay();
    if (!replayed) {
        std::cerr << "blkmqlab-cli: " << file << ": " << replayed.error() << '\n';
        return kExitUsage;
    }
    const Engine& engine = **replayed;
    nlohmann::json summary = engine.summary();
    nlohmann::json marks = nlohmann::json::array();
    for (const Session::Bookmark& b : session->bookmarks)
        marks.push_back({ { "time_ns", b.t_ns }, { "note", b.note } });
    summary["session"] = { { "file", terminalSafe(file) }, // a name as it is, its bytes that are not UTF-8 as \xNN
        { "at_ns", engine.now().ns() }, { "events", engine.events() }, { "fingerprint", engine.fingerprint() },
        { "commands", session->commands.size() }, { "bookmarks", marks } };
    const int onStdout = (o.jsonOut == "-") + (csvOut == "-");
    if (!quiet && onStdout == 0)
        std::cout << "session " << file << " at " << formatDuration(engine.now()) << " (" << engine.events()
                  << " events, fingerprint " << engine.fingerprint() << ")\n"
                  << report(summary);
    int rc = writeSummaryAndSeries(engine, summary, o.jsonOut, csvOut);
    if (!flushStdout())
        rc = kExitIo;
    if (rc == kExitOk && o.failOnStall && summary["stall"]["detected"].get<bool>())
        return kExitStall;
    return rc;
}

} // namespace

int runCommand(const std::vector<std::string>& args)
{
    ScenarioOptions o;
    std::string csvOut;
    std::string until;
    std::string profiled;
    std::string traceOut, traceWindow;
    std::size_t traceCap = 1'000'000;
    bool quiet = false;
    std::string sessionFile, at, saveSession, debugfsDir;
    const auto err
        = parseScenarioOptions(args, o, [&](const std::string& a, const NextValue& value, std::string& error) {
              if (a == "--csv") {
                  if (!value(csvOut) || csvOut.empty())
                      error = "--csv needs a file name or -";
                  return true;
              }
              if (a == "--until") {
                  if (!value(until) || until.empty())
                      error = "--until needs a stop condition (see blkmqlab-cli help)";
                  return true;
              }
              if (a == "--function-profile") {
                  if (!value(profiled) || profiled.empty())
                      error = "--function-profile needs a function name";
                  else if (const auto& known = FunctionProfile::known();
                           std::find(known.begin(), known.end(), profiled) == known.end())
                      error = "--function-profile: no profile for '" + printable(profiled)
                          + "' (known: " + known.front() + ")";
                  return true;
              }
              if (a == "--trace") {
                  if (!value(traceOut) || traceOut.empty())
                      error = "--trace needs a file name (Chrome trace-event JSON, docs/trace.md)";
                  return true;
              }
              if (a == "--trace-window") {
                  if (!value(traceWindow) || traceWindow.find(':') == std::string::npos)
                      error = "--trace-window needs FROM:TO, e.g. 1ms:2ms";
                  return true;
              }
              if (a == "--trace-cap") {
                  std::string v;
                  if (!value(v) || v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos
                      || std::stoull(v) == 0 || std::stoull(v) > static_cast<std::uint64_t>(limits::kTraceEvents))
                      error = "--trace-cap needs a positive number of events, at most "
                          + std::to_string(limits::kTraceEvents) + " (docs/limits.md)";
                  else
                      traceCap = std::stoull(v);
                  return true;
              }
              if (a == "--session") {
                  if (!value(sessionFile) || sessionFile.empty())
                      error = "--session needs a session file (.blkmqlab, docs/sessions.md)";
                  return true;
              }
              if (a == "--save-session") {
                  if (!value(saveSession) || saveSession.empty() || saveSession == "-")
                      error = "--save-session needs a file name (.blkmqlab)";
                  return true;
              }
              if (a == "--debugfs") {
                  if (!value(debugfsDir) || debugfsDir.empty() || debugfsDir == "-")
                      error = "--debugfs needs a folder that does not exist yet, or an empty one";
                  return true;
              }
              if (a == "--at") {
                  if (!value(at) || at.empty())
                      error = "--at needs a simulated time, e.g. 0.55ms";
                  return true;
              }
              if (a == "--quiet" || a == "-q")
                  return quiet = true;
              return false;
          });
    if (!err.empty()) {
        std::cerr << "blkmqlab-cli run: " << err << " (see blkmqlab-cli help)\n";
        return kExitUsage;
    }
    if (!sessionFile.empty() || !at.empty()) {
        if (sessionFile.empty()) {
            std::cerr << "blkmqlab-cli run: --at needs --session FILE (see blkmqlab-cli help)\n";
            return kExitUsage;
        }
        if (o.hasFile || !o.preset.empty() || !o.sets.empty() || !o.fio.empty() || !until.empty() || !traceOut.empty()
            || !profiled.empty() || !debugfsDir.empty()) {
            std::cerr << "blkmqlab-cli run: --session carries its scenario and where the run stood: it takes --at, "
                         "--json, --csv, --quiet and --fail-on-stall, no FILE, --preset, --set, --seed, --duration, "
                         "--fio, --until, --trace, --function-profile, --debugfs or --save-session\n";
            return kExitUsage;
        }
        return runSession(sessionFile, at, o, csvOut, quiet);
    }
    Result<Scenario> scenario = o.load();
    if (!scenario) {
        std::cerr << "blkmqlab-cli: " << scenario.error() << '\n';
        return kExitUsage;
    }
    if (o.jsonOut == "-" && csvOut == "-") {
        std::cerr << "blkmqlab-cli run: --json - and --csv - would mix two formats on standard output; give one of "
                     "them a file name\n";
        return kExitUsage;
    }
    ChromeTrace::Options traceOptions;
    traceOptions.maxEvents = traceCap;
    if (!traceWindow.empty()) {
        const auto from = parseDuration(traceWindow.substr(0, traceWindow.find(':')));
        const auto to = parseDuration(traceWindow.substr(traceWindow.find(':') + 1));
        if (!from || !to || from->ns() < 0 || *to < *from) {
            std::cerr << "blkmqlab-cli run: --trace-window: '" << traceWindow
                      << "' is not FROM:TO with 0 <= FROM <= TO (e.g. 1ms:2ms)\n";
            return kExitUsage;
        }
        traceOptions.from = *from;
        traceOptions.to = *to;
    }
    if (traceOut.empty() && (!traceWindow.empty() || traceCap != 1'000'000)) {
        std::cerr << "blkmqlab-cli run: --trace-window and --trace-cap need --trace FILE\n";
        return kExitUsage;
    }
    if (traceOut == "-") {
        std::cerr << "blkmqlab-cli run: --trace needs a file name, not standard output\n";
        return kExitUsage;
    }
    if (int code = 0; !outputsUsable("run",
            { { "--json", o.jsonOut }, { "--csv", csvOut }, { "--trace", traceOut },
                { "--save-session", saveSession } },
            code))
        return code;
    if (const std::string e = debugfsDir.empty() ? "" : SafeFile::checkFreshFolder(debugfsDir); !e.empty()) {
        std::cerr << "blkmqlab-cli run: --debugfs: " << e << "\n";
        return kExitIo;
    }
    const int onStdout = (o.jsonOut == "-") + (csvOut == "-");
    StopPtr stop;
    if (!until.empty()) {
        auto parsed = stop::parse(until);
        if (!parsed) {
            std::cerr << "blkmqlab-cli run: --until: " << parsed.error() << '\n';
            return kExitUsage;
        }
        stop = std::move(*parsed);
    }
    Engine engine(*scenario);
    std::unique_ptr<ChromeTrace> trace;
    if (!traceOut.empty()) {
        trace = std::make_unique<ChromeTrace>(engine, traceOptions);
        engine.addTraceSink(trace.get());
    }
    bool reached = false;
    if (stop)
        reached = engine.runUntil(*stop);
    if (!reached && trace) // in sample intervals, so the trace's counters have a value at each
        for (SimTime t = scenario->sample_interval; !engine.finished(); t = t + scenario->sample_interval) {
            engine.runUntil(std::min(t, scenario->duration));
            trace->sample(engine);
        }
    if (!reached)
        engine.run();
    if (trace)
        trace->sample(engine);
    nlohmann::json summary = engine.summary();
    if (stop)
        summary["until"] = { { "condition", until }, { "what", stop->describe() }, { "reached", reached },
            { "t_ns", reached ? engine.now().ns() : -1 } };

    // A data format on standard output keeps it pure: no human report beside it.
    if (!quiet && onStdout == 0) {
        std::cout << report(summary);
        if (!profiled.empty()) // ftrace's trace_stat, one row per CPU
            std::cout << engine.block().restart().profile().table();
    }
    int rc = writeSummaryAndSeries(engine, summary, o.jsonOut, csvOut);
    if (!saveSession.empty()) // where the run stopped: --until's event, or the end
        if (auto werr = SafeFile::write(saveSession, Session::of(engine, scenario->sourceJson).toText());
            !werr.empty()) {
            std::cerr << "blkmqlab-cli: --save-session: " << werr << '\n';
            rc = kExitIo;
        }
    if (!debugfsDir.empty()) { // where the run stopped, as save-session
        const auto files = blkMqDebugfs(engine.block());
        const std::string werr = files.ok() ? SafeFile::writeTree(debugfsDir, *files) : files.error();
        if (!werr.empty()) {
            std::cerr << "blkmqlab-cli: --debugfs: " << werr << '\n';
            rc = files.ok() ? kExitIo : kExitUsage;
        }
    }
    if (trace) {
        if (auto werr = SafeFile::write(traceOut, trace->finish(engine)); !werr.empty()) {
            std::cerr << "blkmqlab-cli: --trace: " << werr << '\n';
            rc = kExitIo;
        } else if (trace->truncated()) {
            std::cerr << "blkmqlab-cli: --trace: stopped at the cap of " << traceCap
                      << " events (--trace-cap, --trace-window)\n";
        }
    }
    if (!flushStdout())
        rc = kExitIo;
    if (rc == kExitOk && o.failOnStall && summary["stall"]["detected"].get<bool>())
        return kExitStall;
    return rc;
}

} // namespace blkmq::cli
