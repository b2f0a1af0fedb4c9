#pragma once

// The hostile values of JSON, and the walk that puts one at a field of a document: the tables of
// every input format (scenario, sweep, lesson, session) are fed the same list, so a field added to
// a format meets every value here without a test written for it.
#include "io/FieldTable.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace blkmq::test {

inline const std::vector<std::pair<std::string, nlohmann::json>>& hostileJson()
{
    using json = nlohmann::json;
    static const std::vector<std::pair<std::string, json>> values {
        { "null", nullptr },
        { "true", true },
        { "-1", -1 },
        { "0.5", 0.5 },
        { "1e300", 1e300 },
        { "2^63", json(std::uint64_t(1) << 63) },
        { "2^64 as a float", 18446744073709551616.0 },
        { "empty string", "" },
        { "control character", "a\u0001b" },
        { "terminal escape", "\u001b[31mred" },
        { "newline", "a\nb" },
        { "broken UTF-8", std::string("a\xff") },
        { "100 KB", std::string(100000, 'x') },
        { "path", "../x/y" },
        { "empty array", json::array() },
        { "repeated array", json::array({ 1, 1 }) },
        { "empty object", json::object() },
        { "unknown key", json::object({ { "zz", 1 } }) },
    };
    return values;
}

// "steps[].title" as the first element's: "steps[0].title".
inline std::string firstElement(const std::string& path)
{
    std::string at;
    for (char c : path) {
        at.push_back(c);
        if (c == '[')
            at.push_back('0');
    }
    return at;
}

// The value at "a.b[0].c" of `doc`, made where it is missing.
inline nlohmann::json& at(nlohmann::json& doc, const std::string& path)
{
    nlohmann::json* node = &doc;
    std::string key;
    for (std::size_t i = 0; i <= path.size(); ++i) {
        const char c = i < path.size() ? path[i] : '.';
        if (c == '.' || c == '[') {
            if (!key.empty())
                node = &(*node)[key];
            key.clear();
        } else if (c == ']') {
            node = &(*node)[std::stoul(key)];
            key.clear();
        } else {
            key.push_back(c);
        }
    }
    return *node;
}

// Why a message refusing `value` at field `f` is wrong ("" when it is right): one short line,
// no escape, naming the field (its path with indices, or its key where the field that referred to
// it is reported).
inline std::string badRefusal(const FieldInfo& f, const std::string& message)
{
    if (message.find('\n') != std::string::npos || message.size() >= 700)
        return "not one short line";
    if (message.find('\x1b') != std::string::npos)
        return "an escape reached the message";
    const std::string last = f.path.substr(f.path.find_last_of('.') + 1);
    const std::string bare = last.substr(0, last.find('['));
    if (message.find(firstElement(f.path)) == std::string::npos && message.find(bare) == std::string::npos)
        return "does not name the field";
    return {};
}

// Why accepting `value` (named `name`) at field `f` is wrong by the field's kind ("" when the kind
// takes it): no control character or broken UTF-8 in any string, a newline only in free text, a
// number only where a number goes, an array or object only where one goes.
inline std::string badAcceptance(const FieldInfo& f, const std::string& name, const nlohmann::json& value)
{
    if (value.is_string()
        && (name == "control character" || name == "terminal escape" || name == "broken UTF-8"
            || (name == "newline" && f.kind != "text")))
        return "a string the field must refuse";
    const std::string& k = f.kind;
    if (k == "integer" && !value.is_number_integer())
        return "not an integer";
    if (k == "integer") { // a rule "LO..HI", "N" or "N or more"; x87 long double holds every 64-bit integer
        const long double v = value.get<long double>();
        if (!f.rule.empty() && (std::isdigit(static_cast<unsigned char>(f.rule[0])) || f.rule[0] == '-')) {
            const long double lo = std::stold(f.rule);
            const auto dots = f.rule.find("..");
            if (v < lo)
                return "below " + f.rule.substr(0, dots);
            if (f.rule.find("or more") == std::string::npos && dots == std::string::npos && v != lo)
                return "not " + f.rule;
            if (dots != std::string::npos && std::isdigit(static_cast<unsigned char>(f.rule[dots + 2]))
                && v > std::stold(f.rule.substr(dots + 2)))
                return "above " + f.rule.substr(dots + 2);
        }
    }
    if (k == "number" && !value.is_number())
        return "not a number";
    if (k == "boolean" && !value.is_boolean())
        return "not a boolean";
    if ((k == "string" || k == "text" || k == "path") && !value.is_string())
        return "not a string";
    if (k == "array" && !value.is_array())
        return "not an array";
    if (k == "object" && !value.is_object())
        return "not an object";
    if (k == "string or object" && !value.is_string() && !value.is_object())
        return "neither a string nor an object";
    return {};
}

// Every row of `rows` set, on `full`, to every hostile value: `load(doc)` returns "" when the document
// is accepted (it may check more of it, returning the problem after "accepted: ") or the refusal.
// Returns the first wrong outcome, "" when there is none; `tried` counts the documents.
template<class Load>
std::string everyFieldMeetsHostileValues(
    const nlohmann::json& full, const std::vector<FieldInfo>& rows, const Load& load, int& tried)
{
    for (const FieldInfo& f : rows) {
        nlohmann::json probe = full;
        if (at(probe, firstElement(f.path)).is_null())
            return f.path + ": not in the full document";
        for (const auto& [name, value] : hostileJson()) {
            nlohmann::json doc = full;
            at(doc, firstElement(f.path)) = value;
            ++tried;
            const std::string what = f.path + " = " + name;
            const std::string refusal = load(doc);
            if (refusal.rfind("accepted: ", 0) == 0)
                return what + ": " + refusal;
            const std::string why = refusal.empty() ? badAcceptance(f, name, value) : badRefusal(f, refusal);
            if (!why.empty())
                return what + ": " + (refusal.empty() ? "accepted, " + why : why + ": " + refusal);
        }
    }
    return {};
}

} // namespace blkmq::test
