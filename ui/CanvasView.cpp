#include "CanvasView.h"

#include "Palette.h"
#include "TokenLayer.h"
#include "TopologyScene.h"

#include <QAction>
#include <QLabel>
#include <QToolBar>
#include <QResizeEvent>
#include <QWheelEvent>

namespace blkmq {

CanvasView::CanvasView(TopologyScene* scene, QWidget* parent)
    : QGraphicsView(scene, parent)
    , m_scene(scene)
    , m_legend(new QLabel)
{
    m_legend->setTextFormat(Qt::RichText);
    m_legend->setWordWrap(true);
    setRenderHint(QPainter::Antialiasing);
    setDragMode(QGraphicsView::ScrollHandDrag);
    setMinimumSize(360, 240);
    setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
}

void CanvasView::addActions(QWidget* window, QToolBar* tb)
{
    auto* zoomIn = new QAction(tr("Zoom in"), this);
    zoomIn->setShortcuts({ QKeySequence::ZoomIn, QKeySequence(Qt::CTRL | Qt::Key_Equal) });
    connect(zoomIn, &QAction::triggered, this, [this] { zoomAtCentre(1.25); });
    auto* zoomOut = new QAction(tr("Zoom out"), this);
    zoomOut->setShortcut(QKeySequence::ZoomOut);
    connect(zoomOut, &QAction::triggered, this, [this] { zoomAtCentre(0.8); });
    auto* fitAction = tb->addAction(tr("Fit"), this, &CanvasView::fit);
    fitAction->setShortcut(Qt::Key_F);
    fitAction->setToolTip(tr("Fit the whole machine in the canvas (F); Ctrl+wheel or Ctrl+/Ctrl- zoom"));
    window->addAction(zoomIn);
    window->addAction(zoomOut);
}

void CanvasView::fit()
{
    m_zoomed = false;
    // The scene lays itself out for the room it has (devices beside the CPUs in a wide, low view),
    // then fills it.
    m_scene->setViewSize(QSizeF(viewport()->size()));
    fitInView(m_scene->sceneRect(), Qt::KeepAspectRatio);
    m_scene->setViewScale(transform().m11());
}

void CanvasView::zoom(double factor)
{
    const double next = transform().m11() * factor;
    if (next < 0.05 || next > 20)
        return;
    m_zoomed = true;
    scale(factor, factor);
    m_scene->setViewScale(transform().m11());
}

void CanvasView::zoomAtCentre(double factor)
{
    // A key has no pointer to zoom around: the middle of the view stays where it is.
    setTransformationAnchor(QGraphicsView::AnchorViewCenter);
    zoom(factor);
    setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
}

void CanvasView::saveTo(nlohmann::json& view) const
{
    if (!m_zoomed)
        return;
    const QPointF centre = mapToScene(viewport()->rect().center());
    view["zoom"] = transform().m11();
    view["center"] = { centre.x(), centre.y() };
}

void CanvasView::restore(const nlohmann::json& view)
{
    if (!view.contains("zoom"))
        return;
    const double zoom = view["zoom"].get<double>(); // as it was zoomed, on the same point
    resetTransform();
    scale(zoom, zoom);
    m_zoomed = true;
    m_scene->setViewScale(zoom);
    if (const auto c = view.value("center", nlohmann::json::array()); c.size() == 2)
        centerOn(c[0].get<double>(), c[1].get<double>());
}

void CanvasView::fitToSize()
{
    if (!m_zoomed)
        fit();
}

void CanvasView::resizeEvent(QResizeEvent* event)
{
    QGraphicsView::resizeEvent(event);
    fitToSize(); // the whole machine stays in view until the user zooms
}

bool CanvasView::viewportEvent(QEvent* event)
{
    const bool handled = QGraphicsView::viewportEvent(event);
    if (event->type() == QEvent::Resize) // scroll bars came or went
        fitToSize();
    return handled;
}

void CanvasView::wheelEvent(QWheelEvent* event)
{
    if (event->modifiers() & Qt::ControlModifier) { // F fits it again
        zoom(event->angleDelta().y() > 0 ? 1.25 : 0.8);
        event->accept();
        return;
    }
    QGraphicsView::wheelEvent(event);
}

void CanvasView::refreshLegend(bool lessonOpen)
{
    // Each entry keeps to one line (no break inside "hctx->dispatch"); the lines break between them.
    // Every meaning has a shape or a pattern besides its colour (Palette): the legend shows both.
    QStringList items;
    if (!m_runShown.isEmpty())
        items << tr("<b>canvas: %1</b>").arg(m_runShown.toHtmlEscaped());
    for (int c = 0; c < kExecContexts; ++c) {
        const auto context = static_cast<ExecContext>(c);
        const QString glyph = Palette::contextHatchGlyph(context);
        items << QStringLiteral("<span style='background:%1'>&nbsp;%2%3&nbsp;</span>")
                     .arg(Palette::contextColour(context, false).name(), glyph.isEmpty() ? QString() : glyph + u' ',
                         QString::fromLatin1(execContextName(context)));
    }
    items << QStringLiteral("<span style='background:%1'>&nbsp;idle&nbsp;</span>")
                 .arg(Palette::contextColour(ExecContext::Task, true).name());
    const auto mark = [](Hue hue, const QString& glyph, const QString& what) {
        return QStringLiteral("<span style='color:%1'>%2</span> %3").arg(Palette::of(hue).name(), glyph, what);
    };
    items << tr("requests:");
    for (RqState s : { RqState::Sched, RqState::Dispatch, RqState::AtDevice, RqState::Complete })
        items << QStringLiteral("<span style='color:%1'>%2</span> %3")
                     .arg(TokenLayer::stateColour(s).name(), TokenLayer::shapeGlyph(s),
                         s == RqState::Sched          ? tr("scheduler")
                             : s == RqState::Dispatch ? tr("hctx-&gt;dispatch")
                             : s == RqState::AtDevice ? tr("device")
                                                      : tr("completing"));
    items << mark(Hue::Stuck, QStringLiteral("&#9711;"), tr("stuck")) << mark(Hue::Ipi, QStringLiteral("━●"), tr("IPI"))
          << mark(Hue::Steal, QStringLiteral("╍╍"), tr("tag steal"))
          << mark(Hue::Restart, QStringLiteral("<b>▭</b>"), tr("RESTART set"));
    // The tag maps under the hctxs: one square a tag.
    items << QStringLiteral("<span style='color:%1'>■</span> %2 <span style='color:%3'>■</span> %4")
                 .arg(
                     Palette::of(Hue::TagInUse).name(), tr("tag in use"), Palette::of(Hue::TagFree).name(), tr("free"));
    if (m_scene->perCpuTagCaches())
        items << tr("tag in a CPU's colour: in that CPU's percpu_ida cache") << tr("black tag: lost");
    if (lessonOpen)
        items << mark(Hue::LessonPointer, QStringLiteral("<b>▭</b>"), tr("what the lesson step points at"));
    if (!m_scene->selectedRect().isEmpty())
        items << mark(Hue::Selected, QStringLiteral("┅"), tr("selected"));
    QString inFlight = tr("%1 in flight").arg(m_scene->requestsInFlight());
    if (m_scene->sampled())
        inFlight += tr(" (a sample of %1 drawn)").arg(m_scene->drawnTokens());
    items << inFlight;
    for (QString& item : items)
        item = QStringLiteral("<span style='white-space:nowrap'>%1</span>").arg(item);
    m_legend->setText(items.join(QStringLiteral(" &nbsp; ")));
}

} // namespace blkmq
