#pragma once

#include "spec/Scenario.h"
#include "sim/Result.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace blkmq {

// A fio job file (fio's HOWTO, "Job file format") read as a scenario's workload, so that the
// lab and a real kernel (blkmqlab-cli oracle) run the same file. [global] and job sections,
// "key=value" lines, ';' and '#' comments. The keys read are kFioKeys; any other is an error
// naming its line, never ignored, because a job the lab runs differently from fio must not
// look the same.
class FioJobFile {
public:
    struct Key {
        const char* name;
        const char* meaning; // what the lab does with it (docs/scenario.md's table)
    };
    static const std::vector<Key>& keys();

    // The workload the file describes, as scenario settings: "workload.jobs=[...]" and, from
    // runtime, "duration=...". `devices` are the scenario's device names: filename=/dev/NAME must
    // name one (no filename: the first). An error names the file's line.
    struct Import {
        std::vector<std::string> sets;
        // For each job field the settings write ("workload.jobs[1].iodepth"), the file's line that
        // gave it ("job.fio:7: iodepth=0"), so the loader's range errors can name the line.
        std::map<std::string, std::string> origin;
    };
    static Result<Import> read(
        const std::string& text, const std::string& origin, const std::vector<std::string>& devices);
    // The loader's error for a field that came from the file, told by the file's line; other
    // errors as they are.
    static std::string explain(const Import& import, const std::string& loaderError);

    // The scenario's jobs and duration as a fio job file that read() turns back into the same jobs
    // and duration (blkmqlab-cli oracle without --fio runs it in the guest). An error names the
    // field fio has no key for.
    static Result<std::string> write(const Scenario& s);

    // The job file at `path` run on `base` (whose device names filename= may give): read (a regular
    // file within limits::kScenarioFileBytes; a read error is prefixed with `readErrorPrefix`), then
    // `loader(settings)` builds the scenario with the job's settings first, the caller's own (--set)
    // after them; a loader error for a field the file gave is told by the file's line.
    using Loader = std::function<Result<Scenario>(const std::vector<std::string>& settings)>;
    static Result<Scenario> run(
        const std::string& path, const Scenario& base, const Loader& loader, const std::string& readErrorPrefix = {});
};

} // namespace blkmq
