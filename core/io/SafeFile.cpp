#include "io/SafeFile.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace blkmq {

namespace {

std::string sysError(const std::string& what, const std::string& path, int err)
{
    return what + " '" + path + "': " + std::strerror(err);
}

// Where `path` leads once its symbolic links are followed (at most 40, as
// the kernel allows). `exists` says whether something is there; `st` is it.
struct Target {
    std::string path;
    bool exists = false;
    struct stat st { };
    std::string error;
};

Target resolve(const std::string& path)
{
    Target t;
    t.path = path;
    for (int hops = 0;; ++hops) {
        if (::lstat(t.path.c_str(), &t.st) != 0) {
            if (errno != ENOENT) {
                t.error = sysError("cannot write", path, errno);
                return t;
            }
            t.exists = false;
            return t;
        }
        if (!S_ISLNK(t.st.st_mode)) {
            t.exists = true;
            return t;
        }
        if (hops == 40) {
            t.error = sysError("cannot write", path, ELOOP);
            return t;
        }
        std::error_code ec;
        std::filesystem::path link = std::filesystem::read_symlink(t.path, ec);
        if (ec) {
            t.error = "cannot write '" + path + "': " + ec.message();
            return t;
        }
        if (link.is_relative())
            link = std::filesystem::path(t.path).parent_path() / link;
        t.path = link.string();
    }
}

std::string parentOf(const std::string& path)
{
    const std::string dir = std::filesystem::path(path).parent_path().string();
    return dir.empty() ? std::string(".") : dir;
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

// A device node, a FIFO or a socket: written in place, never replaced.
std::string writeDirect(const std::string& shown, const Target& t, std::string_view content)
{
    // O_NONBLOCK makes opening a FIFO that nobody reads fail (ENXIO) instead of hanging.
    const int fd = ::open(t.path.c_str(), O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENXIO && S_ISFIFO(t.st.st_mode))
            return "cannot write '" + shown + "': it is a FIFO that no process is reading";
        return sysError("cannot write", shown, errno);
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    const int err = writeAll(fd, content);
    const int closeErr = ::close(fd) != 0 ? errno : 0;
    if (err || closeErr)
        return sysError("cannot write", shown, err ? err : closeErr);
    return {};
}

std::string writeReplacing(const std::string& shown, const Target& t, std::string_view content)
{
    // ".NAME.XXXXXX" beside the target (mkstemp fills in the X's).
    std::filesystem::path tmpName = std::filesystem::path(t.path).filename();
    tmpName += ".XXXXXX";
    std::string tmp = (std::filesystem::path(parentOf(t.path)) / ".").string();
    tmp += tmpName.string();
    const int fd = ::mkstemp(tmp.data());
    if (fd < 0)
        return sysError("cannot write", shown, errno);
    mode_t mode = 0;
    if (t.exists) {
        mode = t.st.st_mode & 07777;
    } else {
        const mode_t mask = ::umask(0);
        ::umask(mask);
        mode = 0666 & ~mask;
    }
    int err = ::fchmod(fd, mode) != 0 ? errno : 0;
    if (!err)
        err = writeAll(fd, content);
    if (!err && ::fsync(fd) != 0)
        err = errno;
    if (::close(fd) != 0 && !err)
        err = errno;
    if (!err && ::rename(tmp.c_str(), t.path.c_str()) != 0)
        err = errno;
    if (err) {
        ::unlink(tmp.c_str());
        return sysError("cannot write", shown, err);
    }
    return {};
}

} // namespace

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
        return "'" + path + "' " + why;
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
    if (t.exists) {
        if (S_ISDIR(t.st.st_mode))
            return "cannot write '" + path + "': it is a directory";
        if (S_ISREG(t.st.st_mode) && ::access(t.path.c_str(), W_OK) != 0)
            return sysError("cannot write", path, errno);
        if (S_ISREG(t.st.st_mode) && ::access(parentOf(t.path).c_str(), W_OK | X_OK) != 0)
            return sysError("cannot write", path, errno); // the temporary file goes beside it
        return {};
    }
    const std::string dir = parentOf(t.path);
    struct stat st { };
    if (::stat(dir.c_str(), &st) != 0)
        return "cannot write '" + path + "': folder '" + dir + "': " + std::strerror(errno);
    if (!S_ISDIR(st.st_mode))
        return "cannot write '" + path + "': '" + dir + "' is not a folder";
    if (::access(dir.c_str(), W_OK | X_OK) != 0)
        return "cannot write '" + path + "': folder '" + dir + "': " + std::strerror(errno);
    return {};
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
    return t.exists && !S_ISREG(t.st.st_mode) ? writeDirect(path, t, content) : writeReplacing(path, t, content);
}

} // namespace blkmq
