#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <sys/types.h>

namespace blkmq {

// Reading inputs and writing outputs without surprises (docs/limits.md).
// Every error is one line that names the path and the reason (with errno's
// words where the system gave one).
class SafeFile {
public:
    // Reads a regular file of at most `maxBytes` into `text`. Directories,
    // devices and FIFOs are refused without reading or blocking. Returns an
    // error message, or empty on success. (io/ includes no other folder.)
    static std::string read(const std::string& path, std::size_t maxBytes, std::string& text);

    // Writes `content` to `path`; "-" is standard output.
    //
    // The path is walked one component at a time from an open folder, so
    // what is checked is what is written. A symbolic link is followed as the
    // kernel's fs.protected_symlinks would (mayFollowSymlink), also when that
    // sysctl is off; a link it would not follow is refused, naming the link.
    // /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N name this
    // process's descriptor N, which is written at its offset (appending when
    // the shell opened it with >>), never reopened or replaced.
    //
    // A regular file (or a new name) is replaced atomically: a temporary file
    // in the same folder, fsync, rename, keeping the old file's mode, so a
    // reader never sees half a file and a hard link to the old file keeps the
    // old content. Anything else that exists (a device such as /dev/null, a
    // FIFO) is written in place, never replaced. Returns an error message, or
    // empty on success.
    static std::string write(const std::string& path, std::string_view content);

    // Writes a tree of files under `dir`, which must be a new name or an empty folder (so the tree
    // is never mixed with an older one). `files`: (path relative to dir, '/'-separated, made by the
    // program; content). Folders are made as the paths need them (mode 0755; an existing name that
    // is not a real folder is refused), each file as write() writes it. Returns an error naming the
    // path, or empty.
    static std::string writeTree(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& files);
    // What writeTree() would refuse about `dir` before anything is computed: a name taken by
    // something that is not an empty folder, or a parent folder that is missing. Empty if usable.
    static std::string checkFreshFolder(const std::string& dir);

    // Makes `dir` where it is missing (each new folder mode 0700) and checks that no one but this
    // user can change what is in it: `dir` belongs to this user, and it and every folder above it,
    // links resolved, belong to this user or to root and can be written by no one else (a folder
    // above it that others can write, such as /tmp, must be sticky, so that no one can rename
    // what is in it). For files this process writes and then runs or boots. Sets `real` to the
    // folder's path with links resolved. Returns an error naming the folder and its owner, or empty.
    static std::string privateFolder(const std::string& dir, std::string& real);

    // Opens `path` to append to it (O_APPEND), created if missing, emptied first if `fresh`: a
    // journal that must survive the process being killed. The path is walked as write() walks it
    // (the same rule for symbolic links); anything but a regular file (or a new name) is refused.
    // Returns an error message, or empty with `fd` set (the caller closes it).
    static std::string openAppend(const std::string& path, bool fresh, int& fd);

    // What write() would refuse before anything is computed: an empty name, a
    // directory, a missing or unwritable parent folder, an unwritable file, a
    // symbolic link it must not follow. Returns an error message, or empty.
    static std::string checkWritable(const std::string& path);

    // What `path` would write, as a key equal for two paths that write the same thing: the file
    // (device and inode) a name leads to once its links are followed, the folder and name of a file
    // not there yet, or the open file behind "-", /dev/stdout and their kind. Empty when the path
    // cannot be written (checkWritable says why).
    static std::string identity(const std::string& path);

    // The kernel's rule for following a symbolic link (fs/namei.c,
    // may_follow_link(), as in v6.1 with fs.protected_symlinks = 1): a link is
    // followed when its owner is the one following it, when the folder that
    // holds it is not both sticky and world-writable, or when the folder and
    // the link have the same owner.
    static bool mayFollowSymlink(mode_t folderMode, uid_t folderOwner, uid_t linkOwner, uid_t follower);
};

} // namespace blkmq
