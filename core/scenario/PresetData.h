#pragma once

#include <string_view>
#include <vector>

namespace blkmq {

// The scenario files under resources/scenarios, embedded at build time so the
// CLI and tests need no installed data files.
struct BuiltinPreset {
    std::string_view name;
    std::string_view json;
};
const std::vector<BuiltinPreset>& builtinPresets();

} // namespace blkmq
