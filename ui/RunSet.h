#pragma once

#include "EngineRunner.h"
#include "metrics/TimeSeries.h"

#include <QString>

#include <vector>

namespace blkmq {

class PatchPanel;

// One run over the window's live scenario, with the patch panel that drives its kernel settings.
struct RunSession {
    EngineRunner* runner;
    PatchPanel* patches;
    QString label; // "A", "B"
};

// The runs over the one live scenario: [0] is drawn on the canvas; the others are compared with it
// (plotted as sets 1.., in the A/B table), each with its own kernel settings. A session's live
// scenario is its engine's (EngineRunner::liveScenarioJson).
struct RunSet {
    std::vector<RunSession> all;

    EngineRunner* a() const { return all.front().runner; }
    bool comparing() const { return all.size() > 1; }
    void pause() const
    {
        for (const RunSession& s : all)
            s.runner->pause();
    }
};

// What the runs have shown so far, kept for the CSV export: run A's series, the compared runs'
// series (others[k - 1] is RunSet::all[k]'s), and A's live changes and stalls.
struct RunRecord {
    std::vector<SeriesRow> rows;
    std::vector<std::vector<SeriesRow>> others;
    std::vector<Marker> markers;

    void take(const RunnerOutput& out)
    {
        rows.insert(rows.end(), out.rows.begin(), out.rows.end());
        markers.insert(markers.end(), out.markers.begin(), out.markers.end());
    }
    void clear()
    {
        rows.clear();
        others.clear();
        markers.clear();
    }
};

} // namespace blkmq
