#pragma once

#include "metrics/Counters.h"
#include "sim/Result.h"
#include "sim/SimTime.h"
#include "sim/TraceRecord.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace blkmq {

class Engine;

// "Run until …": what Engine::runUntil(StopCondition&), lessons, tests, `blkmqlab-cli run --until`
// and the GUI's "Next interesting" stop on. arm() is called when a run towards the condition
// starts (a condition on a change remembers its baseline there), reached() after every event,
// disarm() when the run ends.
class StopCondition {
public:
    virtual ~StopCondition() = default;
    virtual void arm(Engine&) { }
    virtual bool reached(const Engine& e) const = 0;
    virtual void disarm(Engine&) { }
    // What it waits for, for people: "ipis changes", "RESTART is set on hctx 3".
    virtual std::string describe() const = 0;
};
using StopPtr = std::unique_ptr<StopCondition>;

namespace stop {

StopPtr at(SimTime t); // the clock reaches t
StopPtr counterChanges(const CounterField& counter);
StopPtr event(TraceKind kind); // the next trace record of that kind (an IPI sent, a restart, ...)
StopPtr stall(); // the stall detector fires
StopPtr restartSet(int hctx); // BLK_MQ_S_SCHED_RESTART set on that hctx (-1: on any)
StopPtr anyOf(std::vector<StopPtr> conditions);
// The GUI's "Next interesting": an IPI, a ksoftirqd wake-up, RESTART set, a restart or a skipped one
// (blk_mq_sched_restart returned early), a requeue or a stall.
StopPtr interesting();
// The counters whose change interesting() stops at, each with what its change means in words.
struct InterestingCounter {
    std::string_view counter; // a name of kCounterFields
    std::string_view what; // "RESTART was set"
};
const std::vector<InterestingCounter>& interestingCounters();

// The text form, one registered name per condition, optionally ":ARG"; "A|B" stops on either.
// Errors name the valid forms.
Result<StopPtr> parse(std::string_view text);
// One line per form: "name[:ARG]  what it waits for".
std::string help();

} // namespace stop

} // namespace blkmq
