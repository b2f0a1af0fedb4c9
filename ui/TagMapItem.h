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

private:
    double cellSize() const;
    QRectF m_rect;
    int m_depth;
    int m_cols;
    std::vector<std::int16_t> m_map;
    QImage m_image; // one pixel per tag, scaled when painted: thousands of tags cost one blit
    int m_generation = -1; // the palette's when m_image was drawn
};

} // namespace blkmq
