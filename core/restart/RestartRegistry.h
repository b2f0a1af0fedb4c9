#pragma once

#include "restart/RestartVariant.h"

#include <string>
#include <vector>

namespace blkmq {

// The RESTART variants, by name (kernel.restart). The first is the default.
class RestartRegistry {
public:
    static const std::vector<const RestartVariant*>& all();
    static const RestartVariant* find(const std::string& name);
    static std::vector<std::string> names();
};

} // namespace blkmq
