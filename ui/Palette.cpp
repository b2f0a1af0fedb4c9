#include "Palette.h"

#include <QHash>
#include <QPainter>
#include <QPixmap>

#include <array>
#include <atomic>
#include <iterator>

namespace blkmq {

namespace {

std::atomic<bool> g_colourBlindSafe { false };
std::atomic<int> g_generation { 0 };

struct Row {
    Hue hue;
    QRgb standard;
    QRgb safe; // Okabe-Ito: orange E69F00, sky blue 56B4E9, bluish green 009E73, yellow F0E442,
               // blue 0072B2, vermillion D55E00, reddish purple CC79A7, black; tiles use light tints
};
// One row per Hue, in its order.
constexpr Row kRows[] = {
    { Hue::Idle, 0xecf0f1, 0xf2f2f2 },
    { Hue::Task, 0xa9dfbf, 0x9fd9c4 }, // bluish green, light
    { Hue::Hardirq, 0xf1948a, 0xeeb28d }, // vermillion, light
    { Hue::Softirq, 0xf8c471, 0xf6ee9b }, // yellow, light
    { Hue::Ksoftirqd, 0xd2b4de, 0xe7bfd6 }, // reddish purple, light
    { Hue::IrqThread, 0xaed6f1, 0xa9d8f5 }, // sky blue, light
    { Hue::Kworker, 0xd5dbdb, 0xcfcfcf },
    { Hue::RqSched, 0x8e44ad, 0xcc79a7 },
    { Hue::RqDispatch, 0xe67e22, 0xe69f00 },
    { Hue::RqDevice, 0x2980b9, 0x0072b2 },
    { Hue::RqComplete, 0x27ae60, 0x009e73 },
    { Hue::Stuck, 0xc0392b, 0x000000 },
    { Hue::Ipi, 0xe74c3c, 0xd55e00 },
    { Hue::Steal, 0x117864, 0x0072b2 },
    { Hue::Restart, 0xc0392b, 0xd55e00 },
    { Hue::LessonPointer, 0xf39c12, 0xe69f00 },
    { Hue::Selected, 0x21618c, 0x0072b2 },
    { Hue::TagInUse, 0x2e86c1, 0x0072b2 },
    { Hue::TagFree, 0xe5e8e8, 0xe5e5e5 },
    { Hue::TagLost, 0x17202a, 0x000000 },
};
static_assert(std::size(kRows) == static_cast<std::size_t>(Hue::Count));
constexpr bool rowsInOrder()
{
    for (std::size_t i = 0; i < std::size(kRows); ++i)
        if (static_cast<std::size_t>(kRows[i].hue) != i)
            return false;
    return true;
}
static_assert(rowsInOrder());

// A context's hatch, and the glyph that draws it in the legend: none for the workload's own time,
// a distinct pattern for each kind of kernel context, none of them lines that would strike the
// tile's text through. One row per ExecContext, in its order.
struct Hatch {
    Qt::BrushStyle style;
    const char16_t* glyph;
};
constexpr Hatch kHatches[] = { { Qt::NoBrush, u"" }, { Qt::DiagCrossPattern, u"╳" }, { Qt::BDiagPattern, u"╱" },
    { Qt::FDiagPattern, u"╲" }, { Qt::Dense6Pattern, u"░" }, { Qt::VerPattern, u"║" } };
static_assert(std::size(kHatches) == kExecContexts);
const Hatch& hatch(ExecContext c) { return kHatches[static_cast<std::size_t>(c)]; }

} // namespace

QColor Palette::of(Hue h)
{
    const Row& r = kRows[static_cast<std::size_t>(h)];
    return QColor::fromRgb(g_colourBlindSafe ? r.safe : r.standard);
}

bool Palette::colourBlindSafe() { return g_colourBlindSafe; }

void Palette::setColourBlindSafe(bool on)
{
    if (g_colourBlindSafe.exchange(on) != on)
        ++g_generation;
}

int Palette::generation() { return g_generation; }

QColor Palette::contextColour(ExecContext c, bool idle)
{
    return of(idle ? Hue::Idle : static_cast<Hue>(static_cast<int>(Hue::Task) + static_cast<int>(c)));
}

QBrush Palette::contextBrush(ExecContext c, bool idle)
{
    const QColor base = contextColour(c, idle);
    if (idle || hatch(c).style == Qt::NoBrush)
        return QBrush(base);
    // A 12-pixel tile of the colour with its hatch a shade darker: faint enough for the tile's text.
    static QHash<QRgb, QPixmap> tiles[kExecContexts];
    QHash<QRgb, QPixmap>& cache = tiles[static_cast<std::size_t>(c)];
    auto it = cache.find(base.rgb());
    if (it == cache.end()) {
        QPixmap tile(12, 12);
        tile.fill(base);
        QPainter p(&tile);
        // Dots strike nothing through and may be darker than lines.
        p.fillRect(tile.rect(), QBrush(base.darker(hatch(c).style == Qt::Dense6Pattern ? 160 : 118), hatch(c).style));
        p.end();
        it = cache.insert(base.rgb(), tile);
    }
    return QBrush(*it);
}

QString Palette::contextHatchGlyph(ExecContext c) { return QString::fromUtf16(hatch(c).glyph); }

QColor Palette::curveColour(int index, const QColor& standard)
{
    static constexpr QRgb kSafe[] = { 0x0072b2, 0xd55e00, 0x009e73, 0xe69f00, 0x56b4e9, 0xcc79a7, 0x000000 };
    return g_colourBlindSafe ? QColor::fromRgb(kSafe[static_cast<std::size_t>(index) % std::size(kSafe)]) : standard;
}

QColor Palette::cacheColour(int cpu)
{
    static constexpr QRgb kStandard[]
        = { 0xe67e22, 0x27ae60, 0x8e44ad, 0x16a085, 0xf1c40f, 0xe84393, 0xa0522d, 0x7f8c3a, 0x00ced1, 0x5d6d7e };
    static constexpr QRgb kSafe[] = { 0xe69f00, 0x56b4e9, 0x009e73, 0xf0e442, 0xcc79a7, 0x999999 };
    const std::size_t i = static_cast<std::size_t>(cpu);
    return QColor::fromRgb(g_colourBlindSafe ? kSafe[i % std::size(kSafe)] : kStandard[i % std::size(kStandard)]);
}

} // namespace blkmq
