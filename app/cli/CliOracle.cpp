// blkmqlab-cli oracle: the real kernel as referee. Boots Debian's Linux 6.1 under QEMU on the
// scenario's machine, runs the same fio job file there and in the lab (kernel.version=v6.1, on the
// placement the guest's kernel chose), and prints what each counted side by side (docs/oracle.md).
#include "Cli.h"
#include "CliOptions.h"

#include "block/BlkMqDebugfs.h"
#include "engine/Engine.h"
#include "io/Limits.h"
#include "io/SafeFile.h"
#include "oracle/GuestPlan.h"
#include "oracle/OracleCase.h"
#include "oracle/OracleCounts.h"
#include "oracle/OracleFigures.h"
#include "scenario/FioJobFile.h"
#include "scenario/ScenarioLoader.h"
#include "sim/Duration.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace blkmq {
// resources/oracle, embedded by app/cli/CMakeLists.txt.
extern const char* const kOracleBuildInitramfs;
extern const char* const kOracleInit;
} // namespace blkmq

namespace blkmq::cli {

namespace {

namespace fs = std::filesystem;

constexpr int kBootDeadlineS
    = 40; // a boot that has not reached /init by then (it takes about 5 s here) is killed and retried once

std::string oneLine(std::string s)
{
    std::replace(s.begin(), s.end(), '\n', ' ');
    while (!s.empty() && (s.back() == ' ' || s.back() == '\r'))
        s.pop_back();
    return s.size() > 300 ? s.substr(0, 300) + "..." : s;
}

// Looks for a program on PATH.
std::string which(const std::string& program)
{
    const char* path = std::getenv("PATH");
    std::stringstream ss(path ? path : "/usr/bin:/bin");
    for (std::string dir; std::getline(ss, dir, ':');)
        if (!dir.empty() && ::access((dir + "/" + program).c_str(), X_OK) == 0)
            return dir + "/" + program;
    return {};
}

// Debian's kernel: the newest /boot/vmlinuz-6.1* whose modules are installed.
std::string findKernel(std::string& release)
{
    std::vector<std::string> found;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/boot", ec)) {
        const std::string name = e.path().filename().string();
        if (name.rfind("vmlinuz-6.1", 0) == 0 && fs::is_directory("/lib/modules/" + name.substr(8), ec))
            found.push_back(name.substr(8));
    }
    if (found.empty())
        return {};
    std::sort(found.begin(), found.end());
    release = found.back();
    return "/boot/vmlinuz-" + release;
}

// A newc cpio archive (the initramfs format) of regular files under /job.
std::string cpioNewc(const std::vector<std::pair<std::string, std::string>>& files)
{
    std::string out;
    int ino = 1;
    const auto entry = [&](const std::string& name, unsigned mode, const std::string& data) {
        char head[111];
        std::snprintf(head, sizeof head, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X", ino++, mode, 0u,
            0u, 1u, 0u, static_cast<unsigned>(data.size()), 0u, 0u, 0u, 0u, static_cast<unsigned>(name.size() + 1), 0u);
        out.append(head, 110);
        out.append(name).push_back('\0');
        out.append((4 - out.size() % 4) % 4, '\0');
        out.append(data);
        out.append((4 - out.size() % 4) % 4, '\0');
    };
    entry("job", 040755, "");
    for (const auto& [name, data] : files)
        entry("job/" + name, 0100644, data);
    entry("TRAILER!!!", 0, "");
    return out;
}

struct Child {
    std::string output;
    int status = -1;
    bool timedOut = false;
    bool bootTimedOut = false;
};

// Runs argv with stdout and stderr into one pipe, until it exits, `deadline` passes, or
// `bootMarker` has not appeared by the boot deadline. The child is always killed (with its group).
Child runChild(const std::vector<std::string>& argv, std::chrono::seconds deadline, const std::string& bootMarker)
{
    Child c;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        c.output = std::string("pipe: ") + std::strerror(errno);
        return c;
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::setpgid(0, 0);
        ::dup2(fds[1], 1);
        ::dup2(fds[1], 2);
        const int devnull = ::open("/dev/null", O_RDONLY);
        ::dup2(devnull, 0);
        std::vector<char*> args;
        for (const auto& a : argv)
            args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        ::execv(args[0], args.data());
        std::fprintf(stderr, "cannot run %s: %s\n", args[0], std::strerror(errno));
        ::_exit(127);
    }
    ::close(fds[1]);
    if (pid < 0) {
        ::close(fds[0]);
        c.output = std::string("fork: ") + std::strerror(errno);
        return c;
    }
    ::setpgid(pid, pid);
    const auto start = std::chrono::steady_clock::now();
    bool booted = bootMarker.empty(), closed = false;
    for (;;) {
        const auto elapsed = std::chrono::steady_clock::now() - start;
        if (elapsed > deadline || (!booted && elapsed > std::chrono::seconds(kBootDeadlineS))) {
            c.timedOut = true;
            // A hung boot is one the boot deadline ended; a run deadline shorter than a boot is the run's.
            c.bootTimedOut = !booted && elapsed <= deadline;
            break;
        }
        pollfd p { fds[0], POLLIN, 0 };
        const int r = ::poll(&p, 1, 500);
        if (r < 0 && errno != EINTR)
            break;
        if (r > 0) {
            char buf[65536];
            const ssize_t n = ::read(fds[0], buf, sizeof buf);
            if (n <= 0) {
                closed = true; // EOF: the child closed its output, as it does when it exits
                break;
            }
            c.output.append(buf, static_cast<std::size_t>(n));
            if (!booted && c.output.find(bootMarker) != std::string::npos)
                booted = true;
            if (c.output.size() > (64u << 20))
                break; // a guest that floods its console is not one to read further
        }
    }
    // Its output closed, the child is exiting: its exit status is its own, not the kill's, once it
    // has (up to a second; looked at without reaping it, so its group cannot be another's yet).
    for (int i = 0; closed && i < 100; ++i) {
        siginfo_t info {};
        if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid)
            break;
        ::usleep(10'000);
    }
    ::kill(-pid, SIGKILL);
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    c.status = status;
    return c;
}

// The SHA-256 of a file, as sha256sum (coreutils) prints it, or empty with `error` set.
std::string sha256(const std::string& file, std::string& error)
{
    const std::string program = which("sha256sum");
    if (program.empty()) {
        error = "sha256sum is not installed (Debian package coreutils)";
        return {};
    }
    const Child c = runChild({ program, "--", file }, std::chrono::seconds(120), "");
    const std::string hash = c.output.substr(0, c.output.find(' '));
    if (c.status != 0 || hash.size() != 64 || hash.find_first_not_of("0123456789abcdef") != std::string::npos) {
        error = "cannot hash '" + file + "': " + oneLine(c.output);
        return {};
    }
    return hash;
}

// The guest as the lab built it for one kernel release and script version: files in the private
// cache folder (SafeFile::privateFolder), and their hashes, recorded when they were built.
struct GuestFiles {
    std::string initramfs, initramfsSha;
    std::string vmlinux, vmlinuxSha; // empty: the kernel could not be decompressed; /boot's is booted
};

// An exclusive lock on the cache folder while one process looks for or builds the guest.
class CacheLock {
public:
    explicit CacheLock(const std::string& dir)
        : fd_(::open((dir + "/lock").c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600))
    {
        if (fd_ >= 0)
            ::flock(fd_, LOCK_EX);
    }
    CacheLock(const CacheLock&) = delete;
    CacheLock& operator=(const CacheLock&) = delete;
    ~CacheLock()
    {
        if (fd_ >= 0)
            ::close(fd_);
    }
    bool held() const { return fd_ >= 0; }

private:
    int fd_;
};

// The guest for `release` in the private folder `cache`, built there once per kernel and script
// version. The build runs in a fresh folder made inside the cache (mkdtemp), so no name in it
// was there before; its results are hashed, renamed into place and the hashes recorded last
// (base-RELEASE-VERSION.sha256), so a guest without its record is never used.
std::optional<GuestFiles> guestFiles(const std::string& cache, const std::string& release, std::string& error)
{
    const std::size_t version = std::hash<std::string> {}(std::string(kOracleBuildInitramfs) + kOracleInit);
    char tag[20];
    std::snprintf(tag, sizeof tag, "%016zx", version);
    const std::string stem = cache + "/base-" + release + "-" + tag;
    CacheLock lock(cache);
    if (!lock.held()) {
        error = "cannot lock the oracle's cache folder '" + cache + "': " + std::strerror(errno);
        return std::nullopt;
    }
    // The record: "HASH  initramfs" and, when there is one, "HASH  vmlinux".
    // Only this user's own regular files count; anything else there is replaced by a build.
    const auto own = [](const std::string& file) {
        struct stat st { };
        return ::lstat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid();
    };
    std::string record;
    if (own(stem + ".sha256") && SafeFile::read(stem + ".sha256", 1024, record).empty()) {
        GuestFiles g;
        std::istringstream in(record);
        for (std::string hash, name; in >> hash >> name;) {
            if (name == "initramfs")
                g.initramfsSha = hash;
            else if (name == "vmlinux")
                g.vmlinuxSha = hash;
        }
        g.initramfs = stem + ".cpio";
        g.vmlinux = g.vmlinuxSha.empty() ? "" : stem + ".vmlinux";
        if (!g.initramfsSha.empty() && own(g.initramfs) && (g.vmlinux.empty() || own(g.vmlinux)))
            return g;
    }
    std::string staging = cache + "/build.XXXXXX";
    if (!::mkdtemp(staging.data())) {
        error = "cannot make a folder in the oracle's cache folder '" + cache + "': " + std::strerror(errno);
        return std::nullopt;
    }
    struct Cleanup {
        std::string dir;
        ~Cleanup()
        {
            std::error_code ec;
            fs::remove_all(dir, ec);
        }
    } cleanup { staging };
    const std::string script = staging + "/build-initramfs.sh", init = staging + "/oracle-init.sh",
                      out = staging + "/base.cpio", vmlinux = staging + "/base.vmlinux";
    for (const auto& [file, text] : { std::pair { &script, kOracleBuildInitramfs }, { &init, kOracleInit } })
        if (const std::string e = SafeFile::write(*file, text); !e.empty()) {
            error = e;
            return std::nullopt;
        }
    const Child build = runChild({ "/bin/sh", script, release, out, init }, std::chrono::seconds(600), "");
    std::error_code ec;
    if (build.status != 0 || !fs::is_regular_file(out, ec)) {
        error = "building the guest's initramfs: " + oneLine(build.output.empty() ? "it failed" : build.output);
        return std::nullopt;
    }
    GuestFiles g { stem + ".cpio", sha256(out, error), {}, {} };
    if (g.initramfsSha.empty())
        return std::nullopt;
    record = g.initramfsSha + "  initramfs\n";
    if (fs::is_regular_file(vmlinux, ec)) {
        g.vmlinux = stem + ".vmlinux";
        if ((g.vmlinuxSha = sha256(vmlinux, error)).empty())
            return std::nullopt;
        record += g.vmlinuxSha + "  vmlinux\n";
    }
    if (const std::string e = SafeFile::write(staging + "/record", record); !e.empty()) {
        error = e;
        return std::nullopt;
    }
    // rename() replaces a name, whatever it was, and never follows a link there. The record last.
    if (::rename(out.c_str(), g.initramfs.c_str()) != 0
        || (!g.vmlinux.empty() && ::rename(vmlinux.c_str(), g.vmlinux.c_str()) != 0)
        || ::rename((staging + "/record").c_str(), (stem + ".sha256").c_str()) != 0) {
        error = "cannot keep the guest in the oracle's cache folder '" + cache + "': " + std::strerror(errno);
        return std::nullopt;
    }
    return g;
}

// Copies `from` (in the cache) to `to` (in this run's private folder) and checks the copy, the
// file QEMU will read, against the hash recorded when the lab built it.
std::string copyChecked(const std::string& from, const std::string& sha, const std::string& to)
{
    std::ifstream in(from, std::ios::binary);
    std::ofstream out(to, std::ios::binary);
    out << in.rdbuf();
    out.close();
    if (!in || !out)
        return "cannot copy the guest's '" + from + "' into '" + to + "'";
    std::string error;
    const std::string hash = sha256(to, error);
    if (hash.empty())
        return error;
    if (hash != sha)
        return "'" + from
            + "' is not the file the lab built (its SHA-256 differs from the one recorded then): "
              "remove it and its .sha256 beside it, and the next run builds the guest again";
    return {};
}

struct OracleRun {
    GuestReport guest;
    OracleCounts lab;
    std::vector<std::string> placement;
    Scenario labScenario;
    double wallS = 0;
};

std::string cpusOf(const std::vector<int>& v)
{
    std::string s;
    for (int c : v) {
        if (!s.empty())
            s.push_back(',');
        s.append(std::to_string(c));
    }
    return s;
}

} // namespace

int oracleCommand(const std::vector<std::string>& args)
{
    ScenarioOptions o;
    std::string casePath, cache, consoleOut, debugfsDir;
    std::int64_t timeoutNs = 0;
    bool listFigures = false;
    const auto err = parseScenarioOptions(args, o, [&](const std::string& a, const NextValue& value, std::string& e) {
        if (a == "--case") {
            if (!value(casePath) || casePath.empty())
                e = "--case needs an oracle case file (tests/oracle/*.json)";
            return true;
        }
        if (a == "--cache") {
            if (!value(cache) || cache.empty())
                e = "--cache needs a folder";
            return true;
        }
        if (a == "--console") {
            if (!value(consoleOut) || consoleOut.empty())
                e = "--console needs a file name";
            return true;
        }
        if (a == "--timeout") {
            std::string v;
            const auto t = value(v) ? parseDuration(v) : std::nullopt;
            if (!t || t->ns() < 10'000'000'000 || t->ns() > 3'600'000'000'000)
                e = "--timeout needs a duration from 10s to 3600s";
            else
                timeoutNs = t->ns();
            return true;
        }
        if (a == "--figures") {
            listFigures = true;
            return true;
        }
        if (a == "--debugfs") {
            if (!value(debugfsDir) || debugfsDir.empty() || debugfsDir == "-")
                e = "--debugfs needs a folder that does not exist yet, or an empty one";
            return true;
        }
        return false;
    });
    if (!err.empty()) {
        std::cerr << "blkmqlab-cli oracle: " << err << " (see blkmqlab-cli help)\n";
        return kExitUsage;
    }
    if (listFigures) {
        std::cout << "figures the oracle compares (a case gives each judged one its band):\n";
        for (const OracleFigure& f : OracleFigures::all())
            std::cout << "  " << f.id << std::string(f.id ? 24 - std::min<std::size_t>(23, std::strlen(f.id)) : 1, ' ')
                      << f.meaning << "\n";
        return kExitOk;
    }
    OracleCase oracleCase;
    if (!casePath.empty()) {
        if (o.hasFile || !o.preset.empty() || !o.fio.empty()) {
            std::cerr << "blkmqlab-cli oracle: --case names its scenario and fio file itself\n";
            return kExitUsage;
        }
        std::string text;
        if (const std::string e = SafeFile::read(casePath, limits::kScenarioFileBytes, text); !e.empty()) {
            std::cerr << "blkmqlab-cli oracle: " << e << "\n";
            return kExitUsage;
        }
        auto c = OracleCase::fromText(text, fs::path(casePath).parent_path().string());
        if (!c.ok()) {
            std::cerr << "blkmqlab-cli oracle: " << casePath << ": " << c.error() << "\n";
            return kExitUsage;
        }
        oracleCase = *c;
        if (oracleCase.scenario.rfind("preset:", 0) == 0)
            o.preset = oracleCase.scenario.substr(7);
        else {
            o.hasFile = true;
            o.file = oracleCase.scenario;
        }
        o.fio = oracleCase.fio;
        o.sets.insert(o.sets.begin(), oracleCase.sets.begin(), oracleCase.sets.end());
        if (!timeoutNs)
            timeoutNs = oracleCase.timeoutNs;
    }
    if (int code = 0; !outputsUsable("oracle", { { "--json", o.jsonOut }, { "--console", consoleOut } }, code))
        return code;
    if (const std::string e = debugfsDir.empty() ? "" : SafeFile::checkFreshFolder(debugfsDir); !e.empty()) {
        std::cerr << "blkmqlab-cli oracle: --debugfs: " << e << "\n";
        return kExitIo;
    }
    // The lab runs Linux 6.1's switches: the guest's kernel.
    const auto scenario = o.load({ "kernel.version=v6.1" });
    if (!scenario.ok()) {
        std::cerr << "blkmqlab-cli oracle: " << scenario.error() << "\n";
        return kExitUsage;
    }
    // The job both sides run: the file given, or the scenario's own jobs written as one.
    std::string fioText;
    if (!o.fio.empty()) {
        (void)SafeFile::read(o.fio, limits::kScenarioFileBytes, fioText); // read by load() already
    } else if (const auto written = FioJobFile::write(*scenario); written.ok()) {
        fioText = *written;
    } else {
        std::cerr << "blkmqlab-cli oracle: give the job as a fio job file (--fio FILE), which the guest runs too; "
                     "the scenario's own jobs are not one: "
                  << written.error() << "\n";
        return kExitUsage;
    }
    const auto plan = planGuest(*scenario, fioText);
    if (!plan.ok()) {
        std::cerr << "blkmqlab-cli oracle: " << plan.error() << "\n";
        return kExitUsage;
    }

    // The environment: QEMU, Debian's kernel, the initramfs.
    const std::string qemu = which("qemu-system-x86_64");
    if (qemu.empty()) {
        std::cerr << "blkmqlab-cli oracle: qemu-system-x86_64 is not installed (Debian package qemu-system-x86; "
                     ".ci/bootstrap installs it)\n";
        return kExitIo;
    }
    std::string release;
    std::string kernel = findKernel(release);
    if (kernel.empty()) {
        std::cerr << "blkmqlab-cli oracle: no Linux 6.1 kernel with its modules in /boot and /lib/modules (Debian "
                     "package linux-image-amd64)\n";
        return kExitIo;
    }
    if (cache.empty()) { // never a fallback under /tmp, where another user could make it first
        const char* env = std::getenv("BLKMQLAB_ORACLE_CACHE");
        const char* xdg = std::getenv("XDG_CACHE_HOME");
        const char* home = std::getenv("HOME");
        if (!(env && *env) && !(xdg && *xdg) && !(home && *home)) {
            std::cerr << "blkmqlab-cli oracle: no cache folder: HOME is not set (give one with --cache DIR)\n";
            return kExitUsage;
        }
        cache = env && *env ? env
            : xdg && *xdg   ? std::string(xdg) + "/blkmqlab/oracle"
                            : std::string(home) + "/.cache/blkmqlab/oracle";
    }
    // The guest is built, kept and booted from there: only its user may be able to change it.
    std::string cacheDir;
    if (const std::string e = SafeFile::privateFolder(cache, cacheDir); !e.empty()) {
        std::cerr << "blkmqlab-cli oracle: the cache folder (--cache): " << e << "\n";
        return kExitIo;
    }
    std::string error;
    const auto guestFilesBuilt = guestFiles(cacheDir, release, error);
    if (!guestFilesBuilt) {
        std::cerr << "blkmqlab-cli oracle: " << error << "\n";
        return kExitIo;
    }
    char tmpl[] = "/tmp/blkmqlab-oracle.XXXXXX";
    const char* work = ::mkdtemp(tmpl);
    if (!work) {
        std::cerr << "blkmqlab-cli oracle: cannot make a temporary folder: " << std::strerror(errno) << "\n";
        return kExitIo;
    }
    // What QEMU reads is a copy in this run's own folder, checked against the hashes recorded
    // when the lab built it.
    const std::string initrd = std::string(work) + "/initrd.cpio";
    std::string copyError = copyChecked(guestFilesBuilt->initramfs, guestFilesBuilt->initramfsSha, initrd);
    if (copyError.empty() && !guestFilesBuilt->vmlinux.empty()) { // the kernel decompressed (build-initramfs.sh)
        kernel = std::string(work) + "/vmlinux";
        copyError = copyChecked(guestFilesBuilt->vmlinux, guestFilesBuilt->vmlinuxSha, kernel);
    }
    if (copyError.empty()) {
        std::ofstream out(initrd, std::ios::binary | std::ios::app);
        out << cpioNewc({ { "settings", plan->settings }, { "setup.sh", plan->setup }, { "job.fio", plan->fio } });
        if (!out)
            copyError = "cannot write " + initrd;
    }
    if (!copyError.empty()) {
        std::cerr << "blkmqlab-cli oracle: " << copyError << "\n";
        fs::remove_all(work);
        return kExitIo;
    }
    std::vector<std::string> argv { qemu };
    argv.insert(argv.end(), plan->qemuArgs.begin(), plan->qemuArgs.end());
    argv.insert(argv.end(),
        { "-kernel", kernel, "-initrd", initrd, "-append",
            "console=ttyS0 quiet tsc=reliable clocksource=tsc mitigations=off panic=-1 " + plan->cmdline, "-nographic",
            "-no-reboot", "-nodefaults", "-serial", "stdio" });
    const auto deadline = std::chrono::seconds(timeoutNs ? timeoutNs / 1'000'000'000 : 300);
    const auto t0 = std::chrono::steady_clock::now();
    Child guest = runChild(argv, deadline, "@oracle boot");
    if (guest.bootTimedOut) // one boot in a dozen hangs before /init under TCG here
        guest = runChild(argv, deadline, "@oracle boot");
    fs::remove_all(work);
    if (!consoleOut.empty())
        (void)SafeFile::write(consoleOut, guest.output);
    OracleRun run;
    run.wallS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    run.guest = parseGuestReport(guest.output, plan->nrCpus);
    const auto lastLine = [&] {
        std::string text = guest.output;
        while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
            text.pop_back();
        return oneLine(text.substr(text.find_last_of('\n') == std::string::npos ? 0 : text.find_last_of('\n') + 1));
    };
    if (!run.guest.error.empty()) {
        const bool job = run.guest.error.rfind("fio:", 0) == 0;
        std::cerr << "blkmqlab-cli oracle: the guest: " << run.guest.error << "\n";
        return job ? kExitUsage : kExitIo;
    }
    if (!run.guest.done) {
        std::cerr << "blkmqlab-cli oracle: the guest "
                  << (guest.bootTimedOut ? "did not reach /init within " + std::to_string(kBootDeadlineS) + " s, twice"
                             : guest.timedOut ? "did not finish within " + std::to_string(deadline.count()) + " s"
                                              : "stopped early")
                  << "; it printed last: " << lastLine() << "\n";
        return kExitIo;
    }

    if (const std::string d = machineDifference(scenario->topology, run.guest); !d.empty()) {
        std::cerr << "blkmqlab-cli oracle: the guest's machine is not the scenario's: " << d << "\n";
        return kExitIo;
    }

    // The lab, on the guest's placement.
    run.placement = placementSettings(*scenario, run.guest);
    const auto labScenario = o.load([&] {
        std::vector<std::string> s { "kernel.version=v6.1" };
        s.insert(s.end(), run.placement.begin(), run.placement.end());
        return s;
    }());
    if (!labScenario.ok()) {
        std::cerr << "blkmqlab-cli oracle: the guest's placement does not load in the lab: " << labScenario.error()
                  << "\n";
        return kExitIo;
    }
    Engine engine(*labScenario);
    LabCounter counter(engine);
    engine.addTraceSink(&counter);
    const auto built = blkMqDebugfs(engine.block()); // the tag set as built, before the first request
    engine.run();
    run.lab = counter.counts();
    if (built.ok())
        run.lab.built.insert(built->begin(), built->end());
    if (const auto files = blkMqDebugfs(engine.block()); files.ok())
        run.lab.debugfs.insert(files->begin(), files->end());
    if (!debugfsDir.empty()) { // both trees, to diff: kernel/vda/hctx0/tags beside lab/vda/hctx0/tags
        std::vector<std::pair<std::string, std::string>> both;
        for (const auto& [side, counts] : { std::pair { "kernel/", &run.guest.counts }, { "lab/", &run.lab } })
            for (const auto& [path, text] : counts->debugfs)
                both.emplace_back(side + path, text);
        if (const std::string e = SafeFile::writeTree(debugfsDir, both); !e.empty()) {
            std::cerr << "blkmqlab-cli oracle: --debugfs: " << e << "\n";
            return kExitIo;
        }
    }

    const auto rows = OracleFigures::compare(
        run.guest.counts, run.lab, labScenario->topology, labScenario->devices.front().name, oracleCase.bands);
    const bool judged = !casePath.empty();
    int failed = 0;
    for (const FigureRow& r : rows)
        failed += r.holds ? 0 : 1;

    std::cout << "oracle" << (judged ? " case " + oracleCase.name : "") << ": " << labScenario->name << " on "
              << plan->nrCpus << " CPUs, Linux " << run.guest.kernel << " under QEMU (TCG) beside the lab's v6.1\n";
    if (!oracleCase.about.empty())
        std::cout << "  " << oracleCase.about << "\n";
    if (o.fio.empty())
        std::cout << "  job: the scenario's own jobs, written as a fio job file (--console shows it)\n";
    std::cout << "  completed: kernel " << run.guest.counts.completed() << " (unpaired " << run.guest.counts.unpaired
              << "), lab " << run.lab.completed() << "; guest " << std::fixed << std::setprecision(1) << run.wallS
              << " s wall\n";
    for (const GuestReport::Device& d : run.guest.devices)
        std::cout << "  " << d.name << ": " << d.hctxCpus.size() << " hw queue(s), scheduler " << d.scheduler
                  << ", rq_affinity " << d.rqAffinity
                  << (d.vectorCpu.empty() ? std::string() : ", vectors on CPU " + cpusOf(d.vectorCpu)) << "\n";
    for (const std::string& n : run.guest.notes)
        std::cout << "  note: " << n << "\n";
    std::cout << "\n| figure | kernel | lab | band | holds |\n| --- | --- | --- | --- | --- |\n";
    for (const FigureRow& r : rows)
        std::cout << "| " << r.figure->label << " (`" << r.figure->id << "`) | " << r.kernel.text() << " | "
                  << r.lab.text() << " | " << r.bandText() << " | "
                  << (!r.band.judged() ? "-"
                             : r.holds ? "yes"
                                       : "**no**")
                  << " |\n";
    if (judged)
        std::cout << "\n"
                  << (failed ? std::to_string(failed) + " figure(s) left their band" : "every judged figure holds")
                  << "\n";

    if (!o.jsonOut.empty()) {
        nlohmann::json doc;
        doc["case"] = oracleCase.name;
        doc["scenario"] = labScenario->name;
        doc["kernel"] = run.guest.kernel;
        doc["placement"] = run.placement;
        doc["completed"] = { { "kernel", run.guest.counts.completed() }, { "lab", run.lab.completed() } };
        for (const FigureRow& r : rows) {
            nlohmann::json f;
            const auto put = [](const FigureValue& v) {
                return v.number         ? nlohmann::json(*v.number)
                    : !v.layout.empty() ? nlohmann::json(v.layout)
                                        : nlohmann::json(v.cpus);
            };
            f["kernel"] = put(r.kernel);
            f["lab"] = put(r.lab);
            if (r.band.judged()) {
                f["band"] = r.bandText();
                f["why"] = r.band.why;
                f["holds"] = r.holds;
            }
            doc["figures"][r.figure->id] = f;
        }
        if (const std::string e = SafeFile::write(o.jsonOut, doc.dump(2) + "\n"); !e.empty()) {
            std::cerr << "blkmqlab-cli oracle: --json: " << e << "\n";
            return kExitIo;
        }
    }
    if (!flushStdout())
        return kExitIo;
    return failed ? kExitLesson : kExitOk;
}

} // namespace blkmq::cli
