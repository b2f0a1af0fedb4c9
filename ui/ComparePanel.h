#pragma once

#include "RunSet.h"
#include "Workers.h"
#include "engine/Snapshot.h"
#include "sim/TraceRecord.h"

#include <nlohmann/json.hpp>

#include <QWidget>

#include <memory>
#include <string>
#include <vector>

class QCheckBox;
class QLabel;
class QSpinBox;

namespace blkmq {

class PatchPanel;
class PlotPanel;
struct Snapshot;

// Compare A/B: run B beside A on the same scenario and seed, in lockstep, with its own kernel
// patches (dashed curves), a table of A, B and their differences, and the same comparison over
// many seeds in the background (core/experiment/SeedComparison) with a paired t-test.
class ComparePanel : public QWidget {
    Q_OBJECT
public:
    ComparePanel(RunSet& runs, RunRecord& record, PlotPanel* plots, QWidget* parent = nullptr);

    void setCompare(bool on);
    // B's kernel settings are A's with `sets` (kernel.* paths) applied; an error naming the setting, or "".
    QString compareWith(const std::vector<std::string>& sets);
    // A new scenario A: every compared run loads it again with its own settings.
    void reload();
    // The compared runs' new rows into the plots and the record; true if anything changed.
    bool drain();
    void updateTable();
    QString tableText() const; // the whole A/B table (a chart export puts it beside the curves)
    // "Canvas shows run B": the canvas draws run B's machine (its snapshot and its IPIs and steals)
    // instead of A's while B runs. canvasRunChanged() when it switches.
    bool canvasShowsB() const;
    void setCanvasShowsB(bool on);
    std::shared_ptr<const Snapshot> snapshotB() const;
    std::vector<TraceRecord> takeTraceB(); // B's trace records since the last call (while shown)
    PatchPanel* patchesB() const { return m_patchesB; }
    QLabel* seedsTable() const { return m_seedsTable; }
    // A and B on `seeds` seeds from the scenario's, to its end, in the background; emits
    // seedsCompared() when the table is written. An error at once, or "".
    QString compareOverSeeds(int seeds);
    void updateRunLabels(); // the plots' key: each compared run named by how it differs from A
    // A session file's view: "compare", run B's kernel settings, while B runs beside A; restore()
    // starts B with them (and brings it to A's time), or says why it cannot.
    void saveTo(nlohmann::json& view) const;
    QString restore(const nlohmann::json& view);

signals:
    void seedsCompared();
    void canvasRunChanged();

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void showTable(); // the whole table, or the narrow one where it does not fit
    void loadRun(std::size_t i);
    void raiseDock();

    RunSet& m_runs;
    RunRecord& m_record;
    PlotPanel* m_plots;
    PatchPanel* m_patchesB; // the kernel settings of run B (m_runs.all[1])
    QCheckBox* m_compareBox;
    QCheckBox* m_canvasB;
    std::vector<TraceRecord> m_traceB; // drained from B while the canvas shows it
    QLabel* m_table;
    QString m_tableText, m_narrowTableText; // the latest table, whole and narrow
    QSpinBox* m_seedsCount;
    QLabel* m_seedsTable;
    std::shared_ptr<const Snapshot> m_drawnB; // B's snapshot drawn last
    Workers m_workers;
};

} // namespace blkmq
