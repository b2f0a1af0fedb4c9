#pragma once

#include <cstdint>

namespace blkmq {

// How far apart two CPUs are; every "where"-dependent cost is indexed by it (topo/Topology.h says
// which class two CPUs are in), and counts of moves between CPUs are kept by it.
enum class Distance : std::uint8_t { Self = 0, Smt, Llc, Node, Remote };
inline constexpr int kDistanceClasses = 5;

inline const char* distanceName(Distance d)
{
    switch (d) {
    case Distance::Self:
        return "self";
    case Distance::Smt:
        return "smt";
    case Distance::Llc:
        return "llc";
    case Distance::Node:
        return "node";
    case Distance::Remote:
        return "remote";
    }
    return "?";
}

} // namespace blkmq
