#pragma once

#include "sim/EnumNames.h"

#include <cstdint>
#include <iterator>

namespace blkmq {

// How far apart two CPUs are; every "where"-dependent cost is indexed by it (topo/Topology.h says
// which class two CPUs are in), and counts of moves between CPUs are kept by it.
enum class Distance : std::uint8_t { Self = 0, Smt, Llc, Node, Remote };
inline constexpr int kDistanceClasses = 5;

inline constexpr const char* kDistanceNames[] = { "self", "smt", "llc", "node", "remote" };
static_assert(std::size(kDistanceNames) == kDistanceClasses);
inline const char* distanceName(Distance d) { return enumName(kDistanceNames, d); }

} // namespace blkmq
