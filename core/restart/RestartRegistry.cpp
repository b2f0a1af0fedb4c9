#include "restart/RestartRegistry.h"

namespace blkmq {

// One line per variant (each in its own file); the first is the default.
const RestartVariant& ownHctxRestart();
const RestartVariant& rrSharedRestart();
const RestartVariant& rrSharedQueueCounterRestart();
const RestartVariant& rrSharedTagsCounterRestart();
const RestartVariant& queueFlagRestart();

const std::vector<const RestartVariant*>& RestartRegistry::all()
{
    static const std::vector<const RestartVariant*> list {
        &ownHctxRestart(),
        &rrSharedRestart(),
        &rrSharedQueueCounterRestart(),
        &rrSharedTagsCounterRestart(),
        &queueFlagRestart(),
    };
    return list;
}

const RestartVariant* RestartRegistry::find(const std::string& name)
{
    for (const RestartVariant* v : all())
        if (name == v->name())
            return v;
    return nullptr;
}

std::vector<std::string> RestartRegistry::names()
{
    std::vector<std::string> out;
    for (const RestartVariant* v : all())
        out.push_back(v->name());
    return out;
}

} // namespace blkmq
