#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <string_view>

namespace blkmq {

// Text that a document or a command line hands the lab, checked before anything echoes or stores
// it: valid UTF-8 and no control characters (a terminal escape in a name would reach the terminal;
// a newline would split a one-line message). Free text (a description, a lesson's prose) may hold
// newlines and tabs. Returns "" or the problem, e.g. "contains a control character (U+001B)".
std::string textProblem(std::string_view text, bool freeText);

// The first problem of any key or string in a JSON document, as "PATH: problem" ("" when none).
// A string whose own key is in freeKeys is free text.
std::string jsonTextProblem(const nlohmann::json& doc, std::initializer_list<std::string_view> freeKeys);

// Text as a message quotes it: on one line, control characters and bytes past ASCII written as
// \xNN, at most `most` characters (then "...").
std::string printable(std::string_view text, std::size_t most = 60);

// Text as a terminal may show it: valid UTF-8, newlines and tabs kept; control characters (a
// terminal escape) and bytes that are not UTF-8 written as \xNN. Nothing is cut.
std::string terminalSafe(std::string_view text);

} // namespace blkmq
