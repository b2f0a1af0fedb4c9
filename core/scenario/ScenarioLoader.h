#pragma once

#include "io/FieldTable.h"
#include "scenario/LiveChange.h"
#include "spec/Scenario.h"
#include "sim/Result.h"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace blkmq {

struct PresetInfo {
    std::string name;
    std::string summary; // one line
};

// Reads, overrides and validates scenario files (docs/scenario.md). Every
// error is one line that names the field and what is allowed.
class ScenarioLoader {
public:
    static Result<Scenario> fromText(
        const std::string& text, const std::string& origin, const std::vector<std::string>& sets = {});
    static Result<Scenario> fromFile(const std::string& path, const std::vector<std::string>& sets = {});
    static Result<Scenario> fromPreset(const std::string& name, const std::vector<std::string>& sets = {});
    static Result<Scenario> fromJson(const nlohmann::json& doc);

    // Applies one "dotted.path=value" override to a parsed document. Array
    // elements are addressed by index or by their "name". The value is JSON
    // if it parses as JSON, else a string.
    static Result<bool> applySet(nlohmann::json& doc, const std::string& assignment);

    // The scenario text `json` (a normalized document, Scenario::sourceJson) with live changes applied as
    // --set applies them: the scenario as a run that took them has it now.
    static std::string withChanges(const std::string& json, const std::vector<Command>& changes);

    static std::vector<PresetInfo> presets();
    // Every field, noted by the loader's own typed reads while it loads fullDocument(): a field the
    // loader learns to read is in the list without anyone writing it down (blkmqlab-cli fields).
    static std::vector<FieldInfo> fields();
    // A scenario that sets every field (and every kind of script step), and loads.
    static nlohmann::json fullDocument();
    // How deeply a JSON text nests, counted without parsing it (checked before any parse).
    static std::int64_t nestingDepth(const std::string& text);
    static Result<std::string> presetText(const std::string& name);
};

} // namespace blkmq
