#include "TopologyScene.h"

#include "Palette.h"

#include "EventLogModel.h"
#include "TagMapItem.h"
#include "tags/TagRegistry.h"

#include <QGraphicsSceneHelpEvent>
#include <QToolTip>
#include "TokenLayer.h"

#include <QBrush>
#include <QFont>
#include <QFontMetricsF>
#include <QGraphicsRectItem>
#include <QGraphicsSceneMouseEvent>
#include <QGraphicsSimpleTextItem>
#include <QPen>

#include <algorithm>
#include <cmath>
#include <map>

namespace blkmq {

namespace {
// Scene units are pixels at scale 1; every text is kTextPx (kCaptionPx for captions), and the boxes are
// sized for their text at that size: a CPU tile for its name and two lines of figures, an hctx cell
// for three lines.
constexpr double kTextPx = 12, kCaptionPx = 13, kLine = 15;
constexpr double kTileW = 88, kTileH = 1 + 3 * kLine + 3, kGap = 4, kPad = 8, kCaption = 19;
constexpr double kCellW = 104, kCellH = 1 + 3 * kLine + 3, kTagMapH = 36;
constexpr double kDeviceMinW = 272, kGroupBoxMinW = 460;
constexpr int kMaxHctxShown = 32; // per device
constexpr int kHctxPerRow = 16;
constexpr int kMaxDevicesShown = 16; // more are drawn as one box per tag set
constexpr int kMaxTokens = 10000;
constexpr std::int64_t kBusyWindowNs = 50000; // the shortest time a CPU's busy share is over
constexpr double kFrameZ = TokenLayer::kTokenZ - 1; // a lesson's and the selection's frames
} // namespace

QGraphicsSimpleTextItem* TopologyScene::text(QPointF at, const QString& t, TextRole role)
{
    auto* item = addSimpleText(t);
    QFont f = item->font();
    f.setPixelSize(static_cast<int>(role == TextRole::Caption ? kCaptionPx : kTextPx));
    f.setBold(role != TextRole::Body);
    item->setFont(f);
    item->setPos(at);
    item->setZValue(2); // above the IPI arcs, under the tokens
    // Tokens glide over the text every frame: a text is laid out once per change, then blitted.
    item->setCacheMode(QGraphicsItem::DeviceCoordinateCache);
    m_texts.push_back(item);
    return item;
}

double TopologyScene::textWidth(const QString& t, TextRole role)
{
    QFont f;
    f.setPixelSize(static_cast<int>(role == TextRole::Caption ? kCaptionPx : kTextPx));
    f.setBold(role != TextRole::Body);
    return QFontMetricsF(f).horizontalAdvance(t);
}

void TopologyScene::placeCounter(std::size_t d)
{
    // Right-aligned in its device's caption row, at the size it is drawn.
    QGraphicsSimpleTextItem* t = m_queueCounters[d];
    const QRectF box = m_deviceRects[d];
    t->setPos(box.right() - 5 - t->boundingRect().width() * t->scale(), box.top() + 2);
}

void TopologyScene::applyTextScale()
{
    // A text whose font would be drawn under kMinTextPx is drawn larger, from its top left; a caption
    // that ignores the view's scale is drawn at its own size.
    for (QGraphicsSimpleTextItem* t : m_texts) {
        const double px = t->font().pixelSize();
        const bool fixed = t->flags() & QGraphicsItem::ItemIgnoresTransformations;
        const double grow = fixed ? 1.0 : std::max(1.0, kMinTextPx / (px * m_viewScale));
        if (t->scale() != grow)
            t->setScale(grow);
    }
    for (std::size_t d = 0; d < m_queueCounters.size(); ++d)
        if (m_queueCounters[d])
            placeCounter(d);
}

std::vector<std::pair<QString, double>> TopologyScene::shownTexts() const
{
    std::vector<std::pair<QString, double>> out;
    for (const QGraphicsSimpleTextItem* t : m_texts) {
        if (!t->isVisible() || t->text().isEmpty())
            continue;
        const bool fixed = t->flags() & QGraphicsItem::ItemIgnoresTransformations;
        out.emplace_back(t->text(), t->font().pixelSize() * (fixed ? 1.0 : t->scale() * m_viewScale));
    }
    return out;
}

TopologyScene::TopologyScene(QObject* parent)
    : QGraphicsScene(parent)
{
}

TopologyScene::~TopologyScene() = default;

void TopologyScene::build(const Scenario& scenario)
{
    std::vector<DeviceLayout> devices;
    for (const DeviceSpec& spec : scenario.devices) {
        DeviceLayout l;
        l.name = QString::fromStdString(spec.name);
        l.nrHctx = spec.submit_queues;
        l.tagDepth = spec.hw_queue_depth;
        l.firstHctx = devices.empty() ? 0 : devices.back().firstHctx + devices.back().nrHctx;
        l.tagSet = QString::fromStdString(spec.tag_set);
        devices.push_back(l);
    }
    const TagAllocatorInfo* tags = TagRegistry::find(scenario.kernel.tags);
    build(scenario.topology, devices, tags && tags->perCpuCaches);
}

void TopologyScene::build(const Topology& topo, const std::vector<DeviceLayout>& devices, bool perCpuTagCaches)
{
    m_topo = topo;
    m_devices = devices;
    m_perCpuTagCaches = perCpuTagCaches;
    m_highlightRefs.clear();
    m_selectedRef = {};
    m_followed = -1;
    m_snap.reset();
    m_tokens = nullptr; // another machine: no arc of the last one is drawn again (clear() deletes the layer)
    m_arrangement = bestArrangement();
    layout(m_arrangement);
}

double TopologyScene::fitScale() const
{
    const QRectF r = sceneRect();
    if (m_viewSize.isEmpty() || r.isEmpty())
        return 0;
    return std::min(m_viewSize.width() / r.width(), m_viewSize.height() / r.height());
}

TopologyScene::Arrangement TopologyScene::bestArrangement()
{
    if (m_viewSize.isEmpty())
        return {};
    // Each arrangement is laid out and measured: the one drawn largest in the view wins, and the
    // one in place keeps its place unless another is clearly larger (no flapping on small resizes).
    Arrangement best = m_arrangement;
    layout(best);
    double bestScale = fitScale() * 1.05;
    const int nrDevices = static_cast<int>(m_devices.size());
    for (const bool beside : { false, true })
        for (const int perRow : { 0, 1, 2, 4 })
            for (const int columns : { -1, 0, 1, 2 }) {
                const Arrangement a { beside, perRow, columns };
                if (a == m_arrangement || (perRow > 0 && perRow > nrDevices) || (beside && perRow == 0))
                    continue;
                layout(a);
                if (const double s = fitScale(); s > bestScale) {
                    best = a;
                    bestScale = s;
                }
            }
    return best;
}

bool TopologyScene::setViewSize(const QSizeF& size)
{
    if (size == m_viewSize || m_topo.nrCpus() == 0) {
        m_viewSize = size;
        return false;
    }
    m_viewSize = size;
    const Arrangement was = m_arrangement;
    m_arrangement = bestArrangement();
    layout(m_arrangement); // bestArrangement() left the last one it tried
    // The frames, the selection, the followed token and the figures come back on the new layout.
    const std::vector<ObjectRef> highlights = m_highlightRefs;
    setHighlights(highlights);
    setSelected(m_selectedRef);
    setFollowed(m_followed);
    if (m_snap) {
        update(m_snap, {}, 0, true, false);
        settle();
    }
    return !(m_arrangement == was);
}

void TopologyScene::layout(const Arrangement& arrangement)
{
    const Topology& topo = m_topo;
    const std::vector<DeviceLayout>& devices = m_devices;
    const bool perCpuTagCaches = m_perCpuTagCaches;
    // The arcs still drawn are drawn again on the new layout (a step's IPI outlives a resize).
    const std::vector<TokenLayer::Arc> arcs = m_tokens ? m_tokens->arcList() : std::vector<TokenLayer::Arc>();
    clear();
    m_texts.clear();
    m_groups.clear();
    m_cacheDots.clear(); // clear() deleted them
    m_highlights.clear();
    m_selected = nullptr;
    m_tokens = nullptr;
    m_detail = true;
    // A machine too big to read tile by tile at the view's size (level of detail applies).
    m_big = topo.nrCpus() > 16 || devices.size() > 4;
    m_cpus.assign(static_cast<std::size_t>(topo.nrCpus()), {});
    m_lastBusy.assign(static_cast<std::size_t>(topo.nrCpus()) * kExecContexts, 0);
    m_lastNow = 0;
    // node -> llc -> core -> cpus, in kernel numbering order
    std::map<int, std::map<int, std::map<int, std::vector<int>>>> tree;
    for (int c = 0; c < topo.nrCpus(); ++c)
        tree[topo.cpu(c).node][topo.cpu(c).llc][topo.cpu(c).core].push_back(c);

    const QPen framePen(QColor(0x7f, 0x8c, 0x8d), 1);
    double x = 0;
    double maxY = 0;
    double widest = 0;
    // Many nodes wrap into a grid (a 4-socket machine as 2x2), so the canvas stays near the view's shape.
    const int nodesPerRow = tree.size() <= 2 ? static_cast<int>(tree.size())
                                             : static_cast<int>(std::ceil(std::sqrt(static_cast<double>(tree.size()))));
    double nodeY = 0;
    int nodeIndex = 0;
    for (auto& [node, llcs] : tree) {
        if (nodeIndex > 0 && nodeIndex % nodesPerRow == 0) {
            x = 0;
            nodeY = maxY + 2 * kPad;
        }
        ++nodeIndex;
        const double nodeX = x;
        double llcX = nodeX + kPad;
        double nodeH = 0;
        for (auto& [llc, cores] : llcs) {
            const int threads = static_cast<int>(cores.begin()->second.size());
            const int nCores = static_cast<int>(cores.size());
            const int square = std::max(1, static_cast<int>(std::ceil(std::sqrt(nCores * 1.6 / threads))));
            const int cols = std::clamp(square + arrangement.llcColumns, 1, nCores);
            const double coreW = threads * (kTileW + kGap) + kGap;
            const double coreH = kTileH + 2 * kGap;
            const int rows = (nCores + cols - 1) / cols;
            const double llcW = cols * (coreW + kGap) + kGap;
            const double llcH = kCaption + rows * (coreH + kGap) + kGap;
            auto* llcBox
                = addRect(llcX, nodeY + kCaption + kPad, llcW, llcH, framePen, QBrush(QColor(0xfd, 0xfe, 0xfe)));
            llcBox->setZValue(-2);
            Group llcGroup;
            llcGroup.name = QStringLiteral("LLC %1").arg(llc);
            llcGroup.llc = true;
            llcGroup.caption = text(QPointF(llcX + 4, nodeY + kCaption + kPad + 1), llcGroup.name);
            for (const auto& [core, cpus] : cores)
                llcGroup.members.insert(llcGroup.members.end(), cpus.begin(), cpus.end());
            m_groups.push_back(std::move(llcGroup));
            int k = 0;
            for (auto& [core, cpus] : cores) {
                const double cx = llcX + kGap + (k % cols) * (coreW + kGap);
                const double cy = nodeY + kCaption + kPad + kCaption + (k / cols) * (coreH + kGap);
                auto* coreBox
                    = addRect(cx, cy, coreW, coreH, QPen(QColor(0xbd, 0xc3, 0xc7)), QBrush(QColor(0xf4, 0xf6, 0xf6)));
                coreBox->setZValue(-1);
                for (std::size_t t = 0; t < cpus.size(); ++t) {
                    const int cpu = cpus[t];
                    CpuTile tile;
                    tile.rect = addRect(cx + kGap + static_cast<double>(t) * (kTileW + kGap), cy + kGap, kTileW, kTileH,
                        QPen(QColor(0x95, 0xa5, 0xa6)), Palette::contextBrush(ExecContext::Task, true));
                    tile.rect->setData(0, cpu);
                    tile.label = text(
                        tile.rect->rect().topLeft() + QPointF(4, 1), QStringLiteral("CPU %1").arg(cpu), TextRole::Name);
                    tile.detail = text(tile.rect->rect().topLeft() + QPointF(4, 1 + kLine), QString());
                    if (perCpuTagCaches) { // the colour its cached tags have in the tag maps
                        const QRectF tr = tile.rect->rect();
                        auto* dot = addRect(tr.right() - 11, tr.top() + 3, 8, 8, QPen(Qt::white, 0.5),
                            QBrush(Palette::cacheColour(cpu)));
                        dot->setZValue(1);
                        dot->setData(0, cpu);
                        m_cacheDots.push_back(dot);
                    }
                    m_cpus[static_cast<std::size_t>(cpu)] = tile;
                }
                ++k;
            }
            llcX += llcW + kGap;
            nodeH = std::max(nodeH, llcH);
        }
        // As wide as its caption at its longest ("node 0: CPUs 0-1, 100% busy").
        const double nodeW = std::max(llcX - nodeX + kPad - kGap,
            textWidth(QStringLiteral("node %1: CPUs %2, 100% busy").arg(node).arg(QString(8, u'0')), TextRole::Caption)
                + 14);
        auto* nodeBox = addRect(
            nodeX, nodeY, nodeW, nodeH + kCaption + 2 * kPad, QPen(QColor(0x34, 0x49, 0x5e), 1.5), Qt::NoBrush);
        nodeBox->setZValue(-3);
        Group nodeGroup;
        nodeGroup.name = QStringLiteral("node %1").arg(node);
        nodeGroup.always = true;
        nodeGroup.caption = text(QPointF(nodeX + 6, nodeY + 1), nodeGroup.name, TextRole::Caption);
        for (const auto& [llc, cores] : llcs)
            for (const auto& [core, cpus] : cores)
                nodeGroup.members.insert(nodeGroup.members.end(), cpus.begin(), cpus.end());
        m_groups.push_back(std::move(nodeGroup));
        x += nodeW + 2 * kPad;
        widest = std::max(widest, x - 2 * kPad);
        maxY = std::max(maxY, nodeY + nodeH + kCaption + 2 * kPad);
    }

    // Devices and their hctxs: below the CPUs, in rows as wide as the CPUs, or beside them, in a column.
    int totalHctx = 0;
    for (const auto& d : devices)
        totalHctx = std::max(totalHctx, d.firstHctx + d.nrHctx);
    m_hctxs.assign(static_cast<std::size_t>(totalHctx), {});
    m_queueCounters.assign(devices.size(), nullptr);
    m_hctxDevice.assign(static_cast<std::size_t>(totalHctx), -1);
    m_deviceRects.assign(devices.size(), QRectF());
    const bool aggregated = devices.size() > static_cast<std::size_t>(kMaxDevicesShown);
    const auto deviceWidth = [&](const DeviceLayout& d) { // room for its name and its queue's counter
        const int shown = std::min(d.nrHctx, kMaxHctxShown);
        const int perRow = std::max(1, std::min(shown, kHctxPerRow));
        // Text drawn a little under kMinTextPx grows: room for a fifth more.
        const double caption = 1.2
            * (textWidth(d.name, TextRole::Caption) + 24
                + textWidth(QStringLiteral("shared_hctx_restart = 000"), TextRole::Name));
        return std::max({ kDeviceMinW, caption, perRow * (kCellW + kGap) + kGap + (d.nrHctx > shown ? 50 : 0) });
    };
    double devicesW = 0; // the widest device: a column beside the CPUs is that wide
    for (const auto& d : devices)
        devicesW = std::max(devicesW, aggregated ? kGroupBoxMinW : deviceWidth(d));
    // A shared tag set's frame and its caption sit around the devices.
    const double x0 = arrangement.devicesBeside ? widest + 24 + 6 : 0;
    const double y0 = arrangement.devicesBeside ? kLine + 6 : maxY + 24 + kLine;
    const double rowEnd = arrangement.deviceColumns > 0 ? x0 + arrangement.deviceColumns * (devicesW + 12) - 12
                                                        : std::max(widest, devicesW);
    double dy = y0;
    double dx = x0;
    const double rowH = kCellH + kTagMapH + 8;
    double rowMaxH = 0; // of the row of devices being laid out
    // Many devices (128 IBNBD queues) are drawn as one box per tag set, with their totals.
    if (aggregated)
        layoutDeviceGroups(devices, QPointF(x0, y0), rowEnd - x0);
    for (std::size_t d = 0; d < devices.size(); ++d) {
        for (int i = 0; i < devices[d].nrHctx; ++i)
            m_hctxDevice[static_cast<std::size_t>(devices[d].firstHctx + i)] = static_cast<int>(d);
        if (aggregated)
            continue;
        // The hctxs in rows of at most kHctxPerRow, so a 32-queue device is not one long strip.
        const int shown = std::min(devices[d].nrHctx, kMaxHctxShown);
        const int perRow = std::max(1, std::min(shown, kHctxPerRow));
        const int hctxRows = (shown + perRow - 1) / perRow;
        const double devW = deviceWidth(devices[d]);
        // Under the hctxs and their tag maps: "at the device" and five rows of tokens.
        const double devH = kCaption + 4 + hctxRows * rowH + kLine + 38;
        if (dx + devW > rowEnd + 0.5 && dx > x0) {
            dx = x0;
            dy += rowMaxH + 12;
            rowMaxH = 0;
        }
        rowMaxH = std::max(rowMaxH, devH);
        const QRectF r(dx, dy, devW, devH);
        m_deviceRects[d] = r;
        addRect(r, QPen(QColor(0x34, 0x49, 0x5e), 1.2), QBrush(QColor(0xf8, 0xf9, 0xf9)))->setZValue(-3);
        Group devGroup;
        devGroup.name = devices[d].name;
        devGroup.device = true;
        devGroup.caption = text(r.topLeft() + QPointF(5, 1), devices[d].name, TextRole::Caption);
        for (int i = 0; i < devices[d].nrHctx; ++i)
            devGroup.members.push_back(devices[d].firstHctx + i);
        m_groups.push_back(std::move(devGroup));
        const bool shared
            = !devices[d].tagSet.isEmpty() && std::count_if(devices.begin(), devices.end(), [&](const DeviceLayout& o) {
                  return o.tagSet == devices[d].tagSet;
              }) > 1;
        if (shared) // the queue's counter of marked hctxs (8e8320c9315c), which the stall turns on: right-aligned
            m_queueCounters[d] = text(QPointF(r.right() - 5, r.top() + 1), QString(), TextRole::Name);
        for (int i = 0; i < shown; ++i) {
            HctxCell cell;
            cell.rect = addRect(r.left() + kGap + (i % perRow) * (kCellW + kGap),
                r.top() + kCaption + 4 + (i / perRow) * rowH, kCellW, kCellH, QPen(QColor(0x7f, 0x8c, 0x8d)),
                QBrush(Qt::white));
            cell.rect->setData(1, devices[d].firstHctx + i);
            cell.label = text(cell.rect->rect().topLeft() + QPointF(3, 1), QStringLiteral("hctx %1").arg(i));
            if (devices[d].tagDepth > 0 && devices[d].tagDepth <= 4096) {
                cell.tags
                    = new TagMapItem(QRectF(cell.rect->rect().left(), cell.rect->rect().bottom() + 3, kCellW, kTagMapH),
                        devices[d].tagDepth);
                addItem(cell.tags);
            }
            m_hctxs[static_cast<std::size_t>(devices[d].firstHctx + i)] = cell;
        }
        if (devices[d].nrHctx > shown)
            text(QPointF(r.left() + kGap + perRow * (kCellW + kGap), r.top() + kCaption + 10),
                QStringLiteral("+%1").arg(devices[d].nrHctx - shown));
        text(QPointF(r.left() + 5, r.bottom() - 38 - kLine), QStringLiteral("at the device"));
        dx += devW + 12;
    }
    // A shared tag set: one dashed frame around the queues that share it.
    std::map<QString, QRectF> sets;
    std::map<QString, int> members;
    for (std::size_t d = 0; d < devices.size(); ++d)
        if (!devices[d].tagSet.isEmpty() && m_deviceRects[d].isValid()) {
            sets[devices[d].tagSet] = sets[devices[d].tagSet].united(m_deviceRects[d]);
            ++members[devices[d].tagSet];
        }
    for (const auto& [name, rect] : sets) {
        if (members[name] < 2)
            continue;
        const QString caption = QStringLiteral("tag set '%1': driver tags shared by these queues").arg(name);
        QRectF frame = rect.adjusted(-6, -kLine - 6, 6, 6);
        frame.setWidth(std::max(frame.width(), textWidth(caption, TextRole::Name) + 12));
        addRect(frame, QPen(QColor(0x7d, 0x3c, 0x98), 1.5, Qt::DashLine), Qt::NoBrush)->setZValue(-4);
        text(frame.topLeft() + QPointF(6, 1), caption, TextRole::Name)->setBrush(QColor(0x7d, 0x3c, 0x98));
    }
    // Room for the IPI arcs over the top row and the tokens under the bottom one.
    const QRectF bounds = itemsBoundingRect().adjusted(-10, -14, 10, 14);
    m_tokens = new TokenLayer(bounds);
    addItem(m_tokens);
    addItem(m_tokens->arcs());
    const auto nrCpus = static_cast<int>(m_cpus.size());
    for (TokenLayer::Arc a : arcs)
        if (a.fromCpu >= 0 && a.toCpu >= 0 && a.fromCpu < nrCpus && a.toCpu < nrCpus) {
            const bool top = a.kind == TokenLayer::ArcKind::Ipi;
            a.from = cpuEdge(a.fromCpu, top);
            a.to = cpuEdge(a.toCpu, top);
            m_tokens->keepArc(a);
        }
    setSceneRect(bounds);
    applyTextScale();
}

QPointF TopologyScene::cpuCenter(int cpu) const
{
    const auto& t = m_cpus[static_cast<std::size_t>(cpu)];
    return t.rect ? t.rect->rect().center() : QPointF();
}

QPointF TopologyScene::cpuEdge(int cpu, bool top) const
{
    const auto& t = m_cpus[static_cast<std::size_t>(cpu)];
    if (!t.rect)
        return {};
    const QRectF r = t.rect->rect();
    return top ? QPointF(r.center().x(), r.top()) : QPointF(r.center().x(), r.bottom());
}

QPointF TopologyScene::hctxCenter(int hctx) const
{
    const auto& c = m_hctxs[static_cast<std::size_t>(hctx)];
    if (c.rect)
        return c.rect->rect().center();
    const int d = m_hctxDevice[static_cast<std::size_t>(hctx)];
    return d >= 0 && m_deviceRects[static_cast<std::size_t>(d)].isValid()
        ? m_deviceRects[static_cast<std::size_t>(d)].center()
        : QPointF();
}

int TopologyScene::drawnTokens() const { return m_tokens ? m_tokens->size() : 0; }

void TopologyScene::update(const std::shared_ptr<const Snapshot>& shared, const std::vector<TraceRecord>& trace,
    double frameMs, bool figures, bool playing)
{
    m_snap = shared;
    const Snapshot& snap = *shared;
    // A busy share is over at least kBusyWindowNs of simulated time: over one stepped event a CPU in
    // the middle of its action read 0% busy. Gone back in the run: the share since t = 0 first.
    if (snap.now.ns() < m_lastNow) {
        m_lastNow = 0;
        std::fill(m_lastBusy.begin(), m_lastBusy.end(), 0);
    }
    const double dt = figures ? static_cast<double>(snap.now.ns() - m_lastNow) : 0.0;
    const bool windowDone = snap.now.ns() - m_lastNow >= kBusyWindowNs; // the next share starts here
    m_busyShare.resize(m_cpus.size());
    for (std::size_t c = 0; c < m_cpus.size() && c < snap.cpus.size(); ++c)
        m_cpus[c].rect->setBrush(Palette::contextBrush(snap.cpus[c].running, snap.cpus[c].idle));
    for (std::size_t c = 0; dt > 0 && c < m_cpus.size() && c < snap.cpus.size(); ++c) {
        const CpuSnapshot& s = snap.cpus[c];
        CpuTile& tile = m_cpus[c];
        std::int64_t busy = 0;
        for (int k = 0; k < kExecContexts; ++k) {
            const auto idx = c * kExecContexts + static_cast<std::size_t>(k);
            busy += s.busy_ns[static_cast<std::size_t>(k)] - m_lastBusy[idx];
            if (windowDone)
                m_lastBusy[idx] = s.busy_ns[static_cast<std::size_t>(k)];
        }
        m_busyShare[c] = std::min(1.0, static_cast<double>(busy) / dt);
        QString detail = QStringLiteral("%1% busy").arg(100.0 * m_busyShare[c], 0, 'f', 0);
        QStringList extra;
        if (s.softirqPending)
            extra << QStringLiteral("sirq %1").arg(s.softirqPending, 0, 16);
        if (s.doneListLen)
            extra << QStringLiteral("done %1").arg(s.doneListLen);
        if (s.callSingleLen)
            extra << QStringLiteral("csd %1").arg(s.callSingleLen);
        if (!extra.isEmpty())
            detail += QLatin1Char('\n') + extra.join(QLatin1Char(' '));
        tile.detail->setText(detail);
    }
    if (dt > 0 && windowDone)
        m_lastNow = snap.now.ns();
    updateGroups(snap, dt > 0);
    for (std::size_t h = 0; h < m_hctxs.size() && h < snap.hctxs.size(); ++h) {
        HctxCell& cell = m_hctxs[h];
        if (!cell.rect)
            continue;
        const HctxSnapshot& s = snap.hctxs[h];
        cell.rect->setPen(s.restart ? QPen(Palette::of(Hue::Restart), 2.5) : QPen(QColor(0x7f, 0x8c, 0x8d), 1));
        if (cell.tags && static_cast<std::size_t>(s.tags) < snap.tagMaps.size())
            cell.tags->setMap(snap.tagMaps[static_cast<std::size_t>(s.tags)]);
        if (figures)
            cell.label->setText(QStringLiteral("hctx %1\ndisp %2 sch %3\ntags %4/%5")
                                    .arg(s.index)
                                    .arg(s.dispatchLen)
                                    .arg(s.schedLen)
                                    .arg(s.tagsInUse)
                                    .arg(s.tagDepth));
    }
    for (std::size_t d = 0; d < m_queueCounters.size() && d < snap.queueRestartCounters.size(); ++d)
        if (m_queueCounters[d]) {
            const int n = snap.queueRestartCounters[d];
            m_queueCounters[d]->setText(QStringLiteral("shared_hctx_restart = %1").arg(n));
            placeCounter(d);
            m_queueCounters[d]->setBrush(n > 0 ? Palette::of(Hue::Restart) : QColor(0x2c, 0x3e, 0x50));
        }
    // Tokens: a sample when there are too many to draw.
    const std::size_t stride = snap.requests.size() > static_cast<std::size_t>(kMaxTokens)
        ? (snap.requests.size() + kMaxTokens - 1) / kMaxTokens
        : 1;
    std::vector<TokenLayer::Token> tokens;
    std::vector<QPointF> origins;
    tokens.reserve(snap.requests.size() / stride + 1);
    origins.reserve(snap.requests.size() / stride + 1);
    // Tokens so far per place: each hctx's scheduler and dispatch rows, each device, each CPU.
    const std::size_t nrHctx = m_hctxDevice.size(), nrDev = m_deviceRects.size();
    std::vector<int> perPlace(2 * nrHctx + nrDev + m_cpus.size(), 0);
    const bool labelled = snap.requests.size() <= TokenLayer::kLabelledTokens || !m_scriptIds.isEmpty();
    for (std::size_t i = 0; i < snap.requests.size(); i += stride) {
        const RequestSnapshot& r = snap.requests[i];
        TokenLayer::Token t;
        t.id = r.id;
        t.state = r.state;
        t.stuck = r.stuck;
        t.cpu = r.cpu;
        // The request's one name, short: its script id, or #slot (EventLogModel::requestName).
        if (labelled) // else not drawn: no string per token per frame
            t.label = EventLogModel::shortName(r.id, r.script, m_scriptIds);
        QPointF base;
        int place = 0;
        switch (r.state) {
        case RqState::Sched: // on the top row of the hctx's tag map, left and right of the middle
        case RqState::Dispatch: {
            const bool sched = r.state == RqState::Sched;
            place = 2 * r.hctx + (sched ? 0 : 1);
            if (m_hctxs[static_cast<std::size_t>(r.hctx)].rect) {
                base = hctxCenter(r.hctx) + QPointF(sched ? -10 : 10, kCellH / 2 + 5);
                break;
            }
            // A box of many devices: a row of the waiting under its two-line caption, the
            // scheduler's from the left, hctx->dispatch's from the middle.
            const int d = m_hctxDevice[static_cast<std::size_t>(r.hctx)];
            const QRectF dr = d >= 0 ? m_deviceRects[static_cast<std::size_t>(d)] : QRectF();
            base = QPointF(dr.left() + (sched ? 10 : dr.width() / 2), dr.top() + kCaption + 2 * kLine + 14);
            place = static_cast<int>(2 * std::max(d, 0)) + (sched ? 0 : 1); // one place per box
            break;
        }
        case RqState::AtDevice: {
            const int d = m_hctxDevice[static_cast<std::size_t>(r.hctx)];
            const QRectF dr = d >= 0 ? m_deviceRects[static_cast<std::size_t>(d)] : QRectF();
            base = dr.isValid() ? QPointF(dr.left() + 10, dr.bottom() - 34) : hctxCenter(r.hctx);
            place = static_cast<int>(2 * nrHctx) + std::max(d, 0);
            break;
        }
        case RqState::Complete:
        case RqState::Free: {
            // On the CPU whose queue holds it: the vector's CPU, then (by IPI) the submitter.
            // Along the tile's bottom edge, clear of its text.
            const int cpu = r.atCpu >= 0 ? r.atCpu : r.cpu;
            base = cpuEdge(cpu, false) + QPointF(-kTileW / 2 + 6, 0);
            place = static_cast<int>(2 * nrHctx + nrDev) + cpu;
            break;
        }
        }
        // Spread tokens sharing a place into a small grid; named ones (TokenLayer::kLabelledTokens)
        // leave room for the name to the right of each.
        const int n = perPlace[static_cast<std::size_t>(place)]++;
        const double dx = labelled ? 32.0 : 7.0;
        int cols = labelled ? 3 : 6;
        if (r.state == RqState::AtDevice) {
            const int d = m_hctxDevice[static_cast<std::size_t>(r.hctx)];
            const QRectF dr = d >= 0 ? m_deviceRects[static_cast<std::size_t>(d)] : QRectF();
            cols = dr.isValid() ? std::max(4, static_cast<int>((dr.width() - 16) / dx)) : 16;
        }
        // On a CPU, one row along the tile's bottom edge (two for named tokens): more would cover the
        // tile below; the tile's text says how many are there.
        const bool boxed = (r.state == RqState::Sched || r.state == RqState::Dispatch)
            && !m_hctxs[static_cast<std::size_t>(r.hctx)].rect;
        if (boxed)
            cols = std::max(4,
                static_cast<int>(
                    m_deviceRects[static_cast<std::size_t>(std::max(0, m_hctxDevice[static_cast<std::size_t>(r.hctx)]))]
                            .width()
                        / 2
                    - 20)
                    / static_cast<int>(dx));
        const int rows = r.state == RqState::Complete || r.state == RqState::Free ? (labelled ? 2 : 1) : boxed ? 2 : 5;
        t.target = base + QPointF((n % cols) * dx, (n / cols % rows) * 7.0);
        tokens.push_back(t);
        origins.push_back(cpuCenter(r.cpu));
    }
    m_tokens->setTargets(tokens, origins);
    m_sampled = stride > 1;
    m_inFlight = static_cast<int>(snap.requests.size());
    for (const auto& rec : trace) {
        const bool toCpu = rec.cpu >= 0 && rec.arg >= 0 && static_cast<std::size_t>(rec.arg) < m_cpus.size();
        // From tile edge to tile edge, bowing away from the tiles' labels: IPIs over the top, steals
        // under the bottom.
        if (rec.kind == TraceKind::IpiSend && toCpu)
            m_tokens->addArc(
                cpuEdge(rec.cpu, true), cpuEdge(rec.arg, true), TokenLayer::ArcKind::Ipi, rec.cpu, rec.arg);
        else if (rec.kind == TraceKind::TagSteal && toCpu && rec.arg != rec.cpu)
            m_tokens->addArc(
                cpuEdge(rec.arg, false), cpuEdge(rec.cpu, false), TokenLayer::ArcKind::Steal, rec.arg, rec.cpu);
    }
    const bool stepped = snap.now.ns() != m_arcsNow;
    m_arcsNow = snap.now.ns();
    m_tokens->advance(frameMs,
        playing       ? TokenLayer::ArcClock::Playing
            : stepped ? TokenLayer::ArcClock::Stepped
                      : TokenLayer::ArcClock::Paused);
}

int TopologyScene::requestsInFlight() const { return m_inFlight; }

bool TopologyScene::sampled() const { return m_sampled; }

void TopologyScene::setFollowed(int request)
{
    m_followed = request;
    if (m_tokens)
        m_tokens->setFollowed(request);
}

QRectF TopologyScene::rectOf(const ObjectRef& object) const
{
    const auto i = static_cast<std::size_t>(object.index);
    switch (object.kind) {
    case ObjectRef::Kind::Cpu:
        return i < m_cpus.size() && m_cpus[i].rect ? m_cpus[i].rect->rect() : QRectF();
    case ObjectRef::Kind::Hctx:
        return i < m_hctxs.size() && m_hctxs[i].rect ? m_hctxs[i].rect->rect() : QRectF();
    case ObjectRef::Kind::Tags:
        return i < m_hctxs.size() && m_hctxs[i].tags ? m_hctxs[i].tags->boundingRect() : QRectF();
    case ObjectRef::Kind::Queue:
        return i < m_deviceRects.size() ? m_deviceRects[i] : QRectF();
    case ObjectRef::Kind::Request: // its token, which moves
    case ObjectRef::Kind::None:
        break;
    }
    return {};
}

void TopologyScene::setHighlights(const std::vector<ObjectRef>& highlights)
{
    for (QGraphicsItem* item : m_highlights) {
        removeItem(item);
        delete item;
    }
    m_highlights.clear();
    m_highlightRefs = highlights;
    for (const ObjectRef& h : highlights) {
        const QRectF r = rectOf(h);
        if (!r.isValid())
            continue;
        auto* item = addRect(r.adjusted(-4, -4, 4, 4), QPen(Palette::of(Hue::LessonPointer), 3.5), Qt::NoBrush);
        item->setZValue(kFrameZ); // over the boxes and their text, under the tokens and their names
        m_highlights.push_back(item);
    }
}

void TopologyScene::setSelected(const ObjectRef& object)
{
    m_selectedRef = object;
    const QRectF r = rectOf(object);
    if (!r.isValid()) {
        delete m_selected;
        m_selected = nullptr;
        return;
    }
    if (!m_selected) {
        m_selected = addRect(QRectF(), QPen(Palette::of(Hue::Selected), 3, Qt::DashLine), Qt::NoBrush);
        m_selected->setZValue(kFrameZ - 0.5);
    }
    m_selected->setRect(r.adjusted(-2, -2, 2, 2));
}

void TopologyScene::applyPalette()
{
    for (QGraphicsRectItem* h : m_highlights)
        h->setPen(QPen(Palette::of(Hue::LessonPointer), 3.5));
    if (m_selected)
        m_selected->setPen(QPen(Palette::of(Hue::Selected), 3, Qt::DashLine));
    for (QGraphicsRectItem* dot : m_cacheDots)
        dot->setBrush(Palette::cacheColour(dot->data(0).toInt()));
}

QRectF TopologyScene::selectedRect() const { return m_selected ? m_selected->rect() : QRectF(); }

void TopologyScene::settle()
{
    if (m_tokens)
        m_tokens->settle();
}

bool TopologyScene::draws(const ObjectRef& object) const
{
    if (object.kind == ObjectRef::Kind::Request)
        return m_tokens && m_tokens->hasToken(object.index);
    return rectOf(object).isValid();
}

bool TopologyScene::drawsIpiArc(int fromCpu, int toCpu) const
{
    const auto n = static_cast<int>(m_cpus.size());
    return m_tokens && fromCpu >= 0 && toCpu >= 0 && fromCpu < n && toCpu < n
        && m_tokens->hasArc(cpuEdge(fromCpu, true), cpuEdge(toCpu, true), TokenLayer::ArcKind::Ipi);
}

bool TopologyScene::animating() const { return m_tokens && m_tokens->animating(); }

ObjectRef TopologyScene::selectionAt(const QPointF& p) const
{
    if (m_tokens) {
        if (const auto* t = m_tokens->tokenAt(p))
            return { ObjectRef::Kind::Request, t->id };
    }
    for (std::size_t c = 0; c < m_cpus.size(); ++c)
        if (m_cpus[c].rect && m_cpus[c].rect->rect().contains(p))
            return { ObjectRef::Kind::Cpu, static_cast<int>(c) };
    for (std::size_t h = 0; h < m_hctxs.size(); ++h) {
        if (m_hctxs[h].rect && m_hctxs[h].rect->rect().contains(p))
            return { ObjectRef::Kind::Hctx, static_cast<int>(h) };
        if (m_hctxs[h].tags && m_hctxs[h].tags->boundingRect().contains(p))
            return { ObjectRef::Kind::Tags, static_cast<int>(h) };
    }
    return {};
}

void TopologyScene::layoutDeviceGroups(const std::vector<DeviceLayout>& devices, QPointF at, double width)
{
    // One box per tag set (devices with tags of their own share one box too), in the order met.
    std::vector<QString> order;
    std::map<QString, std::vector<std::size_t>> bySet;
    for (std::size_t d = 0; d < devices.size(); ++d) {
        auto [it, fresh] = bySet.try_emplace(devices[d].tagSet);
        if (fresh)
            order.push_back(devices[d].tagSet);
        it->second.push_back(d);
    }
    // As wide as the room (up to 900), so the counts line fits at its longest ("8192 waiting, 8192 at
    // the device, RESTART set on 8192 hctx").
    // Under the two-line caption: two rows of waiting tokens, "at the device" and five rows of tokens.
    const double boxW = std::max(kGroupBoxMinW, std::min(width, 900.0)), boxH = kCaption + 2 * kLine + 26 + kLine + 38;
    double x = at.x(), y = at.y();
    for (const QString& set : order) {
        const auto& members = bySet[set];
        if (x + boxW > at.x() + width + 0.5 && x > at.x()) {
            x = at.x();
            y += boxH + 12;
        }
        const QRectF r(x, y, boxW, boxH);
        addRect(r, QPen(QColor(0x34, 0x49, 0x5e), 1.2), QBrush(QColor(0xf8, 0xf9, 0xf9)))->setZValue(-3);
        Group g;
        int hctxs = 0;
        for (const std::size_t d : members) {
            m_deviceRects[d] = r;
            hctxs += devices[d].nrHctx;
            for (int i = 0; i < devices[d].nrHctx; ++i)
                g.members.push_back(devices[d].firstHctx + i);
        }
        g.name = QStringLiteral("%1 devices, %2 to %3 (%4 hctx)")
                     .arg(members.size())
                     .arg(devices[members.front()].name, devices[members.back()].name)
                     .arg(hctxs);
        g.device = true;
        g.always = true;
        g.caption = text(r.topLeft() + QPointF(5, 1), g.name, TextRole::Caption);
        m_groups.push_back(std::move(g));
        text(QPointF(r.left() + 5, r.bottom() - 38 - kLine), QStringLiteral("at the device"));
        x += boxW + 12;
    }
}

void TopologyScene::updateGroups(const Snapshot& snap, bool busyChanged)
{
    for (Group& g : m_groups) {
        if (!g.caption)
            continue;
        QString text;
        if (!g.device) {
            if (!busyChanged) {
                showCaption(g);
                continue;
            }
            double busy = 0;
            for (const int c : g.members)
                busy += static_cast<std::size_t>(c) < m_busyShare.size() ? m_busyShare[static_cast<std::size_t>(c)] : 0;
            const double pct = g.members.empty() ? 0.0 : 100.0 * busy / static_cast<double>(g.members.size());
            text = QStringLiteral("%1: CPUs %2, %3% busy").arg(g.name, cpuRange(g.members)).arg(pct, 0, 'f', 0);
            g.compact = QStringLiteral("%1\n%2 CPUs, %3% busy").arg(g.name).arg(g.members.size()).arg(pct, 0, 'f', 0);
        } else {
            int waiting = 0, atDevice = 0, restart = 0;
            for (const int h : g.members)
                if (static_cast<std::size_t>(h) < snap.hctxs.size()) {
                    const HctxSnapshot& hs = snap.hctxs[static_cast<std::size_t>(h)];
                    waiting += hs.dispatchLen + hs.schedLen;
                    atDevice += hs.atDevice;
                    restart += hs.restart;
                }
            QString counts = QStringLiteral("%1 waiting, %2 at the device").arg(waiting).arg(atDevice);
            if (restart > 0)
                counts += QStringLiteral(", RESTART set on %1 hctx").arg(restart);
            text = g.always ? QString(g.name + QLatin1Char('\n') + counts)
                            : QString(QStringLiteral("%1: %2 hctx, ").arg(g.name).arg(g.members.size()) + counts);
        }
        g.aggregate = text;
        showCaption(g);
    }
}

void TopologyScene::showCaption(Group& g)
{
    g.caption->setVisible(m_detail || !g.llc);
    const QString& aggregate = !m_detail && !g.compact.isEmpty() ? g.compact : g.aggregate;
    const QString& text = g.always || !m_detail ? (aggregate.isEmpty() ? g.name : aggregate) : g.name;
    if (text != g.caption->text())
        g.caption->setText(text);
}

QString TopologyScene::cpuRange(const std::vector<int>& cpus)
{
    // "0-19" or "0-9,40-49": runs of consecutive numbers.
    std::vector<int> sorted = cpus;
    std::sort(sorted.begin(), sorted.end());
    QStringList runs;
    for (std::size_t i = 0; i < sorted.size();) {
        std::size_t j = i;
        while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1)
            ++j;
        runs << (j == i ? QString::number(sorted[i]) : QStringLiteral("%1-%2").arg(sorted[i]).arg(sorted[j]));
        i = j + 1;
    }
    return runs.join(QLatin1Char(','));
}

void TopologyScene::setViewScale(double scale)
{
    m_viewScale = scale;
    // On a big machine a tile's own text shows while it need not grow much past its size to be
    // readable; below, the tiles are a heat map of their contexts and the captions, at a fixed
    // readable size, carry the numbers. A small machine keeps its text, grown to kMinTextPx.
    const bool detail = !m_big || kMinTextPx / (kTextPx * scale) <= 1.25;
    if (detail != m_detail) {
        m_detail = detail;
        std::vector<const QGraphicsSimpleTextItem*> captions;
        for (Group& g : m_groups)
            if (g.caption) {
                g.caption->setFlag(QGraphicsItem::ItemIgnoresTransformations, !detail);
                captions.push_back(g.caption);
            }
        for (QGraphicsSimpleTextItem* t : m_texts)
            if (std::find(captions.begin(), captions.end(), t) == captions.end())
                t->setVisible(detail);
        for (Group& g : m_groups)
            if (g.caption)
                showCaption(g);
    }
    applyTextScale();
}

QStringList TopologyScene::captions() const
{
    QStringList out;
    for (const Group& g : m_groups)
        if (g.caption)
            out << g.caption->text();
    return out;
}

QString TopologyScene::tagInfoAt(const QPointF& p) const
{
    for (std::size_t h = 0; h < m_hctxs.size(); ++h) {
        const TagMapItem* map = m_hctxs[h].tags;
        if (!map || !map->sceneBoundingRect().contains(p))
            continue;
        const int tag = map->tagAt(p);
        if (tag < 0)
            return {};
        if (!m_snap || h >= m_snap->hctxs.size())
            return {};
        const auto& hctxs = m_snap->hctxs;
        const int mapIndex = hctxs[h].tags;
        QString info = QStringLiteral("tag %1: ").arg(tag);
        switch (const int v = map->state(tag)) {
        case kTagFree:
            return info + QStringLiteral("free");
        case kTagLost:
            return info + QStringLiteral("lost: neither free nor in use again (ida-lock-split's race)");
        case kTagInUse:
            for (const RequestSnapshot& r : m_snap->requests)
                if (r.tag == tag && r.hctx >= 0 && static_cast<std::size_t>(r.hctx) < hctxs.size()
                    && hctxs[static_cast<std::size_t>(r.hctx)].tags == mapIndex)
                    return info
                        + QStringLiteral("held by %1, submitted on CPU %2 (%3)")
                              .arg(EventLogModel::requestName(r.id, r.script, m_scriptIds))
                              .arg(r.cpu)
                              .arg(QString::fromLatin1(rqStateWhere(r.state)));
            return info + QStringLiteral("in use");
        default:
            return info + QStringLiteral("free, in CPU %1's cache").arg(v);
        }
    }
    return {};
}

QPointF TopologyScene::tagCenter(int hctx, int tag) const
{
    const TagMapItem* map = hctx >= 0 && static_cast<std::size_t>(hctx) < m_hctxs.size()
        ? m_hctxs[static_cast<std::size_t>(hctx)].tags
        : nullptr;
    return map ? map->tagCenter(tag) : QPointF(-1e9, -1e9);
}

void TopologyScene::helpEvent(QGraphicsSceneHelpEvent* event)
{
    const QString info = tagInfoAt(event->scenePos());
    if (info.isEmpty()) {
        QGraphicsScene::helpEvent(event);
        return;
    }
    QToolTip::showText(event->screenPos(), info);
    event->accept();
}

void TopologyScene::mousePressEvent(QGraphicsSceneMouseEvent* event)
{
    const ObjectRef s = selectionAt(event->scenePos());
    if (s.kind == ObjectRef::Kind::Request)
        setFollowed(s.index);
    emit clicked(s);
    QGraphicsScene::mousePressEvent(event);
}

} // namespace blkmq
