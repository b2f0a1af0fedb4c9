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
    if (map != m_map) {
        m_map = map;
        update();
    }
}

void TagMapItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*)
{
    const int rows = (m_depth + m_cols - 1) / m_cols;
    const double w = m_rect.width() / m_cols;
    const double h = std::min(w, m_rect.height() / std::max(1, rows));
    painter->setPen(Qt::NoPen);
    for (int t = 0; t < m_depth; ++t) {
        const bool used = static_cast<std::size_t>(t) < m_map.size() && m_map[static_cast<std::size_t>(t)];
        painter->setBrush(used ? QColor(0x2e, 0x86, 0xc1) : QColor(0xe5, 0xe8, 0xe8));
        painter->drawRect(QRectF(m_rect.left() + (t % m_cols) * w, m_rect.top() + (t / m_cols) * h, std::max(1.0, w - 0.6),
                                 std::max(1.0, h - 0.6)));
    }
}

} // namespace blkmq
