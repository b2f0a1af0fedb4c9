#pragma once

#include <string>

namespace blkmq {

// Writes `content` to `path` through a temporary file in the same
// directory and a rename, so a reader never sees half a file. "-" writes to
// stdout. Returns an error message, or empty on success.
std::string writeFileAtomically(const std::string& path, const std::string& content);

} // namespace blkmq
