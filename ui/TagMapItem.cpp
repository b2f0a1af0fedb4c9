#include "TagMapItem.h"

#include "Palette.h"

#include "engine/Snapshot.h"

#include <QPainter>

#include <iterator>

#include <cmath>

namespace blkmq {

TagMapItem::TagMapItem(const QRectF& rect, int depth)
    : m_rect(rect)
    , m_depth(depth)
    , m_cols(std::max(1, static_cast<int>(std::ceil(std::sqrt(depth * rect.width() / std::max(1.0, rect.height()))))))
{
}

void TagMapItem::setMap(const std::vector<std::int16_t>& map)
{
    if (map == m_map && !m_image.isNull() && m_generation == Palette::generation())
        return;
    m_map = map;
    m_generation = Palette::generation();
    const int rows = (m_depth + m_cols - 1) / m_cols;
    m_image = QImage(m_cols, rows, QImage::Format_RGB32);
    m_image.fill(Qt::white);
    for (int t = 0; t < m_depth; ++t) {
        const int v = static_cast<std::size_t>(t) < m_map.size() ? int { m_map[static_cast<std::size_t>(t)] }
                                                                 : int { kTagFree };
        const QColor c = v >= 0 ? Palette::cacheColour(v)
            : v == kTagInUse    ? Palette::of(Hue::TagInUse)
            : v == kTagLost     ? Palette::of(Hue::TagLost)
                                : Palette::of(Hue::TagFree);
        m_image.setPixel(t % m_cols, t / m_cols, c.rgb());
    }
    update();
}

double TagMapItem::cellSize() const
{
    const int rows = (m_depth + m_cols - 1) / m_cols;
    return std::min(m_rect.width() / m_cols, m_rect.height() / std::max(1, rows));
}

int TagMapItem::tagAt(const QPointF& scenePos) const
{
    const QPointF p = mapFromScene(scenePos) - m_rect.topLeft();
    const double cell = cellSize();
    if (p.x() < 0 || p.y() < 0 || cell <= 0)
        return -1;
    const int col = static_cast<int>(p.x() / cell), row = static_cast<int>(p.y() / cell);
    const int tag = row * m_cols + col;
    return col < m_cols && tag < m_depth ? tag : -1;
}

QPointF TagMapItem::tagCenter(int tag) const
{
    const double cell = cellSize();
    return mapToScene(m_rect.topLeft() + QPointF((tag % m_cols + 0.5) * cell, (tag / m_cols + 0.5) * cell));
}

void TagMapItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*)
{
    if (m_image.isNull())
        setMap(m_map);
    const double cell = cellSize();
    painter->setRenderHint(QPainter::SmoothPixmapTransform, false);
    painter->drawImage(QRectF(m_rect.topLeft(), QSizeF(cell * m_image.width(), cell * m_image.height())), m_image);
}

} // namespace blkmq
