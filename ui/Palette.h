#pragma once

#include "sim/ExecContext.h"

#include <QBrush>
#include <QColor>
#include <QString>

namespace blkmq {

// What a colour on the canvas, in the legend, the tag maps and the timeline means. Each has one
// colour per scheme, in one table (Palette.cpp).
enum class Hue : std::uint8_t {
    Idle, // a CPU tile, by what runs on it (the ExecContext order follows)
    Task,
    Hardirq,
    Softirq,
    Ksoftirqd,
    IrqThread,
    Kworker,
    RqSched, // a request token, by where the request is
    RqDispatch,
    RqDevice,
    RqComplete,
    Stuck, // a request that waits for ever (its ring), the stall banner's marks
    Ipi, // a completion's IPI: a solid arc ending in a dot on the target
    Steal, // percpu_ida's steal: a dashed arc
    Restart, // an hctx with BLK_MQ_S_SCHED_RESTART set, a queue's shared_hctx_restart above 0
    LessonPointer, // what a lesson step points at
    Selected, // what the inspector shows (dashed)
    TagInUse, // a tag map's cells
    TagFree,
    TagLost,
    Count
};

// The window's colours. Two schemes: the standard one, and one whose colours viewers with any of
// the common colour-vision deficiencies tell apart (Okabe and Ito's eight, "Color Universal
// Design", 2008). Meaning never rests on colour alone, in either: a CPU tile's context also has a
// hatch (contextBrush), a request's state a shape (TokenLayer), an IPI an end dot where a steal is
// dashed, RESTART a thick solid frame where the selection's is dashed.
class Palette {
public:
    static QColor of(Hue h);
    static bool colourBlindSafe();
    static void setColourBlindSafe(bool on); // the next frame draws with it
    // Counts the scheme's changes: a picture cached in colours (a tag map) is redrawn when it moves.
    static int generation();
    // A CPU tile: the context's colour under its hatch (task and idle: none), as a texture brush.
    static QBrush contextBrush(ExecContext c, bool idle);
    static QColor contextColour(ExecContext c, bool idle);
    // The hatch's name in the legend: a glyph that looks like it ("" for none).
    static QString contextHatchGlyph(ExecContext c);
    // A plot's curve: in the standard scheme its metric's own colour (`standard`), in the safe one
    // the index-th of Okabe and Ito's colours, so the curves of one plot stay apart.
    static QColor curveColour(int index, const QColor& standard);
    // The colour of a CPU's cached tags in the tag maps (and of a token's outline): a cycle that
    // never uses the colours of IPIs, RESTART or stuck requests.
    static QColor cacheColour(int cpu);
};

} // namespace blkmq
