#include "io/SafeFile.h"

#include "io/Text.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <iostream>
#include <random>
#include <utility>
#include <vector>

#include <climits>
#include <fcntl.h>
#include <pwd.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

namespace blkmq {

namespace {

// A path as a message quotes it: as it is when it is short, valid text; else escaped and cut.
std::string shown(const std::string& path)
{
    return path.size() <= 200 && textProblem(path, false).empty() ? path : printable(path, 200);
}

std::string sysError(const std::string& what, const std::string& path, int err)
{
    return what + " '" + shown(path) + "': " + std::strerror(err);
}

// A descriptor this file owns.
class Fd {
public:
    Fd() = default;
    explicit Fd(int fd)
        : fd_(fd)
    {
    }
    Fd(Fd&& o) noexcept
        : fd_(std::exchange(o.fd_, -1))
    {
    }
    Fd& operator=(Fd&& o) noexcept
    {
        if (this != &o) {
            close();
            fd_ = std::exchange(o.fd_, -1);
        }
        return *this;
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() { close(); }
    int get() const { return fd_; }
    // Closes now; returns 0 or the errno (a device or NFS may report a write error here).
    int close()
    {
        const int fd = std::exchange(fd_, -1);
        return fd >= 0 && ::close(fd) != 0 ? errno : 0;
    }

private:
    int fd_ = -1;
};

constexpr int kMaxSymlinks = 40; // as the kernel allows (MAXSYMLINKS)

// Where an output path leads: the open folder that holds its last name. The
// path is walked one component at a time from an open folder, with no step
// taken by the kernel on its own, so the folder checked is the folder written
// and each symbolic link on the way is weighed by mayFollowSymlink().
struct Target {
    Fd folder; // O_PATH descriptor of the folder that holds `name`
    std::string folderShown; // that folder as walked, for messages
    std::string name; // the last component, never "." or ".."
    bool exists = false;
    struct stat st { };
    int descriptor = -1; // /dev/stdout, /dev/fd/N, /proc/self/fd/N: this process's descriptor N
    std::string error;
};

std::string joinShown(const std::string& folder, const std::string& name)
{
    if (folder.empty() || folder == ".")
        return name;
    return folder.back() == '/' ? folder + name : folder + "/" + name;
}

bool isNumber(const std::string& s, std::size_t maxDigits)
{
    return !s.empty() && s.size() <= maxDigits && s.find_first_not_of("0123456789") == std::string::npos;
}

// Whether `folder` is the fd/ folder of this process (or of one of its
// threads) in procfs, whose entries are the kernel's links to open files.
bool isOwnFdFolder(int folder)
{
    struct statfs fs { };
    if (::fstatfs(folder, &fs) != 0 || fs.f_type != PROC_SUPER_MAGIC)
        return false;
    std::error_code ec;
    const std::string where = std::filesystem::read_symlink("/proc/self/fd/" + std::to_string(folder), ec).string();
    const std::string self = "/proc/" + std::to_string(::getpid()) + "/";
    if (ec || where.rfind(self, 0) != 0)
        return false;
    const std::string rest = where.substr(self.size());
    if (rest == "fd")
        return true;
    // task/TID/fd
    const std::string task = "task/", fd = "/fd";
    return rest.size() > task.size() + fd.size() && rest.rfind(task, 0) == 0
        && rest.compare(rest.size() - fd.size(), fd.size(), fd) == 0
        && isNumber(rest.substr(task.size(), rest.size() - task.size() - fd.size()), 10);
}

// Splits `p` into its names; a trailing slash keeps a "." last, so that "x/"
// names a folder as it does for the kernel.
std::vector<std::string> components(const std::string& p)
{
    std::vector<std::string> parts;
    std::size_t at = 0;
    while (at < p.size()) {
        const std::size_t slash = std::min(p.find('/', at), p.size());
        if (slash > at)
            parts.push_back(p.substr(at, slash - at));
        at = slash + 1;
    }
    if (!p.empty() && p.back() == '/')
        parts.emplace_back(".");
    return parts;
}

Target resolve(const std::string& path)
{
    Target t;
    const auto fail = [&t](std::string why) {
        t.error = std::move(why);
        return std::move(t);
    };
    const auto openStart = [&t](bool absolute) {
        t.folder = Fd(::open(absolute ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
        t.folderShown = std::string(1, absolute ? '/' : '.');
        return t.folder.get() >= 0;
    };
    const auto isDirectory = [&path] { return "cannot write '" + shown(path) + "': it is a directory"; };
    if (!openStart(!path.empty() && path.front() == '/'))
        return fail(sysError("cannot write", path, errno));
    const std::vector<std::string> first = components(path);
    std::deque<std::string> rest(first.begin(), first.end());
    if (rest.empty())
        return fail(isDirectory());

    int hops = 0;
    const uid_t follower = ::geteuid();
    while (!rest.empty()) {
        const std::string name = rest.front();
        rest.pop_front();
        const bool last = rest.empty();
        if (name == "." || name == "..") {
            if (last)
                return fail(isDirectory());
            if (name == "..") {
                Fd up(::openat(t.folder.get(), "..", O_PATH | O_DIRECTORY | O_CLOEXEC));
                if (up.get() < 0)
                    return fail(sysError("cannot write", path, errno));
                t.folder = std::move(up);
                t.folderShown = joinShown(t.folderShown, "..");
            }
            continue;
        }
        struct stat st { };
        if (::fstatat(t.folder.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            const int err = errno;
            if (err == ENOENT && isOwnFdFolder(t.folder.get())) // /dev/fd/N of a descriptor not open
                return fail(sysError("cannot write", path, EBADF));
            if (err == ENOENT && last) {
                t.name = name;
                return t;
            }
            if (err == ENOENT)
                return fail("cannot write '" + shown(path) + "': folder '" + shown(joinShown(t.folderShown, name))
                    + "': " + std::strerror(err));
            return fail(sysError("cannot write", path, err));
        }
        if (S_ISLNK(st.st_mode)) {
            const std::string link = joinShown(t.folderShown, name);
            if (isOwnFdFolder(t.folder.get())) {
                // The kernel's link to an open file: the descriptor itself, not a path to reopen.
                if (!last || !isNumber(name, 9))
                    return fail(
                        "cannot write '" + shown(path) + "': '" + shown(link) + "' is not a descriptor to write to");
                t.descriptor = std::stoi(name);
                t.name = name;
                if (t.descriptor == t.folder.get()) // the walk's own descriptor took the number of a closed one
                    return fail(sysError("cannot write", path, EBADF));
                return t;
            }
            struct stat folderSt { };
            if (::fstat(t.folder.get(), &folderSt) != 0)
                return fail(sysError("cannot write", path, errno));
            if (!SafeFile::mayFollowSymlink(folderSt.st_mode, folderSt.st_uid, st.st_uid, follower))
                return fail("cannot write '" + shown(path) + "': refusing to follow the symbolic link '" + shown(link)
                    + "' (owned by uid " + std::to_string(st.st_uid) + ", not by the writer or by the folder's owner)"
                    + " in the sticky world-writable folder '" + shown(t.folderShown) + "' (docs/limits.md)");
            if (++hops > kMaxSymlinks)
                return fail(sysError("cannot write", path, ELOOP));
            std::string target(PATH_MAX, '\0');
            const ssize_t n = ::readlinkat(t.folder.get(), name.c_str(), target.data(), target.size());
            if (n < 0)
                return fail(sysError("cannot write", path, errno));
            target.resize(static_cast<std::size_t>(n));
            if (target.empty())
                return fail(sysError("cannot write", path, ENOENT));
            if (target.front() == '/' && !openStart(true))
                return fail(sysError("cannot write", path, errno));
            const std::vector<std::string> more = components(target);
            rest.insert(rest.begin(), more.begin(), more.end());
            if (rest.empty())
                return fail(isDirectory());
            continue;
        }
        if (last) {
            t.name = name;
            t.exists = true;
            t.st = st;
            return t;
        }
        if (!S_ISDIR(st.st_mode))
            return fail(
                "cannot write '" + shown(path) + "': '" + shown(joinShown(t.folderShown, name)) + "' is not a folder");
        Fd down(::openat(t.folder.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (down.get() < 0)
            return fail(sysError("cannot write", path, errno));
        t.folder = std::move(down);
        t.folderShown = joinShown(t.folderShown, name);
    }
    return fail(isDirectory());
}

// Writes all of `content` to `fd`; returns 0 or the errno.
int writeAll(int fd, std::string_view content)
{
    std::size_t done = 0;
    while (done < content.size()) {
        const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        done += static_cast<std::size_t>(n);
    }
    return 0;
}

std::string writeStdout(std::string_view content)
{
    std::cout.write(content.data(), static_cast<std::streamsize>(content.size()));
    std::cout.flush();
    if (!std::cout || std::fflush(stdout) != 0) {
        const int err = errno ? errno : EIO;
        std::cout.clear();
        return std::string("cannot write standard output: ") + std::strerror(err);
    }
    return {};
}

// 0 when descriptor `fd` is open for writing, else the errno to report.
int descriptorWritable(int fd)
{
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags < 0)
        return errno;
    return (flags & O_ACCMODE) == O_RDONLY ? EBADF : 0;
}

// /dev/stdout and its kind: the open descriptor, at its offset.
std::string writeDescriptor(const std::string& shown, int fd, std::string_view content)
{
    if (fd == STDOUT_FILENO)
        return writeStdout(content);
    std::cout.flush();
    std::fflush(nullptr); // what was printed before comes first
    if (const int err = descriptorWritable(fd))
        return sysError("cannot write", shown, err);
    if (const int err = writeAll(fd, content))
        return sysError("cannot write", shown, err);
    return {};
}

// A device node, a FIFO or a socket: written in place, never replaced.
// Sets `isRegular` (and writes nothing) if a regular file took its place.
std::string writeDirect(const std::string& shown, const Target& t, std::string_view content, bool& isRegular)
{
    // O_NONBLOCK makes opening a FIFO that nobody reads fail (ENXIO) instead of hanging.
    Fd fd(::openat(t.folder.get(), t.name.c_str(), O_WRONLY | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC));
    if (fd.get() < 0) {
        if (errno == ENXIO && S_ISFIFO(t.st.st_mode))
            return "cannot write '" + shown + "': it is a FIFO that no process is reading";
        return sysError("cannot write", shown, errno);
    }
    struct stat st { };
    if (::fstat(fd.get(), &st) != 0)
        return sysError("cannot write", shown, errno);
    if (S_ISREG(st.st_mode)) {
        isRegular = true;
        return {};
    }
    ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
    const int err = writeAll(fd.get(), content);
    const int closeErr = fd.close();
    if (err || closeErr)
        return sysError("cannot write", shown, err ? err : closeErr);
    return {};
}

// Creates ".NAME.XXXXXX" in the target's folder (NAME shortened so the whole
// fits in NAME_MAX), never following a link and never reusing a name.
Fd createTemporary(const Target& t, std::string& tmpName)
{
    static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    std::random_device entropy;
    std::uniform_int_distribution<std::size_t> pick(0, sizeof(kAlphabet) - 2);
    std::string stem(1, '.');
    stem.append(t.name, 0, NAME_MAX - 8).push_back('.');
    for (int attempt = 0; attempt < 100; ++attempt) {
        tmpName = stem;
        for (int i = 0; i < 6; ++i)
            tmpName += kAlphabet[pick(entropy)];
        Fd fd(::openat(t.folder.get(), tmpName.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
        if (fd.get() >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return Fd();
}

std::string writeReplacing(const std::string& shown, const Target& t, std::string_view content)
{
    std::string tmp;
    Fd fd = createTemporary(t, tmp);
    if (fd.get() < 0)
        return sysError("cannot write", shown, errno);
    mode_t mode = 0;
    if (t.exists) {
        mode = t.st.st_mode & 07777;
    } else {
        const mode_t mask = ::umask(0);
        ::umask(mask);
        mode = 0666 & ~mask;
    }
    int err = ::fchmod(fd.get(), mode) != 0 ? errno : 0;
    if (!err)
        err = writeAll(fd.get(), content);
    if (!err && ::fsync(fd.get()) != 0)
        err = errno;
    if (const int closeErr = fd.close(); closeErr && !err)
        err = closeErr;
    // renameat() replaces the name itself: a link put there since is replaced, never followed.
    if (!err && ::renameat(t.folder.get(), tmp.c_str(), t.folder.get(), t.name.c_str()) != 0)
        err = errno;
    if (err) {
        ::unlinkat(t.folder.get(), tmp.c_str(), 0);
        return sysError("cannot write", shown, err);
    }
    return {};
}

} // namespace

bool SafeFile::mayFollowSymlink(mode_t folderMode, uid_t folderOwner, uid_t linkOwner, uid_t follower)
{
    if (linkOwner == follower)
        return true;
    if ((folderMode & (S_ISVTX | S_IWOTH)) != (S_ISVTX | S_IWOTH))
        return true;
    return folderOwner == linkOwner;
}
std::string SafeFile::read(const std::string& path, std::size_t maxBytes, std::string& text)
{
    text.clear();
    if (path.empty())
        return "no file name given";
    // O_NONBLOCK: opening a FIFO without a writer must not hang; it is refused below.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return sysError("cannot open", path, errno);
    struct stat st { };
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        return sysError("cannot open", path, err);
    }
    const auto refuse = [&](const std::string& why) {
        ::close(fd);
        text.clear();
        return "'" + shown(path) + "' " + why;
    };
    if (S_ISDIR(st.st_mode))
        return refuse("is a directory, not a file");
    if (!S_ISREG(st.st_mode))
        return refuse("is not a regular file (a device, FIFO or socket); give a file");
    const std::string tooLarge
        = "is larger than the " + std::to_string(maxBytes >> 20) + " MiB limit for this kind of file (docs/limits.md)";
    if (static_cast<std::size_t>(st.st_size) > maxBytes)
        return refuse(tooLarge);
    text.resize(static_cast<std::size_t>(st.st_size) + 1);
    std::size_t got = 0;
    for (;;) {
        if (got == text.size()) {
            if (text.size() > maxBytes) // the file grew while being read
                return refuse(tooLarge);
            text.resize(std::min(text.size() * 2, maxBytes + 1));
        }
        const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            const int err = errno;
            ::close(fd);
            text.clear();
            return sysError("cannot read", path, err);
        }
        if (n == 0)
            break;
        got += static_cast<std::size_t>(n);
    }
    ::close(fd);
    text.resize(got);
    return {};
}

std::string SafeFile::checkWritable(const std::string& path)
{
    if (path.empty())
        return "no file name given";
    if (path == "-")
        return {};
    const Target t = resolve(path);
    if (!t.error.empty())
        return t.error;
    if (t.descriptor >= 0) {
        if (const int err = descriptorWritable(t.descriptor))
            return sysError("cannot write", path, err);
        return {};
    }
    if (t.exists) {
        if (S_ISDIR(t.st.st_mode))
            return "cannot write '" + shown(path) + "': it is a directory";
        if (S_ISREG(t.st.st_mode) && ::faccessat(t.folder.get(), t.name.c_str(), W_OK, 0) != 0)
            return sysError("cannot write", path, errno);
        if (S_ISREG(t.st.st_mode) && ::faccessat(t.folder.get(), ".", W_OK | X_OK, 0) != 0)
            return sysError("cannot write", path, errno); // the temporary file goes beside it
        return {};
    }
    if (t.name.size() > NAME_MAX)
        return sysError("cannot write", path, ENAMETOOLONG);
    if (::faccessat(t.folder.get(), ".", W_OK | X_OK, 0) != 0)
        return "cannot write '" + shown(path) + "': folder '" + shown(t.folderShown) + "': " + std::strerror(errno);
    return {};
}

std::string SafeFile::writeTree(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& files)
{
    // A folder: made here, or there already (a real folder, no link) and empty.
    const auto makeFolder = [](const std::string& path, bool mustBeEmpty) -> std::string {
        if (::mkdir(path.c_str(), 0755) == 0)
            return {};
        const int err = errno;
        struct stat st { };
        if (err != EEXIST || ::lstat(path.c_str(), &st) != 0)
            return sysError("cannot make the folder", path, err);
        if (!S_ISDIR(st.st_mode))
            return "cannot make the folder '" + shown(path) + "': the name is taken by something else";
        if (mustBeEmpty) {
            std::error_code ec;
            if (!std::filesystem::is_empty(path, ec) || ec)
                return "cannot write into '" + shown(path) + "': the folder is not empty";
        }
        return {};
    };
    if (dir.empty())
        return "no folder name given";
    if (std::string e = makeFolder(dir, true); !e.empty())
        return e;
    for (const auto& [relative, content] : files) {
        for (std::size_t slash = relative.find('/'); slash != std::string::npos; slash = relative.find('/', slash + 1))
            if (std::string e = makeFolder(dir + "/" + relative.substr(0, slash), false); !e.empty())
                return e;
        if (std::string e = write(dir + "/" + relative, content); !e.empty())
            return e;
    }
    return {};
}

std::string SafeFile::checkFreshFolder(const std::string& dir)
{
    if (dir.empty())
        return "no folder name given";
    struct stat st { };
    if (::lstat(dir.c_str(), &st) == 0) {
        std::error_code ec;
        if (!S_ISDIR(st.st_mode) || !std::filesystem::is_empty(dir, ec) || ec)
            return "'" + shown(dir) + "' exists and is not an empty folder (the tree is never mixed with an older one)";
        return {};
    }
    const std::filesystem::path parent = std::filesystem::path(dir).parent_path();
    if (!parent.empty() && ::stat(parent.c_str(), &st) != 0)
        return sysError("cannot make the folder", dir, errno);
    return {};
}

namespace {

// "nobody (uid 65534)", or the bare uid where the user database has no name for it.
std::string ownerName(uid_t uid)
{
    passwd pw {};
    passwd* found = nullptr;
    char buf[1024];
    const std::string id = "uid " + std::to_string(uid);
    return ::getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found ? std::string(found->pw_name) + " (" + id + ")"
                                                                         : id;
}

} // namespace

std::string SafeFile::privateFolder(const std::string& dir, std::string& real)
{
    namespace fs = std::filesystem;
    real.clear();
    if (dir.empty())
        return "no folder name given";
    // Make what is missing, one folder at a time, private from the start.
    const fs::path absolute = fs::absolute(dir);
    fs::path made;
    for (const fs::path& part : absolute) {
        made /= part;
        if (::mkdir(made.c_str(), 0700) != 0 && errno != EEXIST)
            return sysError("cannot make the folder", made.string(), errno);
    }
    char resolved[PATH_MAX];
    if (!::realpath(dir.c_str(), resolved))
        return sysError("cannot use the folder", dir, errno);
    const uid_t me = ::geteuid();
    fs::path at = resolved;
    for (bool first = true;; first = false) {
        struct stat st { };
        if (::lstat(at.c_str(), &st) != 0)
            return sysError("cannot use the folder", at.string(), errno);
        if (!S_ISDIR(st.st_mode))
            return "'" + shown(at.string()) + "' is not a folder";
        const std::string mode = [&] {
            char m[8];
            std::snprintf(m, sizeof m, "%04o", static_cast<unsigned>(st.st_mode & 07777));
            return std::string(m);
        }();
        if (first && st.st_uid != me)
            return "the folder '" + shown(at.string()) + "' belongs to " + ownerName(st.st_uid) + ", not to "
                + ownerName(me) + ": give a folder of your own";
        if (st.st_uid != me && st.st_uid != 0)
            return "the folder '" + shown(at.string()) + "', above '" + shown(resolved) + "', belongs to "
                + ownerName(st.st_uid) + ", who could replace what is below it: give a folder elsewhere";
        if ((st.st_mode & (S_IWGRP | S_IWOTH)) && (first || !(st.st_mode & S_ISVTX)))
            return "the folder '" + shown(at.string()) + "' can be written by others (mode " + mode
                + "): give a folder that only you can write" + (first ? " (chmod go-w)" : "");
        if (!at.has_relative_path())
            break;
        at = at.parent_path();
    }
    real = resolved;
    return {};
}

std::string SafeFile::openAppend(const std::string& path, bool fresh, int& fd)
{
    fd = -1;
    if (const std::string err = checkWritable(path); !err.empty())
        return err;
    const Target t = resolve(path);
    if (!t.error.empty())
        return t.error;
    if (t.descriptor >= 0 || (t.exists && !S_ISREG(t.st.st_mode)))
        return "cannot write '" + shown(path) + "': a journal must be a regular file";
    const mode_t mask = ::umask(0);
    ::umask(mask);
    fd = ::openat(t.folder.get(), t.name.c_str(),
        O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC | (fresh ? O_TRUNC : 0), 0666 & ~mask);
    if (fd < 0)
        return sysError("cannot write", path, errno);
    return {};
}

std::string SafeFile::identity(const std::string& path)
{
    const auto key = [](const struct stat& st) { return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino); };
    struct stat st { };
    if (path == "-")
        return ::fstat(STDOUT_FILENO, &st) == 0 ? key(st) : std::string("fd:1");
    const Target t = resolve(path);
    if (!t.error.empty())
        return {};
    if (t.descriptor >= 0)
        return ::fstat(t.descriptor, &st) == 0 ? key(st) : "fd:" + std::to_string(t.descriptor);
    if (t.exists)
        return key(t.st);
    if (::fstat(t.folder.get(), &st) != 0)
        return {};
    return key(st) + "/" + t.name;
}

std::string SafeFile::write(const std::string& path, std::string_view content)
{
    if (path == "-")
        return writeStdout(content);
    if (std::string err = checkWritable(path); !err.empty())
        return err;
    const Target t = resolve(path);
    if (!t.error.empty())
        return t.error;
    if (t.descriptor >= 0)
        return writeDescriptor(path, t.descriptor, content);
    if (t.exists && !S_ISREG(t.st.st_mode)) {
        bool isRegular = false;
        std::string err = writeDirect(path, t, content, isRegular);
        if (!isRegular)
            return err;
    }
    return writeReplacing(path, t, content);
}

} // namespace blkmq
