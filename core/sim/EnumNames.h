#pragma once

#include <cstddef>

namespace blkmq {

// An enum's names live in a table beside it, one per value in the enum's order, with a
// static_assert that the table has as many names as the enum has values (sim/TraceRecord.h's
// kTraceKindNames is the model): a value added without a name fails to compile, where a switch
// would fall through to "?". This reads the table; a value past its end (a corrupt file's) is "?".
template<std::size_t N, class E>
constexpr const char* enumName(const char* const (&names)[N], E value)
{
    const auto i = static_cast<std::size_t>(value);
    return i < N ? names[i] : "?";
}

} // namespace blkmq
