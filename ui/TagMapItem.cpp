#include "TagMapItem.h"

#include <QPainter>

#include <cmath>

namespace blkmq {

TagMapItem::TagMapItem(const QRectF& rect, int depth)
    : m_rect(rect)
    , m_depth(depth)
    , m_cols(std::max(1, static_cast<int>(std::ceil(std::sqrt(depth * rect.width() / std::max(1.0, rect.height()))))))
{
}

void TagMapItem::setMap(const std::vector<std::uint8_t>& map)
{
    if (map == m_map && !m_image.isNull())
        return;
    m_map = map;
    const int rows = (m_depth + m_cols - 1) / m_cols;
    m_image = QImage(m_cols, rows, QImage::Format_RGB32);
    m_image.fill(Qt::white);
    const QRgb used = qRgb(0x2e, 0x86, 0xc1), free = qRgb(0xe5, 0xe8, 0xe8);
    for (int t = 0; t < m_depth; ++t)
        m_image.setPixel(t % m_cols, t / m_cols,
            static_cast<std::size_t>(t) < m_map.size() && m_map[static_cast<std::size_t>(t)] ? used : free);
    update();
}

void TagMapItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*)
{
    if (m_image.isNull())
        setMap(m_map);
    const double cell = std::min(m_rect.width() / m_image.width(), m_rect.height() / m_image.height());
    painter->setRenderHint(QPainter::SmoothPixmapTransform, false);
    painter->drawImage(QRectF(m_rect.topLeft(), QSizeF(cell * m_image.width(), cell * m_image.height())), m_image);
}

} // namespace blkmq
