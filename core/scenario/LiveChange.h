#pragma once

#include "scenario/KernelSwitches.h"
#include "sim/Result.h"
#include "spec/Scenario.h"

#include <cstdint>
#include <string>

namespace blkmq {

// A change to a running scenario as posted and recorded (session files, markers): a dotted path and
// a value, as --set writes them.
struct Command {
    std::string path;
    std::string value;
    bool operator==(const Command&) const = default;
};

// A command read against the switch table and the loader's ranges, on the thread that posts it. The
// fields that may change during a run (docs/scenario.md): a kernel switch marked live, a scalar cost
// (costs.NAME), one entry of a cost table (costs.NAME.DISTANCE), and a device's rq_affinity
// (devices.NAME-OR-INDEX.rq_affinity). The engine takes it from its inbox and only sets the typed value
// (applyTo), which checks what depends on the run it lands in: the device the name or index picks,
// the switches' combinations, and costs.fio_user_ns ≤ costs.submit_ns.
class LiveChange {
public:
    static LiveChange read(const Command& c);
    // Whether the path names a field that may change during a run, whatever the value.
    static bool isLivePath(const std::string& path);

    const Command& command() const { return m_command; }
    // Why it cannot apply to any run (a field that cannot change during a run, a value out of range);
    // empty when it was read.
    const std::string& refused() const { return m_refused; }
    // Sets the value in `s`. When the result is not a valid scenario, `s` is unchanged and the error says why.
    Result<bool> applyTo(Scenario& s) const;

private:
    enum class Target : std::uint8_t { Refused, Switch, Cost, CostEntry, RqAffinity };
    static LiveChange refuse(const Command& c, std::string why);

    Command m_command;
    std::string m_refused;
    Target m_target = Target::Refused;
    const KernelSwitch* m_switch = nullptr; // Target::Switch
    bool m_flag = false; // a Bool switch's value
    std::string m_choice; // a Choice switch's value, one of its choices
    SimTime m_duration; // a Duration switch's value
    std::size_t m_cost = 0; // Target::Cost, CostEntry: the row of Costs::params()
    int m_distance = 0; // Target::CostEntry: the Distance of the entry
    std::int64_t m_number = 0; // a cost in ns, or rq_affinity
    std::string m_device; // Target::RqAffinity: a device's name or index
};

} // namespace blkmq
