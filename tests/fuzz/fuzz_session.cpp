// libFuzzer target: a session file (docs/sessions.md), read and, when its run is small, replayed.
#include "session/Session.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string text(reinterpret_cast<const char*>(data), size);
    auto s = blkmq::Session::fromText(text, "fuzz");
    if (s && s->events <= 100000) { // a replay is bounded by the events the session says it ran
        auto sc = s->scenarioOf();
        if (sc && sc->topology.nrCpus() <= 64)
            (void)s->replay();
    }
    return 0;
}
