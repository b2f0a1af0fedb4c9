// blkmqlab-cli lessons / lesson NAME [--check] [--step N]: the guided lessons, headless.
#include "Cli.h"

#include "io/Text.h"

#include "engine/Engine.h"
#include "lesson/Lesson.h"
#include "sim/Duration.h"

#include <iostream>
#include <memory>

namespace blkmq::cli {

int lessonsCommand(const std::vector<std::string>& args)
{
    if (!args.empty()) {
        std::cerr << "blkmqlab-cli lessons: takes no arguments (see blkmqlab-cli help)\n";
        return kExitUsage;
    }
    std::cout << "guided lessons (blkmqlab-cli lesson NAME, or the GUI's Lessons panel):\n";
    for (const auto& l : Lesson::builtin())
        std::cout << "  " << l.name << std::string(l.name.size() < 24 ? 24 - l.name.size() : 1, ' ') << l.title << "\n";
    std::cout << "\nvalues an expectation may name (docs/lessons.md):\n" << lessonValueHelp();
    return kExitOk;
}

// Plays every step in order on one engine per scenario segment, prints what each step says and
// whether its expectations hold. With --check only failures and a one-line verdict are printed,
// and the exit status is 4 when an expectation does not hold or a step cannot be played.
int lessonCommand(const std::vector<std::string>& args)
{
    std::string name;
    bool check = false;
    for (const std::string& a : args) {
        if (a == "--check")
            check = true;
        else if (!a.empty() && a[0] == '-') {
            std::cerr << "blkmqlab-cli lesson: unknown option '" << a << "' (see blkmqlab-cli help)\n";
            return kExitUsage;
        } else if (name.empty())
            name = a;
        else {
            std::cerr << "blkmqlab-cli lesson: one lesson at a time (got '" << printable(name) << "' and '"
                      << printable(a) << "')\n";
            return kExitUsage;
        }
    }
    if (name.empty()) {
        std::cerr << "blkmqlab-cli lesson: which lesson? (blkmqlab-cli lessons lists them)\n";
        return kExitUsage;
    }
    auto lesson = Lesson::load(name);
    if (!lesson) {
        std::cerr << "blkmqlab-cli lesson: " << lesson.error() << "\n";
        return kExitUsage;
    }
    if (!check)
        std::cout << lesson->title() << "\n" << (lesson->source().empty() ? "" : lesson->source() + "\n");
    std::unique_ptr<Engine> engine;
    int failures = 0;
    for (int i = 0; i < lesson->size(); ++i) {
        const LessonStep& step = lesson->steps()[static_cast<std::size_t>(i)];
        const std::string where = lesson->name() + " step " + std::to_string(i + 1) + " (" + step.title + ")";
        if (lesson->segmentStart(i) == i) {
            auto s = lesson->scenarioOf(i);
            if (!s) {
                std::cerr << where << ": " << s.error() << "\n";
                return kExitUsage;
            }
            engine = std::make_unique<Engine>(*s);
        }
        const LessonStepOutcome out = lesson->play(*engine, i);
        if (!check)
            std::cout << "\n"
                      << i + 1 << ". " << step.title << "  [t = " << formatDuration(out.at) << "]\n"
                      << step.text << "\n";
        if (!out.error.empty()) {
            std::cout << (check ? where + ": " : "  ") << "FAILED: " << out.error << "\n";
            ++failures;
            continue;
        }
        for (const ExpectationResult& r : lesson->check(*engine->snapshot(), i)) {
            if (!r.held)
                ++failures;
            if (!check || !r.held)
                std::cout << (check ? where + ": " : "  ") << (r.held ? "ok      " : "FAILED  ") << r.text << "   ("
                          << r.values << ")\n";
        }
    }
    if (check)
        std::cout << lesson->name() << ": " << lesson->size() << " steps, "
                  << (failures ? std::to_string(failures) + " failed" : std::string("every expectation holds")) << "\n";
    return failures ? kExitLesson : kExitOk;
}

} // namespace blkmq::cli
