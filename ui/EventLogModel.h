#pragma once

#include "sim/TraceRecord.h"

#include <QAbstractTableModel>

#include <deque>
#include <vector>

namespace blkmq {

// The engine's trace records as table rows: time, CPU, event, request,
// detail. Keeps the newest `capacity` records; older ones scroll out.
class EventLogModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Time, Cpu, Kind, Request, Detail, ColumnCount };

    explicit EventLogModel(QObject* parent = nullptr, std::size_t capacity = 20000);

    void append(const std::vector<TraceRecord>& records);
    void clear();
    void addDropped(std::uint64_t n) { m_dropped += n; }
    std::uint64_t dropped() const { return m_dropped; }
    const TraceRecord& record(int row) const { return m_rows[static_cast<std::size_t>(row)]; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

    static QString kindName(TraceKind k);
    static QString describe(const TraceRecord& r);

private:
    std::deque<TraceRecord> m_rows;
    std::size_t m_capacity;
    std::uint64_t m_dropped = 0;
};

} // namespace blkmq
