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
#include <QGraphicsRectItem>
#include <QGraphicsSceneMouseEvent>
#include <QGraphicsSimpleTextItem>
#include <QPen>

#include <algorithm>
#include <cmath>
#include <map>

namespace blkmq {

namespace {
constexpr double kTileW = 52, kTileH = 38, kGap = 4, kPad = 8, kCaption = 16;
constexpr int kMaxHctxShown = 32; // per device
constexpr int kHctxPerRow = 16;
constexpr int kMaxDevicesShown = 16; // more are drawn as one box per tag set
constexpr int kMaxTokens = 10000;
constexpr std::int64_t kBusyWindowNs = 50000; // the shortest time a CPU's busy share is over

QGraphicsSimpleTextItem* text(QGraphicsScene* s, const QString& t, QPointF at, int size, bool bold = false)
{
    auto* item = s->addSimpleText(t);
    QFont f = item->font();
    f.setPointSize(size);
    f.setBold(bold);
    item->setFont(f);
    item->setPos(at);
    item->setZValue(2); // above the IPI arcs, under the tokens
    // Tokens glide over the text every frame: a text is laid out once per change, then blitted.
    item->setCacheMode(QGraphicsItem::DeviceCoordinateCache);
    return item;
}
} // namespace

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
    clear();
    m_groups.clear();
    m_cacheDots.clear(); // clear() deleted them
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
            const int cols = std::max(1, static_cast<int>(std::ceil(std::sqrt(nCores * 1.6 / threads))));
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
            llcGroup.caption = text(this, llcGroup.name, QPointF(llcX + 4, nodeY + kCaption + kPad + 1), 7);
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
                        this, QStringLiteral("CPU %1").arg(cpu), tile.rect->rect().topLeft() + QPointF(3, 1), 7, true);
                    tile.detail = text(this, QString(), tile.rect->rect().topLeft() + QPointF(3, 14), 6);
                    if (perCpuTagCaches) { // the colour its cached tags have in the tag maps
                        const QRectF tr = tile.rect->rect();
                        auto* dot = addRect(tr.right() - 9, tr.top() + 2, 7, 7, QPen(Qt::white, 0.5),
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
        const double nodeW = llcX - nodeX + kPad - kGap;
        auto* nodeBox = addRect(
            nodeX, nodeY, nodeW, nodeH + kCaption + 2 * kPad, QPen(QColor(0x34, 0x49, 0x5e), 1.5), Qt::NoBrush);
        nodeBox->setZValue(-3);
        Group nodeGroup;
        nodeGroup.name = QStringLiteral("node %1").arg(node);
        nodeGroup.always = true;
        nodeGroup.caption = text(this, nodeGroup.name, QPointF(nodeX + 6, nodeY + 2), 8, true);
        for (const auto& [llc, cores] : llcs)
            for (const auto& [core, cpus] : cores)
                nodeGroup.members.insert(nodeGroup.members.end(), cpus.begin(), cpus.end());
        m_groups.push_back(std::move(nodeGroup));
        x += nodeW + 2 * kPad;
        widest = std::max(widest, x);
        maxY = std::max(maxY, nodeY + nodeH + kCaption + 2 * kPad);
    }
    const double width = std::max(widest, 560.0);

    // Devices and their hctxs.
    int totalHctx = 0;
    for (const auto& d : devices)
        totalHctx = std::max(totalHctx, d.firstHctx + d.nrHctx);
    m_hctxs.assign(static_cast<std::size_t>(totalHctx), {});
    m_queueCounters.assign(devices.size(), nullptr);
    m_highlights.clear();
    m_selected = nullptr; // clear() deleted it
    m_hctxDevice.assign(static_cast<std::size_t>(totalHctx), -1);
    m_deviceRects.assign(devices.size(), QRectF());
    double dy = maxY + 24;
    double dx = 0;
    const double cellW = 56, cellH = 34, tagMapH = 40, rowH = cellH + tagMapH + 8;
    double rowMaxH = 0; // of the row of devices being laid out
    // Many devices (128 IBNBD queues) are drawn as one box per tag set, with their totals.
    const bool aggregated = devices.size() > static_cast<std::size_t>(kMaxDevicesShown);
    if (aggregated)
        layoutDeviceGroups(devices, dy, width);
    for (std::size_t d = 0; d < devices.size(); ++d) {
        for (int i = 0; i < devices[d].nrHctx; ++i)
            m_hctxDevice[static_cast<std::size_t>(devices[d].firstHctx + i)] = static_cast<int>(d);
        if (aggregated)
            continue;
        // The hctxs in rows of at most kHctxPerRow, so a 32-queue device is not one long strip.
        const int shown = std::min(devices[d].nrHctx, kMaxHctxShown);
        const int perRow = std::min(shown, kHctxPerRow);
        const int hctxRows = (shown + perRow - 1) / std::max(1, perRow);
        const double devW = std::max(260.0, perRow * (cellW + kGap) + kGap + (devices[d].nrHctx > shown ? 50 : 0));
        // percpu_ida's legend takes two lines under the tag maps.
        const double devH = kCaption + hctxRows * rowH + 62 + (perCpuTagCaches ? 9 : 0);
        if (dx + devW > width && dx > 0) {
            dx = 0;
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
        devGroup.caption = text(this, devices[d].name, r.topLeft() + QPointF(5, 1), 8, true);
        for (int i = 0; i < devices[d].nrHctx; ++i)
            devGroup.members.push_back(devices[d].firstHctx + i);
        m_groups.push_back(std::move(devGroup));
        const bool shared
            = !devices[d].tagSet.isEmpty() && std::count_if(devices.begin(), devices.end(), [&](const DeviceLayout& o) {
                  return o.tagSet == devices[d].tagSet;
              }) > 1;
        if (shared) // the queue's counter of marked hctxs (8e8320c9315c), which the stall turns on
            m_queueCounters[d] = text(this, QString(), r.topLeft() + QPointF(std::max(70.0, devW - 150), 2), 7, true);
        for (int i = 0; i < shown; ++i) {
            HctxCell cell;
            cell.rect
                = addRect(r.left() + kGap + (i % perRow) * (cellW + kGap), r.top() + kCaption + 2 + (i / perRow) * rowH,
                    cellW, cellH, QPen(QColor(0x7f, 0x8c, 0x8d)), QBrush(Qt::white));
            cell.rect->setData(1, devices[d].firstHctx + i);
            cell.label = text(this, QStringLiteral("hctx %1").arg(i), cell.rect->rect().topLeft() + QPointF(2, 1), 6);
            if (devices[d].tagDepth > 0 && devices[d].tagDepth <= 4096) {
                cell.tags
                    = new TagMapItem(QRectF(cell.rect->rect().left(), cell.rect->rect().bottom() + 3, cellW, tagMapH),
                        devices[d].tagDepth);
                addItem(cell.tags);
            }
            m_hctxs[static_cast<std::size_t>(devices[d].firstHctx + i)] = cell;
        }
        if (devices[d].nrHctx > shown)
            text(this, QStringLiteral("+%1").arg(devices[d].nrHctx - shown),
                QPointF(r.left() + kGap + perRow * (cellW + kGap), r.top() + kCaption + 10), 7);
        text(this,
            perCpuTagCaches
                ? QStringLiteral("tags: blue in use, grey free,\nCPU colour: in that CPU's cache, black lost")
                : QStringLiteral("tags (blue: in use)"),
            QPointF(r.left() + 5, r.top() + kCaption + hctxRows * rowH - 2), 6);
        text(this, QStringLiteral("at the device"), QPointF(r.left() + 5, r.bottom() - 50), 6);
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
        const QRectF frame = rect.adjusted(-6, -18, 6, 6);
        addRect(frame, QPen(QColor(0x7d, 0x3c, 0x98), 1.5, Qt::DashLine), Qt::NoBrush)->setZValue(-4);
        text(this, QStringLiteral("tag set '%1': driver tags shared by these queues").arg(name),
            frame.topLeft() + QPointF(6, 2), 7, true)
            ->setBrush(QColor(0x7d, 0x3c, 0x98));
    }
    const QRectF bounds = itemsBoundingRect().adjusted(-20, -20, 20, 60);
    m_tokens = new TokenLayer(bounds);
    addItem(m_tokens);
    addItem(m_tokens->arcs());
    setSceneRect(bounds);
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

void TopologyScene::update(
    const std::shared_ptr<const Snapshot>& shared, const std::vector<TraceRecord>& trace, double frameMs, bool figures)
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
        case RqState::Sched:
            base = hctxCenter(r.hctx) + QPointF(-10, 22);
            place = 2 * r.hctx;
            break;
        case RqState::Dispatch:
            base = hctxCenter(r.hctx) + QPointF(10, 22);
            place = 2 * r.hctx + 1;
            break;
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
        const double dx = labelled ? 20.0 : 7.0;
        int cols = labelled ? 3 : 6;
        if (r.state == RqState::AtDevice) {
            const int d = m_hctxDevice[static_cast<std::size_t>(r.hctx)];
            const QRectF dr = d >= 0 ? m_deviceRects[static_cast<std::size_t>(d)] : QRectF();
            cols = dr.isValid() ? std::max(4, static_cast<int>((dr.width() - 16) / dx)) : 16;
        }
        // On a CPU, one row along the tile's bottom edge (two for named tokens): more would cover the
        // tile below; the tile's text says how many are there.
        const int rows = r.state == RqState::Complete || r.state == RqState::Free ? (labelled ? 2 : 1) : 5;
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
            m_tokens->addArc(cpuEdge(rec.cpu, true), cpuEdge(rec.arg, true));
        else if (rec.kind == TraceKind::TagSteal && toCpu && rec.arg != rec.cpu)
            m_tokens->addArc(cpuEdge(rec.arg, false), cpuEdge(rec.cpu, false), TokenLayer::ArcKind::Steal);
    }
    m_tokens->advance(frameMs);
}

int TopologyScene::requestsInFlight() const { return m_inFlight; }

bool TopologyScene::sampled() const { return m_sampled; }

void TopologyScene::setFollowed(int request)
{
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
    for (const ObjectRef& h : highlights) {
        const QRectF r = rectOf(h);
        if (!r.isValid())
            continue;
        auto* item = addRect(r.adjusted(-4, -4, 4, 4), QPen(Palette::of(Hue::LessonPointer), 3.5), Qt::NoBrush);
        item->setZValue(20);
        m_highlights.push_back(item);
    }
}

void TopologyScene::setSelected(const ObjectRef& object)
{
    const QRectF r = rectOf(object);
    if (!r.isValid()) {
        delete m_selected;
        m_selected = nullptr;
        return;
    }
    if (!m_selected) {
        m_selected = addRect(QRectF(), QPen(Palette::of(Hue::Selected), 3, Qt::DashLine), Qt::NoBrush);
        m_selected->setZValue(19);
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

void TopologyScene::layoutDeviceGroups(const std::vector<DeviceLayout>& devices, double y, double width)
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
    // As wide as the CPUs above (up to 900), so the counts line fits at its longest ("8192 waiting,
    // 8192 at the device, RESTART set on 8192 hctx").
    const double boxW = std::max(420.0, std::min(width, 900.0)), boxH = 96;
    double x = 0;
    for (const QString& set : order) {
        const auto& members = bySet[set];
        if (x + boxW > width && x > 0) {
            x = 0;
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
        g.caption = text(this, g.name, r.topLeft() + QPointF(5, 1), 8, true);
        m_groups.push_back(std::move(g));
        text(this, QStringLiteral("at the device"), QPointF(r.left() + 5, r.bottom() - 50), 6);
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
    // A tile's own text is readable from about 44 px on screen; below, the tiles are a heat map of
    // their contexts and the captions carry the numbers.
    const bool detail = !m_big || kTileW * scale >= 44;
    if (detail == m_detail)
        return;
    m_detail = detail;
    for (CpuTile& t : m_cpus) {
        if (t.label)
            t.label->setVisible(detail);
        if (t.detail)
            t.detail->setVisible(detail);
    }
    for (HctxCell& h : m_hctxs)
        if (h.label)
            h.label->setVisible(detail);
    // The captions keep a readable size however small the machine is drawn.
    for (Group& g : m_groups)
        if (g.caption) {
            g.caption->setFlag(QGraphicsItem::ItemIgnoresTransformations, !detail);
            showCaption(g);
        }
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
