#pragma once

#include "engine/Checkpoints.h"
#include "engine/Engine.h"
#include "engine/StopCondition.h"
#include "io/FieldTable.h"
#include "sim/Result.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace blkmq {

// A moment of a run, as a file a teacher hands to a class (docs/sessions.md, `.blkmqlab`): the
// scenario (embedded), every live command with the number of events processed before it, where
// the run stood (its time, events and fingerprint), bookmarks, the open lesson and the GUI's view.
// The engine is deterministic, so replaying the scenario with the commands at their indices is
// the same run: opening a session puts the run, and the view, where they were.
struct Session {
    static constexpr int kFormat = 1;
    struct Bookmark {
        std::int64_t t_ns = 0;
        std::string note;
    };
    nlohmann::json scenario; // the scenario document as loaded, before any live command
    std::vector<Engine::AppliedCommand> commands;
    std::int64_t at_ns = 0; // where the run stood
    std::uint64_t events = 0;
    std::string fingerprint;
    std::vector<Bookmark> bookmarks;
    std::string lesson; // a lesson's name, or empty
    int lessonStep = -1; // the step reached (0-based), -1 before the first
    nlohmann::json view = nlohmann::json::object(); // the GUI's own (zoom, selection, plots): kept as read

    // The run of `engine` (on `scenarioJson`, its scenario as loaded) where it stands now.
    static Session of(const Engine& engine, const std::string& scenarioJson);
    // Reads a session file's text; every error is one line naming the field ("commands[2].set: ...").
    static Result<Session> fromText(const std::string& text, const std::string& origin);
    // The same from a parsed document (the text's limits, such as its depth, are fromText's).
    static Result<Session> fromJson(const nlohmann::json& doc, const std::string& origin);
    static Result<Session> fromFile(const std::string& path);
    // Every field of a session file, the only keys fromText() accepts (blkmqlab-cli fields session).
    static const FieldTable& fields();
    std::string toText() const;

    // The scenario with its commands replayed, run to where the session stood: the same events, the
    // same fingerprint, or an error naming the first command (by its event index) after which the
    // replay no longer matches.
    Result<std::unique_ptr<Engine>> replay() const;
    // The same run to simulated time `t` instead (commands at or before it applied at their indices).
    Result<std::unique_ptr<Engine>> replayTo(SimTime t) const;
    // The same run to `n` events processed (the clock at the n-th event): one event back is
    // replayToEvent(events - 1).
    Result<std::unique_ptr<Engine>> replayToEvent(std::uint64_t n) const;
    // The three on an engine the caller built from scenarioOf() (with its trace on, say), at t = 0,
    // or on an engine already at a moment of this run (it goes on from there, making the commands
    // still to come); an error or empty. With `from`, checkpoints of the run it holds (the same scenario, their
    // commands a prefix of `commands`), it starts at the latest one at least `history` events before
    // the goal instead of at t = 0 (history: what the engine's trace ring should hold afterwards).
    enum class To { Moment, Time, Event };
    std::string replayInto(Engine& e, To to, SimTime t = {}, std::uint64_t n = 0, const Checkpoints* from = nullptr,
        std::uint64_t history = 0) const;
    // On an engine at a moment of this run: on with the run's commands still to come, each at its
    // event, until `until` holds (true; the engine stands at the event after which it held), or the
    // scenario ends or `maxEvents` more events pass (false), as Engine::runUntil(until, maxEvents)
    // would on the run itself. `error` says why it could not (the engine took other commands).
    bool replayUntil(Engine& e, StopCondition& until, std::uint64_t maxEvents, std::string& error) const;
    Result<Scenario> scenarioOf() const;
};

} // namespace blkmq
