#include "io/Text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>

namespace blkmq {

namespace {

// The length of the UTF-8 sequence at text[i] (1 to 4), or 0 where none starts there. UTF-8 as RFC
// 3629 defines it (its table of well-formed sequences): no overlong forms (C0, C1, E0 80..9F,
// F0 80..8F), no surrogates (ED A0..BF), nothing past U+10FFFF (F4 90.., F5..FF); the rule JSON
// writers apply too, so text that passes here can be written as JSON.
std::size_t sequenceLength(std::string_view text, std::size_t i)
{
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t n = c < 0x80 ? 1
        : c >= 0xc2 && c <= 0xdf   ? 2
        : c >= 0xe0 && c <= 0xef   ? 3
        : c >= 0xf0 && c <= 0xf4   ? 4
                                   : 0;
    if (n == 0 || i + n > text.size())
        return 0;
    for (std::size_t k = 1; k < n; ++k)
        if ((static_cast<unsigned char>(text[i + k]) >> 6) != 0x2)
            return 0;
    const auto second = n > 1 ? static_cast<unsigned char>(text[i + 1]) : 0;
    if ((c == 0xe0 && second < 0xa0) || (c == 0xed && second > 0x9f) || (c == 0xf0 && second < 0x90)
        || (c == 0xf4 && second > 0x8f))
        return 0;
    return n;
}

} // namespace

std::string textProblem(std::string_view text, bool freeText)
{
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t n = sequenceLength(text, i);
        if (n == 0)
            return "is not valid UTF-8 text";
        const auto c = static_cast<unsigned char>(text[i]);
        if (n == 1 && (c < 0x20 || c == 0x7f) && !(freeText && (c == '\n' || c == '\t'))) {
            char code[8];
            std::snprintf(code, sizeof code, "U+%04X", c);
            return std::string("contains a control character (") + code + ")";
        }
        i += n;
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
        const std::size_t n = sequenceLength(text, i);
        const bool control = n == 1 && (c < 0x20 || c == 0x7f) && c != '\n' && c != '\t' && c != '\r';
        if (n == 0 || control) {
            char code[8];
            std::snprintf(code, sizeof code, "\\x%02X", c);
            out += code;
            ++i;
            continue;
        }
        out.append(text.substr(i, n));
        i += n;
    }
    return out;
}

} // namespace blkmq
