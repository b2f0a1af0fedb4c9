// Writes the fuzz targets' seeds from the inventories (blkmqlab-cli fields): for every field of the
// scenario, lesson and session formats, the format's full document with that field set to each
// hostile value of JSON, and for every scenario field a --set line per hostile value. A field added
// to a format is in the fuzzers' seeds without anyone writing one. For fio job files: every key
// (blkmqlab-cli fio-keys) with each hostile text.
// Usage: fuzz_seeds FOLDER   (writes FOLDER/scenario, FOLDER/set, FOLDER/lesson, FOLDER/session,
// FOLDER/fio)
#include "../core/HostileJson.h"

#include "engine/Engine.h"
#include "lesson/Lesson.h"
#include "scenario/FioJobFile.h"
#include "scenario/ScenarioLoader.h"
#include "session/Session.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

using json = nlohmann::json;

int written = 0;

void write(const std::filesystem::path& file, const std::string& text)
{
    std::ofstream(file, std::ios::binary) << text;
    ++written;
}

// The document with each field of `fields` set to each hostile value, one file each. Broken UTF-8 is
// written as the bytes themselves (a JSON library refuses to).
void documents(const std::filesystem::path& folder, const json& full, const std::vector<blkmq::FieldInfo>& fields)
{
    std::filesystem::create_directories(folder);
    write(folder / "full.json", full.dump(2));
    int n = 0;
    for (const blkmq::FieldInfo& f : fields)
        for (const auto& [name, value] : blkmq::test::hostileJson()) {
            json doc = full;
            const bool broken = name == "broken UTF-8";
            blkmq::test::at(doc, blkmq::test::firstElement(f.path)) = broken ? json("BROKEN-UTF8") : value;
            std::string text = doc.dump();
            if (broken)
                text.replace(text.find("\"BROKEN-UTF8\""), 13, "\"a\xff\"");
            write(folder / ("field-" + std::to_string(n++)), text);
        }
}

} // namespace

int main(int argc, char** argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: fuzz_seeds FOLDER\n");
        return 2;
    }
    const std::filesystem::path out = argv[1];
    const auto scenarioFields = blkmq::ScenarioLoader::fields();
    documents(out / "scenario", blkmq::ScenarioLoader::fullDocument(), scenarioFields);
    documents(out / "lesson", json::parse(blkmq::Lesson::fullDocument()), blkmq::Lesson::fields().rows);

    auto scenario = blkmq::ScenarioLoader::fromPreset("default", { "duration=\"1ms\"" });
    blkmq::Engine engine(*scenario);
    engine.runFor(blkmq::SimTime(100'000));
    blkmq::Session session = blkmq::Session::of(engine, scenario->sourceJson);
    session.bookmarks = { { 1000, "a note" } };
    session.lesson = "shared-hctx-stall";
    session.lessonStep = 1;
    session.view = { { "plots_hidden", { 1 } }, { "plot_columns", 2 } };
    documents(out / "session", json::parse(session.toText()), blkmq::Session::fields().rows);

    // --set lines: the first line names the preset (fuzz_set's format).
    std::filesystem::create_directories(out / "set");
    const std::vector<std::string> texts { "nan", "inf", "-0", "1e300", "-1", "0.5", "18446744073709551616", "",
        "a\x01b", "a\xff", "[]", "[1,1]", "{}", "null" };
    int n = 0;
    for (const blkmq::FieldInfo& f : scenarioFields) {
        std::string path;
        for (char c : f.path)
            path += c == '[' ? std::string(".0") : c == ']' ? std::string() : std::string(1, c);
        for (const std::string& t : texts)
            write(out / "set" / ("field-" + std::to_string(n++)), "default\n" + path + "=" + t + "\n");
    }
    // fio job files: every key fio-keys lists, in [global] and in a job, with each hostile text, and
    // a section name with each.
    std::filesystem::create_directories(out / "fio");
    n = 0;
    for (const blkmq::FioJobFile::Key& k : blkmq::FioJobFile::keys())
        for (const std::string& t : texts) {
            write(
                out / "fio" / ("key-" + std::to_string(n++)), "[global]\n" + std::string(k.name) + "=" + t + "\n[j]\n");
            write(out / "fio" / ("key-" + std::to_string(n++)), "[j]\n" + std::string(k.name) + "=" + t + "\n");
        }
    for (const std::string& t : texts)
        write(out / "fio" / ("section-" + std::to_string(n++)), "[" + t + "]\nrw=randread\n");
    std::printf("fuzz_seeds: %d seeds in %s\n", written, out.c_str());
    return 0;
}
