#pragma once

#include "oracle/OracleFigures.h"
#include "sim/Result.h"

#include <string>
#include <vector>

namespace blkmq {

// One oracle case (tests/oracle/*.json, docs/oracle.md): a scenario, the fio job both sides run,
// and the band each judged figure must stay in, with the reason for its width.
struct OracleCase {
    std::string name;
    std::string about;
    std::string scenario; // a scenario file, relative to the case file's folder, or "preset:NAME"
    std::vector<std::string> sets; // --set overrides of the scenario
    std::string fio; // the fio job file, relative to the case file's folder
    std::int64_t timeoutNs = 0; // the guest's whole run, boot included (0: the command's default)
    std::vector<std::pair<std::string, FigureBand>> bands;

    // Reads a case; paths in it are resolved against `folder`. Errors name the field.
    static Result<OracleCase> fromText(const std::string& text, const std::string& folder);
};

} // namespace blkmq
