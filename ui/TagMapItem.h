#pragma once

#include <QGraphicsItem>
#include <QImage>

#include <vector>

namespace blkmq {

// One hw queue's driver tags as a grid of squares: free or in use.
class TagMapItem : public QGraphicsItem {
public:
    TagMapItem(const QRectF& rect, int depth);
    QRectF boundingRect() const override { return m_rect; }
    void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override;
    void setMap(const std::vector<std::uint8_t>& map);

private:
    QRectF m_rect;
    int m_depth;
    int m_cols;
    std::vector<std::uint8_t> m_map;
    QImage m_image; // one pixel per tag, scaled when painted: thousands of tags cost one blit
};

} // namespace blkmq
