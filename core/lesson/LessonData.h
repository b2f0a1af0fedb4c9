#pragma once

#include <string_view>
#include <vector>

namespace blkmq {

// The lesson files under resources/lessons, embedded at build time like the presets.
struct BuiltinLesson {
    std::string_view name;
    std::string_view json;
};
const std::vector<BuiltinLesson>& builtinLessons();

} // namespace blkmq
