#pragma once

#include <cstddef>
#include <string>
#include <string_view>

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

    // Writes `content` to `path`; "-" is standard output. A regular file (or a
    // new path) is replaced atomically: a temporary file beside it, fsync,
    // rename, keeping the old file's mode, so a reader never sees half a file.
    // Symbolic links are followed and their target is written. Anything else
    // that exists (a device such as /dev/null, a FIFO) is written directly,
    // never replaced. Returns an error message, or empty on success.
    static std::string write(const std::string& path, std::string_view content);

    // What write() would refuse before anything is computed: an empty name, a
    // directory, a missing or unwritable parent folder, an unwritable file.
    // Returns an error message, or empty.
    static std::string checkWritable(const std::string& path);
};

} // namespace blkmq
