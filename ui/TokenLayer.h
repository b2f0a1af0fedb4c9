#pragma once

#include "block/Request.h"

#include <QGraphicsItem>
#include <QHash>
#include <QPixmap>
#include <QPointF>
#include <QString>

#include <vector>

namespace blkmq {

// All request tokens in one item, and the IPI and tag-steal arcs in a second one (arcs()): thousands
// of tokens are one paint() call, not thousands of scene items. Tokens glide toward their target
// position each frame; arcs fade out. The arcs lie under the canvas's labels, the tokens above them.
class TokenLayer : public QGraphicsItem {
public:
    struct Token {
        int id = 0;
        QPointF pos;
        QPointF target;
        RqState state = RqState::Free;
        bool stuck = false;
        bool seen = false;
        int cpu = -1; // the submitting CPU: the token's outline has its colour
        QString label; // the request's name, drawn when few tokens are on the canvas
    };
    // An IPI (solid, from the completing CPU to the submitter, a dot on the submitter) or a tag
    // steal (dashed, from the victim CPU to the stealer); colours: Palette's Ipi and Steal.
    enum class ArcKind { Ipi, Steal };
    struct Arc {
        QPointF from;
        QPointF to;
        ArcKind kind = ArcKind::Ipi;
        double age = 0; // ms of wall time while the run plays
        bool fresh = true; // added since the last advance()
        int fromCpu = -1, toCpu = -1; // for a new layout to draw it again (TopologyScene)
    };
    // How arcs age in advance(): while a run plays they fade in kArcLifeMs of wall time; while it is
    // paused they hold (a lesson step that stops at an IPI shows its arc for as long as it is read),
    // and each move of the paused clock (a step) ages the older ones by a third of their life.
    enum class ArcClock { Playing, Paused, Stepped };

    explicit TokenLayer(const QRectF& bounds);
    // The item that draws the arcs, for the scene to add and own (it is not a child: it stacks lower).
    QGraphicsItem* arcs() const;
    static constexpr double kArcZ = 1.5, kTokenZ = 10; // labels are at 2
    static constexpr int kLabelledTokens = 8; // up to this many, every token is named; else only scripted ones
    QRectF boundingRect() const override { return m_bounds; }
    void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override;

    // Tokens not in `targets` disappear; new ones appear at `origin` (their CPU).
    void setTargets(const std::vector<Token>& targets, const std::vector<QPointF>& origins);
    void addArc(QPointF from, QPointF to, ArcKind kind = ArcKind::Ipi, int fromCpu = -1, int toCpu = -1);
    // The arcs drawn, and one put back as it was (on a new layer of a new layout).
    std::vector<Arc> arcList() const;
    void keepArc(const Arc& arc);
    void advance(double frameMs, ArcClock clock = ArcClock::Playing);
    int size() const { return static_cast<int>(m_tokens.size()); }
    const Token* tokenAt(const QPointF& p) const;
    bool hasToken(int id) const
    {
        return id >= 0 && static_cast<std::size_t>(id) < m_slotOf.size() && m_slotOf[static_cast<std::size_t>(id)] >= 0;
    }
    bool hasArc(QPointF from, QPointF to, ArcKind kind) const;
    void setFollowed(int id)
    {
        m_followed = id;
        update();
    }
    // Tokens still gliding towards their targets, or arcs still fading (not held by a paused run).
    bool animating() const;
    void settle(); // every token at its target
    // A token's fill and shape say where its request is, twice (Palette): in the scheduler a
    // diamond, on hctx->dispatch a square, at the device a disc, on its way to ->complete a
    // triangle. The legend draws them with glyphs (shapeGlyph).
    static QColor stateColour(RqState s);
    static QString shapeGlyph(RqState s);

private:
    // A token as a pixmap at the device scale it is drawn at, by (fill, outline, shape): thousands
    // of tokens are blits, not antialiased paths. Vector outputs (SVG, PDF) still get paths.
    const QPixmap& sprite(QRgb fill, QRgb outline, RqState shape, double scale);
    QHash<quint64, QPixmap> m_sprites;
    double m_spriteScale = 0;

    QRectF m_bounds;
    std::vector<Token> m_tokens;
    std::vector<int> m_slotOf; // request id (its pool slot) -> m_tokens index, -1: none
    int m_followed = -1;
    bool m_arcsFade = true; // the last advance() was a playing run's
    class ArcItem; // holds the arcs
    ArcItem* m_arcItem;
};

} // namespace blkmq
