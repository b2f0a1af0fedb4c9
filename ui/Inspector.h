#pragma once

#include "TopologyScene.h"
#include "block/StallStep.h"

#include <nlohmann/json.hpp>

#include <QObject>
#include <QStringList>

#include <vector>

class QLabel;
class QTextBrowser;

namespace blkmq {

class EngineRunner;

// The inspector: what is selected (a CPU, an hctx, a request, a tag map) in figures, in its own
// panel, and under the canvas the kernel path strip, what the selected CPU executes now level by
// level. Both read run A's latest snapshot.
class Inspector : public QObject {
    Q_OBJECT
public:
    Inspector(EngineRunner* runner, TopologyScene* scene, QObject* parent = nullptr);

    QTextBrowser* view() const { return m_view; }
    QLabel* kernelPathStrip() const { return m_kernelPath; }
    // The scenario's workload.script ids by step (Snapshot::scriptIds): a scripted request's name.
    void setScriptIds(const QStringList& ids) { m_scriptIds = ids; }
    const QStringList& scriptIds() const { return m_scriptIds; }
    ObjectRef selection() const { return m_selection; }
    void clear(); // nothing selected (a new scenario)

    // Selects and marks `s` on the canvas (a click on it) and raises the panel; `script`: a
    // request's script step, so it keeps its name once completed. Emits selected().
    void select(const ObjectRef& s, int script = -1);
    // A log row's request, or else its CPU.
    void select(const TraceRecord& r);
    // Shows `s` without marking it or raising the panel (a lesson step's pointer).
    void show(const ObjectRef& s, int script = -1);
    // "cpu:N" or "hctx:N", as a click on it would; an error names what is wrong.
    QString inspect(const QString& what);
    void refresh(); // the figures of the latest snapshot
    // A session file's view: "inspect" ("cpu:N" or "hctx:N") when a CPU or an hctx is selected;
    // restore() selects it again, or says why it cannot on this machine.
    void saveTo(nlohmann::json& view) const;
    QString restore(const nlohmann::json& view);
    // A stall step's object: outlined on the canvas (nothing else is) and selected.
    void pointAt(const StallStep& step);

signals:
    void selected();

private:
    void refreshKernelPath();
    QString cpuHtml(const Snapshot& snap) const;
    QString hctxHtml(const Snapshot& snap) const;
    QString requestHtml(const Snapshot& snap);
    QString tagsHtml(const Snapshot& snap) const;

    EngineRunner* m_runner;
    TopologyScene* m_scene;
    QTextBrowser* m_view;
    QLabel* m_kernelPath;
    QStringList m_scriptIds;
    ObjectRef m_selection;
    int m_selectionScript = -1; // the script step of the selected request (its name after it completed)
};

// What a stall step or a lesson step points at: its outline, added to `marks` (a CPU, an hctx, a tag
// map, a device), and the object the inspector shows (none for a device).
ObjectRef pointAt(const ObjectRef& object, std::vector<ObjectRef>& marks);

} // namespace blkmq
