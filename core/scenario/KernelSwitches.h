#pragma once

#include "io/FieldTable.h"
#include "sim/Provenance.h"
#include "spec/Scenario.h"

#include <string>
#include <vector>

namespace blkmq {

// One value of a choice switch.
struct SwitchChoice {
    std::string name;
    Provenance from;
};

// One kernel switch a scenario, the GUI, sweeps and A/B can set. Every view
// of the switches (the loader's validation and errors, live commands,
// `blkmqlab-cli patches`, the GUI's patch panel) is generated from this table;
// the value lives in KernelSpec, reached through the accessor of the row's type.
struct KernelSwitch {
    enum class Type : std::uint8_t { Bool, Choice, Duration };
    std::string key; // below "kernel.": "threadirqs", "patches.complete-llist", "restart"
    std::string family; // completion, restart, dispatch, tags
    std::string label; // for the GUI
    Type type = Type::Bool;
    bool live = true; // may change during a run
    // Applies only when the switch `requiresKey` has the value `requiresValue` (empty: always).
    std::string requiresKey, requiresValue;
    std::vector<std::string> excludes; // keys of switches that may not be turned on with this one
    std::string excludesWhy; // why, for the loader's message
    Provenance from; // of the switch (a bool: of the patch it turns on)
    std::vector<SwitchChoice> choices; // Type::Choice
    bool& (*flag)(KernelSpec&) = nullptr; // Type::Bool
    // Type::Choice: its value by name, read and set (a spec field may hold it typed, kernel.dispatch's DispatchMode).
    std::string (*choiceOf)(const KernelSpec&) = nullptr;
    void (*setChoice)(KernelSpec&, const std::string&) = nullptr;
    SimTime& (*duration)(KernelSpec&) = nullptr; // Type::Duration

    std::string path() const { return "kernel." + key; }
    // The value in `k`, as --set would write it (true, own-hctx, 30s).
    std::string value(const KernelSpec& k) const;
    std::string defaultValue() const { return value(KernelSpec {}); }
    std::vector<std::string> choiceNames() const;
};

class KernelSwitches {
public:
    static const std::vector<KernelSwitch>& all();
    // Sets every switch to what k.version's kernel does ("custom" changes nothing).
    static void applyVersion(KernelSpec& k);
    // By key below "kernel." or by full path.
    static const KernelSwitch* find(const std::string& keyOrPath);
    // A switch set where it does not apply (KernelSwitch::requiresKey), with one it excludes, or a patch
    // beyond the devices' limits; what the loader and live changes refuse.
    static FieldProblem problem(const KernelSpec& k, const std::vector<DeviceSpec>& devices);
};

} // namespace blkmq
