#include "oracle/OracleCase.h"

#include "sim/Duration.h"

#include <nlohmann/json.hpp>

#include <set>

namespace blkmq {

namespace {

using json = nlohmann::json;

struct Bad {
    std::string message;
};

std::string str(const json& o, const std::string& key, const std::string& path, bool required)
{
    if (!o.contains(key)) {
        if (required)
            throw Bad { path + key + ": missing" };
        return {};
    }
    if (!o[key].is_string() || o[key].get<std::string>().empty())
        throw Bad { path + key + ": must be a non-empty string" };
    return o[key].get<std::string>();
}

void onlyKeys(const json& o, const std::set<std::string>& keys, const std::string& path)
{
    for (auto it = o.begin(); it != o.end(); ++it)
        if (!keys.count(it.key()))
            throw Bad { path + it.key() + ": unknown key" };
}

std::string join(const std::string& folder, const std::string& file)
{
    if (file.empty() || file.front() == '/' || file.rfind("preset:", 0) == 0 || folder.empty())
        return file;
    return folder + "/" + file;
}

} // namespace

Result<OracleCase> OracleCase::fromText(const std::string& text, const std::string& folder)
{
    const json doc = json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object())
        return Result<OracleCase>::failure("not a JSON object");
    try {
        onlyKeys(doc, { "format", "name", "about", "scenario", "set", "fio", "timeout", "figures" }, "");
        if (doc.contains("format") && doc["format"] != 1)
            throw Bad { "format: must be 1" };
        OracleCase c;
        c.name = str(doc, "name", "", true);
        c.about = str(doc, "about", "", false);
        c.scenario = join(folder, str(doc, "scenario", "", true));
        c.fio = join(folder, str(doc, "fio", "", true));
        if (doc.contains("set")) {
            if (!doc["set"].is_array())
                throw Bad { "set: must be an array of \"key=value\" strings" };
            for (const json& s : doc["set"]) {
                if (!s.is_string())
                    throw Bad { "set: must be an array of \"key=value\" strings" };
                c.sets.push_back(s.get<std::string>());
            }
        }
        if (doc.contains("timeout")) {
            const auto t = doc["timeout"].is_string() ? parseDuration(doc["timeout"].get<std::string>()) : std::nullopt;
            if (!t || t->ns() < 10'000'000'000 || t->ns() > 3'600'000'000'000)
                throw Bad { "timeout: must be a duration from 10s to 3600s" };
            c.timeoutNs = t->ns();
        }
        if (!doc.contains("figures") || !doc["figures"].is_object() || doc["figures"].empty())
            throw Bad { "figures: must name at least one figure with its band (blkmqlab-cli oracle --figures)" };
        for (auto it = doc["figures"].begin(); it != doc["figures"].end(); ++it) {
            const std::string path = "figures." + it.key() + ".";
            const OracleFigure* f = OracleFigures::find(it.key());
            if (!f)
                throw Bad { "figures." + it.key() + ": no such figure (blkmqlab-cli oracle --figures lists them)" };
            const json& b = *it;
            if (!b.is_object())
                throw Bad { path.substr(0, path.size() - 1)
                    + ": must be an object such as {\"within\": 10, \"why\": \"...\"}" };
            onlyKeys(b, { "within", "same", "at_least", "at_most", "why" }, path);
            FigureBand band;
            band.why = str(b, "why", path, true);
            const auto num = [&](const char* key) -> std::optional<double> {
                if (!b.contains(key))
                    return std::nullopt;
                if (!b[key].is_number() || !(b[key].get<double>() >= 0) || b[key].get<double>() > 1e9)
                    throw Bad { path + key + ": must be a number from 0" };
                return b[key].get<double>();
            };
            band.within = num("within");
            band.atLeast = num("at_least");
            band.atMost = num("at_most");
            if (b.contains("same")) {
                if (b["same"] != true)
                    throw Bad { path + "same: must be true" };
                band.same = true;
            }
            const bool exact = f->kind == OracleFigure::Kind::CpuSet || f->kind == OracleFigure::Kind::Routes
                || f->kind == OracleFigure::Kind::Layout;
            if (exact && (band.within || band.atLeast || band.atMost))
                throw Bad { path.substr(0, path.size() - 1) + ": "
                    + (f->kind == OracleFigure::Kind::Layout ? "a layout" : "a set of CPUs")
                    + " is compared with \"same\": true" };
            if (!exact && band.same)
                throw Bad { path
                    + "same: only for a set of CPUs or a layout; a number takes within, at_least or at_most" };
            if (!band.judged())
                throw Bad { path.substr(0, path.size() - 1) + ": give a band (within, same, at_least or at_most)" };
            c.bands.emplace_back(it.key(), std::move(band));
        }
        return c;
    } catch (const Bad& b) {
        return Result<OracleCase>::failure(b.message);
    }
}

} // namespace blkmq
