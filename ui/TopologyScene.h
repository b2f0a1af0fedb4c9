#pragma once

#include "engine/Snapshot.h"
#include "spec/Scenario.h"
#include "sim/ObjectRef.h"
#include "sim/TraceRecord.h"
#include "topo/Topology.h"

#include <QGraphicsScene>
#include <QHash>
#include <QPointF>
#include <QStringList>

#include <memory>
#include <vector>

class QGraphicsRectItem;
class QGraphicsSimpleTextItem;

namespace blkmq {

class TagMapItem;
class TokenLayer;

struct DeviceLayout {
    QString name;
    int firstHctx = 0;
    int nrHctx = 0;
    int tagDepth = 0;
    QString tagSet; // the tag set it shares with the devices of the same name ("" = its own tags)
};

// The machine as the kernel numbers it: nodes ⊃ LLC domains ⊃ cores ⊃ CPU
// tiles, then the devices with their hctxs, and the requests in flight as
// tokens that move between them. Rebuilt per scenario; updated per frame
// from a snapshot, never from engine state.
class TopologyScene : public QGraphicsScene {
    Q_OBJECT
public:
    explicit TopologyScene(QObject* parent = nullptr);
    ~TopologyScene() override;

    // tagDepth: driver tags per hw queue of each device (for the tag maps); perCpuTagCaches: the
    // allocator caches free tags per CPU (percpu_ida), so each CPU tile shows its cache colour.
    // The scenario's machine and devices (each device's hctxs in order, tag sets shared by name).
    void build(const Scenario& scenario);
    void build(const Topology& topo, const std::vector<DeviceLayout>& devices, bool perCpuTagCaches = false);
    // The size of the view the scene is fitted into: build() picks, of its arrangements (devices
    // below or beside the CPUs, each LLC's cores in a square or a wide block), the one drawn largest
    // at that size. A new size that favours another arrangement lays the scene out again, keeping
    // the frames, the selection and the last snapshot; true if it did.
    bool setViewSize(const QSizeF& size);
    // No text on the canvas is drawn smaller than this on screen: below it a text is scaled up
    // (setViewScale) or, on a big machine, gives way to its caption.
    static constexpr double kMinTextPx = 12;
    // Whether the tag maps colour free tags by the CPU whose percpu_ida cache holds them (the legend says so).
    bool perCpuTagCaches() const { return m_perCpuTagCaches; }
    // Every text item shown now, with the height of its font on screen in pixels (for tests).
    std::vector<std::pair<QString, double>> shownTexts() const;
    // frameMs: wall time since the last frame (for animation). figures: also the text of the tiles,
    // hctx cells and captions (busy shares over the time since they were last written); without it
    // only what moves (tokens, arcs, colours, tag maps) is brought up to date. playing: the run
    // plays (IPI and steal arcs fade); paused, they hold (TokenLayer::ArcClock).
    void update(const std::shared_ptr<const Snapshot>& snap, const std::vector<TraceRecord>& trace, double frameMs,
        bool figures, bool playing);
    int drawnTokens() const;
    int requestsInFlight() const;
    bool sampled() const;
    QPointF cpuCenter(int cpu) const;
    QPointF cpuEdge(int cpu, bool top) const; // the middle of a tile's top or bottom edge
    QPointF hctxCenter(int hctx) const;
    ObjectRef selectionAt(const QPointF& scenePos) const; // a request, CPU, hctx or tag map, or none
    // A tag cell's tooltip: the tag and what holds it ("tag 3: held by request A, submitted on CPU 0
    // (dispatched)"), or empty off the tag maps; tagCenter: where tag `tag` of hctx's map is drawn.
    QString tagInfoAt(const QPointF& scenePos) const;
    QPointF tagCenter(int hctx, int tag) const;
    void setFollowed(int request);
    // The workload.script ids by step, so a token is labelled with its request's name.
    void setRequestNames(const QStringList& scriptIds) { m_scriptIds = scriptIds; }
    // Level of detail for the view's scale: a CPU's or hctx's own text only where its tile is wide
    // enough on screen to read it; the node, LLC and device captions (with their aggregates: how busy,
    // how many requests) stay readable at any scale.
    void setViewScale(double scale);
    bool detailShown() const { return m_detail; }
    // "node 0: CPUs 0-19, 64% busy" and the like, as drawn (for tests).
    QStringList captions() const;
    // Outlines these objects (a lesson step's highlights: CPUs, hctxs, tag maps, devices) until the
    // next call.
    void setHighlights(const std::vector<ObjectRef>& highlights);
    // Frames what the user selected (a CPU, an hctx, a tag map: dashed blue, apart from a lesson's
    // orange), or nothing (anything else: a request is marked by the token it follows). The frame's
    // rectangle in scene coordinates, for tests (empty: none).
    void setSelected(const ObjectRef& object);
    QRectF selectedRect() const;
    // Whether tokens are still gliding or arcs fading (the window keeps drawing until they settle).
    bool animating() const;
    // What is on the canvas, for tests: an object (a box, or a request's token) and an IPI's arc.
    bool draws(const ObjectRef& object) const;
    bool drawsIpiArc(int fromCpu, int toCpu) const;
    // Puts every token at its target at once (a screenshot shows where the snapshot has them).
    void settle();
    // Recolours what was drawn once (the lesson's and the selection's frames, the cache dots) after
    // the palette changed; the rest takes the new colours with the next frame.
    void applyPalette();

signals:
    void clicked(blkmq::ObjectRef selection);

protected:
    void mousePressEvent(QGraphicsSceneMouseEvent* event) override;
    void helpEvent(QGraphicsSceneHelpEvent* event) override;

private:
    // How the machine is laid out: where the devices go, and how wide each LLC's block of cores is.
    struct Arrangement {
        bool devicesBeside = false;
        int deviceColumns = 0; // devices a row: 0 as many as fit under the CPUs (one beside them)
        int llcColumns = 0; // added to a square block's columns: -1 taller, 0 square, +N wider

        bool operator==(const Arrangement&) const = default;
    };
    void layout(const Arrangement& a);
    double fitScale() const; // the scale fitInView would give at m_viewSize (0: no size yet)
    Arrangement bestArrangement();
    Topology m_topo;
    std::vector<DeviceLayout> m_devices;
    bool m_perCpuTagCaches = false;
    Arrangement m_arrangement;
    QSizeF m_viewSize;
    double m_viewScale = 1;
    std::vector<ObjectRef> m_highlightRefs; // what setHighlights() and setSelected() were given,
    ObjectRef m_selectedRef; //                  drawn again after a new layout
    int m_followed = -1;
    std::vector<QGraphicsSimpleTextItem*> m_texts; // every text item, for the minimum on-screen size
    // Body: figures and labels (kTextPx); Name: a CPU's or a counter's name (bold); Caption: a node's
    // or a device's (bold, larger).
    enum class TextRole : std::uint8_t { Body, Name, Caption };
    QGraphicsSimpleTextItem* text(QPointF at, const QString& t, TextRole role = TextRole::Body);
    static double textWidth(const QString& t, TextRole role); // at scale 1
    void applyTextScale(); // each text at least kMinTextPx on screen at m_viewScale
    void placeCounter(std::size_t device);
    struct CpuTile {
        QGraphicsRectItem* rect = nullptr;
        QGraphicsSimpleTextItem* label = nullptr;
        QGraphicsSimpleTextItem* detail = nullptr;
    };
    struct HctxCell {
        QGraphicsRectItem* rect = nullptr;
        QGraphicsSimpleTextItem* label = nullptr;
        TagMapItem* tags = nullptr;
    };
    // A node, LLC or device caption that carries an aggregate of its CPUs or hctxs.
    struct Group {
        QGraphicsSimpleTextItem* caption = nullptr;
        QString name;
        std::vector<int> members; // CPUs, or the device's global hctxs
        bool device = false;
        bool always = false; // shows its aggregate at any scale (a node's); else only zoomed out
        bool llc = false; // hidden zoomed out (its node's caption says it)
        QString aggregate; // "node 0: CPUs 0-19, 64% busy"
        QString compact; // zoomed out, in two short lines: "node 0\n20 CPUs, 64% busy"
    };
    void showCaption(Group& g);
    std::vector<Group> m_groups;
    bool m_detail = true;
    bool m_big = false;
    std::vector<double> m_busyShare; // per CPU, over the last update's interval
    void updateGroups(const Snapshot& snap, bool busyChanged);
    void layoutDeviceGroups(const std::vector<DeviceLayout>& devices, QPointF at, double width);
    static QString cpuRange(const std::vector<int>& cpus);
    std::vector<CpuTile> m_cpus;
    std::vector<HctxCell> m_hctxs; // by global hctx index; null when not drawn
    std::vector<QRectF> m_deviceRects; // per device
    std::vector<int> m_hctxDevice;
    std::vector<QGraphicsSimpleTextItem*> m_queueCounters; // per device: shared_hctx_restart, when its tags are shared
    std::vector<QGraphicsRectItem*> m_highlights;
    QGraphicsRectItem* m_selected = nullptr; // the selection's frame (owned by the scene)
    std::vector<QGraphicsRectItem*> m_cacheDots; // each CPU's cache colour on its tile (percpu_ida)
    QRectF rectOf(const ObjectRef& object) const; // empty: not drawn as a box
    TokenLayer* m_tokens = nullptr;
    std::vector<std::int64_t> m_lastBusy;
    std::int64_t m_lastNow = 0;
    std::int64_t m_arcsNow = -1; // the clock of the last update(), for the arcs
    int m_inFlight = 0;
    bool m_sampled = false;
    QStringList m_scriptIds;
    std::shared_ptr<const Snapshot> m_snap; // of the last update, for the tag tooltips (shared, not copied)
};

} // namespace blkmq
