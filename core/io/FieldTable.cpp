#include "io/FieldTable.h"

#include "io/Text.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace blkmq {

namespace {

// The key of a row directly under `parent`, or "" ("steps[].title" under "steps[]" is "title").
std::string_view childKey(std::string_view path, std::string_view parent)
{
    if (!parent.empty()) {
        if (path.size() <= parent.size() + 1 || path.substr(0, parent.size()) != parent || path[parent.size()] != '.')
            return {};
        path.remove_prefix(parent.size() + 1);
    }
    return path.find_first_of(".[") == std::string_view::npos ? path : std::string_view {};
}

} // namespace

std::string FieldTable::unknownKey(const nlohmann::json& o, std::string_view parent, const std::string& at) const
{
    for (const auto& item : o.items()) {
        const std::string& k = item.key(); // not a structured binding: clang 14 cannot capture one
        if (std::none_of(rows.begin(), rows.end(), [&](const FieldInfo& f) { return childKey(f.path, parent) == k; })) {
            std::string known;
            for (const FieldInfo& f : rows)
                if (const auto c = childKey(f.path, parent); !c.empty())
                    known.append(known.empty() ? "" : ", ").append(c);
            return (at.empty() ? "" : at + ".") + printable(k) + ": unknown field (known: " + known + ")";
        }
    }
    return {};
}

} // namespace blkmq
