#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace blkmq {

// One field of an input format.
struct FieldInfo {
    std::string path; // "devices[].submit_queues": array elements as []
    std::string kind; // integer, boolean, string, choice, duration, cpulist, array, object, ...
    std::string rule; // its range, its choices, or what it takes
};

// What is wrong with a field's value given the others (a checker's answer; empty field: nothing).
struct FieldProblem {
    std::string field; // its dotted path: "costs.fio_user_ns"
    std::string why;
    explicit operator bool() const { return !field.empty(); }
};

// The fields of a JSON input format as one table: what `blkmqlab-cli fields FORMAT` prints, and the
// only keys the format's reader accepts (onlyKnownKeys), so a field the reader takes is in the
// inventory by construction and the hostile-input tests reach it.
struct FieldTable {
    std::string format; // "sweep", "lesson", "session"
    std::vector<FieldInfo> rows;

    // "" when every key of `o` is a row directly under `parent` ("" for the top level, "steps[]");
    // else "AT.KEY: unknown field (known: ...)", `at` being the object's path with its indices
    // ("steps[2]").
    std::string unknownKey(const nlohmann::json& o, std::string_view parent, const std::string& at) const;
};

} // namespace blkmq
