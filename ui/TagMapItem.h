#pragma once

#include <QColor>
#include <QGraphicsItem>
#include <QImage>

#include <cstdint>
#include <vector>

namespace blkmq {

// One hw queue's driver tags as a grid of squares: free, in use, cached by a
// CPU (percpu_ida's per-CPU stacks: that CPU's colour, which its tile shows
// too) or lost (ida-lock-split). Entries are Snapshot::tagMaps's.
class TagMapItem : public QGraphicsItem {
public:
    TagMapItem(const QRectF& rect, int depth);
    QRectF boundingRect() const override { return m_rect; }
    void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override;
    void setMap(const std::vector<std::int16_t>& map);
    // The tag whose square is at `scenePos`, or -1; the centre of a tag's square, in scene coordinates.
    int tagAt(const QPointF& scenePos) const;
    QPointF tagCenter(int tag) const;
    std::int16_t state(int tag) const
    {
        return tag >= 0 && static_cast<std::size_t>(tag) < m_map.size() ? m_map[static_cast<std::size_t>(tag)]
                                                                        : std::int16_t(-1);
    }
    int depth() const { return m_depth; }

    // The colour of a free tag cached on `cpu` (cycles through 10 hues kept apart from in use and free).
    static QColor cacheColor(int cpu);
    static QColor inUseColor() { return { 0x2e, 0x86, 0xc1 }; }
    static QColor freeColor() { return { 0xe5, 0xe8, 0xe8 }; }
    static QColor lostColor() { return { 0x17, 0x20, 0x2a }; }

private:
    double cellSize() const;
    QRectF m_rect;
    int m_depth;
    int m_cols;
    std::vector<std::int16_t> m_map;
    QImage m_image; // one pixel per tag, scaled when painted: thousands of tags cost one blit
};

} // namespace blkmq
