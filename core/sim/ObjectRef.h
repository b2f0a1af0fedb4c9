#pragma once

#include <cstdint>

namespace blkmq {

// A thing of the model that the window can point at: a stall step's subject, a lesson step's
// pointer, the outline on the canvas, the object the inspector shows after a click. One type for
// all of them, so that what a step names is what the canvas outlines and the inspector shows.
struct ObjectRef {
    enum class Kind : std::uint8_t {
        None,
        Cpu, // index: the CPU
        Hctx, // index: the global hctx
        Request, // index: the request (its slot in the block layer's pool)
        Tags, // index: the hctx whose driver tags (its tag map) are meant
        Queue, // index: the device: its request queue (shared_hctx_restart) and its box on the canvas
    };
    Kind kind = Kind::None;
    int index = -1;
    bool operator==(const ObjectRef&) const = default;
};

} // namespace blkmq
