#include "TokenLayer.h"

#include "Palette.h"

#include <QPaintEngine>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

namespace blkmq {

namespace {
constexpr double kArcLifeMs = 450;
constexpr double kRadius = 3.2;
constexpr double kLabelPx = 11, kMinLabelPx = 12, kMaxLabelPx = 20; // a token's name, in scene units
}

class TokenLayer::ArcItem final : public QGraphicsItem {
public:
    explicit ArcItem(const QRectF& bounds)
        : m_bounds(bounds)
    {
        setZValue(kArcZ);
    }
    QRectF boundingRect() const override { return m_bounds; }
    void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override;
    std::vector<Arc> m_arcs;

private:
    QRectF m_bounds;
};

TokenLayer::TokenLayer(const QRectF& bounds)
    : m_bounds(bounds)
    , m_arcItem(new ArcItem(bounds))
{
    setZValue(kTokenZ);
}

QGraphicsItem* TokenLayer::arcs() const { return m_arcItem; }

namespace {

// A request state's colour in the palette and its shape's glyph, one row per RqState in its order.
struct StateLook {
    Hue hue;
    const char16_t* glyph;
};
constexpr StateLook kStateLooks[] = { { Hue::TagFree, u"●" }, { Hue::RqSched, u"◆" }, { Hue::RqDispatch, u"■" },
    { Hue::RqDevice, u"●" }, { Hue::RqComplete, u"▲" } };
static_assert(std::size(kStateLooks) == static_cast<std::size_t>(RqState::Complete) + 1);

// The token's outline, centred on 0 with the disc's radius r: the shapes cover about the same area.
QPainterPath tokenPath(RqState s, double r)
{
    QPainterPath path;
    switch (s) {
    case RqState::Sched: // a diamond
        path.moveTo(0, -1.25 * r);
        path.lineTo(1.25 * r, 0);
        path.lineTo(0, 1.25 * r);
        path.lineTo(-1.25 * r, 0);
        path.closeSubpath();
        break;
    case RqState::Dispatch: // a square
        path.addRect(QRectF(-0.9 * r, -0.9 * r, 1.8 * r, 1.8 * r));
        break;
    case RqState::Complete: // a triangle, pointing up
        path.moveTo(0, -1.25 * r);
        path.lineTo(1.2 * r, 0.85 * r);
        path.lineTo(-1.2 * r, 0.85 * r);
        path.closeSubpath();
        break;
    default: // at the device (and anything else): a disc
        path.addEllipse(QPointF(0, 0), r, r);
        break;
    }
    return path;
}

} // namespace

QColor TokenLayer::stateColour(RqState s) { return Palette::of(kStateLooks[static_cast<std::size_t>(s)].hue); }

QString TokenLayer::shapeGlyph(RqState s) { return QString::fromUtf16(kStateLooks[static_cast<std::size_t>(s)].glyph); }

void TokenLayer::setTargets(const std::vector<Token>& targets, const std::vector<QPointF>& origins)
{
    for (auto& t : m_tokens)
        t.seen = false;
    for (std::size_t i = 0; i < targets.size(); ++i) {
        const Token& in = targets[i];
        if (in.id < 0)
            continue;
        const auto id = static_cast<std::size_t>(in.id);
        if (id >= m_slotOf.size())
            m_slotOf.resize(id + 1, -1);
        int& slot = m_slotOf[id];
        if (slot < 0) {
            Token t = in;
            t.pos = origins[i];
            t.seen = true;
            slot = static_cast<int>(m_tokens.size());
            m_tokens.push_back(std::move(t));
        } else {
            Token& t = m_tokens[static_cast<std::size_t>(slot)];
            t.target = in.target;
            t.state = in.state;
            t.stuck = in.stuck;
            t.label = in.label;
            t.seen = true;
        }
    }
    // Drop the finished ones in place, keeping the tokens dense and their slots current.
    std::size_t kept = 0;
    for (std::size_t i = 0; i < m_tokens.size(); ++i) {
        Token& t = m_tokens[i];
        if (!t.seen) {
            m_slotOf[static_cast<std::size_t>(t.id)] = -1;
            continue;
        }
        if (kept != i)
            m_tokens[kept] = std::move(t);
        m_slotOf[static_cast<std::size_t>(m_tokens[kept].id)] = static_cast<int>(kept);
        ++kept;
    }
    m_tokens.resize(kept);
    update();
}

void TokenLayer::addArc(QPointF from, QPointF to, ArcKind kind, int fromCpu, int toCpu)
{
    // One arc per pair of CPUs and kind: a repeat renews it instead of stacking a copy on it.
    auto& arcs = m_arcItem->m_arcs;
    for (Arc& a : arcs)
        if (a.kind == kind && a.from == from && a.to == to) {
            a.age = 0;
            a.fresh = true;
            return;
        }
    if (arcs.size() < 400)
        arcs.push_back({ from, to, kind, 0, true, fromCpu, toCpu });
}

void TokenLayer::advance(double frameMs, ArcClock clock)
{
    // Exponential glide: about 150 ms to cover most of the way, whatever the frame rate. Nothing
    // moving and no arc fading: no repaint.
    const double k = 1.0 - std::pow(0.5, frameMs / 45.0);
    bool moved = false;
    for (auto& t : m_tokens) {
        if (t.pos == t.target)
            continue;
        const QPointF d = t.target - t.pos;
        t.pos = QPointF::dotProduct(d, d) > 0.09 ? t.pos + d * k : t.target; // farther than 0.3: glide
        moved = true;
    }
    auto& all = m_arcItem->m_arcs;
    const bool arcs = !all.empty();
    m_arcsFade = clock == ArcClock::Playing;
    for (auto& a : all) {
        if (clock == ArcClock::Playing)
            a.age += frameMs;
        else if (clock == ArcClock::Stepped && !a.fresh)
            a.age += kArcLifeMs / 3;
        a.fresh = false;
    }
    all.erase(std::remove_if(all.begin(), all.end(), [](const Arc& a) { return a.age > kArcLifeMs; }), all.end());
    if (moved)
        update();
    if (arcs)
        m_arcItem->update();
}

void TokenLayer::settle()
{
    for (auto& t : m_tokens)
        t.pos = t.target;
    update();
}

std::vector<TokenLayer::Arc> TokenLayer::arcList() const { return m_arcItem->m_arcs; }

void TokenLayer::keepArc(const Arc& arc)
{
    m_arcItem->m_arcs.push_back(arc);
    m_arcItem->update();
}

bool TokenLayer::hasArc(QPointF from, QPointF to, ArcKind kind) const
{
    const auto& arcs = m_arcItem->m_arcs;
    return std::any_of(
        arcs.begin(), arcs.end(), [&](const Arc& a) { return a.kind == kind && a.from == from && a.to == to; });
}

bool TokenLayer::animating() const
{
    if (m_arcsFade && !m_arcItem->m_arcs.empty())
        return true;
    return std::any_of(m_tokens.begin(), m_tokens.end(), [](const Token& t) { return t.pos != t.target; });
}

const TokenLayer::Token* TokenLayer::tokenAt(const QPointF& p) const
{
    for (const auto& t : m_tokens)
        if (QLineF(t.pos, p).length() <= kRadius + 2)
            return &t;
    return nullptr;
}

void TokenLayer::ArcItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*)
{
    painter->setRenderHint(QPainter::Antialiasing, true);
    for (const auto& a : m_arcs) {
        const double alpha = 1.0 - a.age / kArcLifeMs;
        QPainterPath path(a.from);
        const bool steal = a.kind == ArcKind::Steal;
        const double bow = 40 + 0.15 * QLineF(a.from, a.to).length(); // IPIs bow up, steals down
        const QPointF mid = (a.from + a.to) / 2 + QPointF(0, steal ? bow : -bow);
        path.quadTo(mid, a.to);
        const int a8 = static_cast<int>(230 * alpha);
        // Cosmetic pens: an arc keeps its width on screen however far the canvas is scaled down (a
        // 64-CPU machine at 1280x800), and an IPI ends in a dot on the CPU it was sent to.
        QColor colour = Palette::of(steal ? Hue::Steal : Hue::Ipi);
        colour.setAlpha(a8);
        QPen pen(colour, steal ? 2.5 : 3.0, steal ? Qt::DashLine : Qt::SolidLine);
        pen.setCosmetic(true);
        painter->setPen(pen);
        painter->setBrush(Qt::NoBrush);
        painter->drawPath(path);
        if (!steal) {
            QPen dot(colour, 9.0, Qt::SolidLine, Qt::RoundCap);
            dot.setCosmetic(true);
            painter->setPen(dot);
            painter->drawPoint(a.to);
        }
    }
}

const QPixmap& TokenLayer::sprite(QRgb fill, QRgb outline, RqState shape, double scale)
{
    if (scale != m_spriteScale) {
        m_sprites.clear();
        m_spriteScale = scale;
    }
    // fill and outline without their alpha (opaque, or no outline at all), the shape, and whether
    // there is an outline
    const quint64 key = (quint64(fill & 0xffffff) << 32) | (quint64(static_cast<std::uint8_t>(shape)) << 24)
        | (outline & 0xffffff) | (qAlpha(outline) ? quint64(1) << 63 : 0);
    auto it = m_sprites.find(key);
    if (it != m_sprites.end())
        return *it;
    const double r = 1.25 * kRadius + 1.0; // the largest shape's reach, and the outline's half width outside it
    const int side = static_cast<int>(std::ceil(2 * r * scale)) + 2;
    QPixmap pix(side, side);
    pix.fill(Qt::transparent);
    {
        QPainter p(&pix);
        p.setRenderHint(QPainter::Antialiasing, true);
        p.translate(side / 2.0, side / 2.0);
        p.scale(scale, scale);
        p.setPen(outline ? QPen(QColor::fromRgba(outline), 1.3) : QPen(Qt::NoPen));
        p.setBrush(QColor::fromRgba(fill));
        p.drawPath(tokenPath(shape, kRadius));
    }
    return *m_sprites.insert(key, pix);
}

void TokenLayer::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*)
{
    painter->setRenderHint(QPainter::Antialiasing, true);
    // Filled by where the request is, outlined in its submitting CPU's colour (so a completion's way
    // back is visible); a scripted request is named by its id, the others only when a handful are
    // in flight (packed tokens' labels would cover each other).
    const bool all = m_tokens.size() <= static_cast<std::size_t>(kLabelledTokens);
    const QTransform xf = painter->worldTransform();
    // A name is drawn at least kMinLabelPx high on screen, on a light ground so that frames and arcs
    // under it do not cross it out; drawn smaller than that it would not be read, so it is left out.
    const double viewScale = std::max(1e-6, std::abs(xf.m11()));
    const double labelPx = std::max(kLabelPx, kMinLabelPx / viewScale);
    const bool names = labelPx <= kMaxLabelPx;
    QFont font = painter->font();
    font.setPixelSize(static_cast<int>(std::ceil(labelPx)));
    font.setBold(true);
    painter->setFont(font);
    const bool raster = painter->paintEngine() && painter->paintEngine()->type() == QPaintEngine::Raster
        && xf.type() <= QTransform::TxScale && xf.m11() == xf.m22();
    const auto fillOf = [](const Token& t) { return t.stuck ? Palette::of(Hue::Stuck) : stateColour(t.state); };
    if (raster) { // blits at device pixels, then the labels in scene coordinates
        const double scale = xf.m11() * painter->device()->devicePixelRatioF();
        painter->save();
        painter->resetTransform();
        for (const auto& t : m_tokens) {
            const QPixmap& pix
                = sprite(fillOf(t).rgba(), t.cpu >= 0 ? Palette::cacheColour(t.cpu).rgba() : 0, t.state, scale);
            const QPointF at = xf.map(t.pos);
            const double half = pix.width() / pix.devicePixelRatioF() / 2;
            painter->drawPixmap(QPointF(std::round(at.x() - half), std::round(at.y() - half)), pix);
        }
        painter->restore();
    }
    for (const auto& t : m_tokens) {
        if (!raster) {
            painter->setPen(t.cpu >= 0 ? QPen(Palette::cacheColour(t.cpu), 1.3) : Qt::NoPen);
            painter->setBrush(fillOf(t));
            painter->drawPath(tokenPath(t.state, kRadius).translated(t.pos));
        }
        if (names && !t.label.isEmpty() && (all || !t.label.startsWith(QLatin1Char('#')))) {
            // Right of the token and clear of the ring a stuck or followed token wears.
            QPainterPath name;
            name.addText(t.pos + QPointF(kRadius + 5, labelPx * 0.36), font, t.label);
            painter->strokePath(name, QPen(QColor(255, 255, 255, 230), 3.0 / viewScale));
            painter->fillPath(name, QColor(0x1b, 0x26, 0x31));
        }
    }
    painter->setPen(Qt::NoPen);
    for (const auto& t : m_tokens) {
        if (!t.stuck && t.id != m_followed)
            continue;
        painter->setBrush(Qt::NoBrush);
        painter->setPen(QPen(t.stuck ? Palette::of(Hue::Stuck) : QColor(Qt::black), 2));
        painter->drawEllipse(t.pos, kRadius + 4, kRadius + 4);
        painter->setPen(Qt::NoPen);
    }
}

} // namespace blkmq
