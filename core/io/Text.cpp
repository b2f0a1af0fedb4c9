#include "io/Text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>

namespace blkmq {

std::string textProblem(std::string_view text, bool freeText)
{
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        const int extra = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xe ? 2 : (c >> 3) == 0x1e ? 3 : -1;
        if (extra < 0 || i + static_cast<std::size_t>(extra) >= text.size() + (extra == 0 ? 1 : 0))
            return "is not valid UTF-8 text";
        for (int k = 1; k <= extra; ++k)
            if ((static_cast<unsigned char>(text[i + static_cast<std::size_t>(k)]) >> 6) != 0x2)
                return "is not valid UTF-8 text";
        if (extra == 0 && (c < 0x20 || c == 0x7f) && !(freeText && (c == '\n' || c == '\t'))) {
            char code[8];
            std::snprintf(code, sizeof code, "U+%04X", c);
            return std::string("contains a control character (") + code + ")";
        }
        i += static_cast<std::size_t>(extra) + 1;
    }
    return {};
}

namespace {

std::string walk(
    const nlohmann::json& v, const std::string& path, bool freeText, std::initializer_list<std::string_view> freeKeys)
{
    if (v.is_string()) {
        const std::string why = textProblem(v.get_ref<const std::string&>(), freeText);
        return why.empty() ? why : (path.empty() ? "(top level)" : path) + ": " + why;
    }
    if (v.is_object()) {
        for (auto it = v.begin(); it != v.end(); ++it) {
            const std::string child = path.empty() ? it.key() : path + "." + it.key();
            if (const std::string why = textProblem(it.key(), false); !why.empty())
                return printable(child, 120) + ": " + why;
            const bool free = std::find(freeKeys.begin(), freeKeys.end(), it.key()) != freeKeys.end();
            if (std::string why = walk(*it, child, free, freeKeys); !why.empty())
                return why;
        }
    } else if (v.is_array()) {
        for (std::size_t i = 0; i < v.size(); ++i)
            if (std::string why = walk(v[i], path + "[" + std::to_string(i) + "]", freeText, freeKeys); !why.empty())
                return why;
    }
    return {};
}

} // namespace

std::string jsonTextProblem(const nlohmann::json& doc, std::initializer_list<std::string_view> freeKeys)
{
    return walk(doc, "", false, freeKeys);
}

std::string printable(std::string_view text, std::size_t most)
{
    std::string out;
    for (const char ch : text) {
        const auto c = static_cast<unsigned char>(ch);
        if (c >= 0x20 && c < 0x7f) {
            out.push_back(ch);
        } else {
            char code[8];
            std::snprintf(code, sizeof code, "\\x%02X", c);
            out += code;
        }
    }
    return out.size() <= most ? out : out.substr(0, most - 3) + "...";
}

std::string terminalSafe(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        const int extra = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xe ? 2 : (c >> 3) == 0x1e ? 3 : -1;
        bool valid = extra >= 0 && i + static_cast<std::size_t>(extra) < text.size();
        for (int k = 1; valid && k <= extra; ++k)
            valid = (static_cast<unsigned char>(text[i + static_cast<std::size_t>(k)]) >> 6) == 0x2;
        const bool control = extra == 0 && (c < 0x20 || c == 0x7f) && c != '\n' && c != '\t' && c != '\r';
        if (!valid || control) {
            char code[8];
            std::snprintf(code, sizeof code, "\\x%02X", c);
            out += code;
            ++i;
            continue;
        }
        out.append(text.substr(i, static_cast<std::size_t>(extra) + 1));
        i += static_cast<std::size_t>(extra) + 1;
    }
    return out;
}

} // namespace blkmq
