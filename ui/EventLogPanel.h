#pragma once

#include "sim/TraceRecord.h"

#include <QWidget>

#include <algorithm>
#include <cstdint>
#include <vector>

class QSortFilterProxyModel;
class QTableView;

namespace blkmq {

class EventLogModel;

// The event log under the canvas: run A's trace as rows, a filter over them, and the rows that
// have not been shown yet (they are appended with the figures, as scrolling repaints every row).
// A click on a row chooses its request or CPU (recordChosen); a double-click goes to its time
// (seekRequested).
class EventLogPanel : public QWidget {
    Q_OBJECT
public:
    explicit EventLogPanel(QWidget* parent = nullptr);

    EventLogModel* model() const { return m_log; }
    QSortFilterProxyModel* filter() const { return m_filter; }
    QTableView* view() const { return m_view; }

    void take(const std::vector<TraceRecord>& trace) { m_pending.insert(m_pending.end(), trace.begin(), trace.end()); }
    // Rows taken and not yet shown that the clock has reached (`untilNs`).
    bool pending(std::int64_t untilNs) const
    {
        return std::any_of(
            m_pending.begin(), m_pending.end(), [untilNs](const TraceRecord& r) { return r.time <= untilNs; });
    }
    // Appends what was taken up to `untilNs`, the time shown: an action's later steps are stamped
    // with the time they happen, after its start, and wait until the clock reaches them. The view
    // follows the newest row if it was at the bottom.
    void flush(std::int64_t untilNs);
    void clear();
    // Trace records the display fell behind on (RunnerOutput::traceDropped): the count so far when
    // it grew since the last call, else 0.
    std::uint64_t droppedNews();
    // Scrolls to the first row at or after `ns` (the bottom if none).
    void scrollToTime(std::int64_t ns);

signals:
    void recordChosen(const blkmq::TraceRecord& record);
    void seekRequested(std::int64_t ns);

private:
    EventLogModel* m_log;
    QSortFilterProxyModel* m_filter;
    QTableView* m_view;
    std::vector<TraceRecord> m_pending; // trace drained but not yet in the log
    std::uint64_t m_droppedShown = 0;
};

} // namespace blkmq
