#pragma once

#include "sim/TraceRecord.h"

#include <QAbstractTableModel>
#include <QHash>
#include <QStringList>

#include <deque>
#include <vector>

namespace blkmq {

// The engine's trace records as table rows: time, CPU, event, request,
// detail, in time order. Keeps the newest `capacity` records; older ones scroll out.
// Requests and hctxs have the names they have everywhere else (requestName(), "nullb1 hctx 0").
class EventLogModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Time, Cpu, Kind, Request, Detail, ColumnCount };

    explicit EventLogModel(QObject* parent = nullptr, std::size_t capacity = 20000);

    void append(const std::vector<TraceRecord>& records);
    void clear();
    // The names of this scenario: its workload.script ids, and each global hctx's "device hctx i".
    void setNames(const QStringList& scriptIds, const QStringList& hctxNames);
    void addDropped(std::uint64_t n) { m_dropped += n; }
    std::uint64_t dropped() const { return m_dropped; }
    const TraceRecord& record(int row) const { return m_rows[static_cast<std::size_t>(row)]; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

    static QString kindName(TraceKind k);
    // A softirq pending mask by name, in __do_softirq's order ("NET_RX BLOCK"; "none").
    static QString softirqNames(unsigned mask);
    // What happened, in words, with this scenario's names.
    QString describe(const TraceRecord& r) const;
    // The event in one line: "IPI on CPU 3 (request #12): to CPU 40".
    QString describeRow(const TraceRecord& r) const;
    // The one name of a request, in the log, the inspector, the banner and on its token:
    // "request A" (its workload.script id) or "request #N" (its pool slot).
    static QString requestName(int rq, int script, const QStringList& scriptIds);
    // The same name without "request ": "A" or "#N" (a token's label).
    static QString shortName(int rq, int script, const QStringList& scriptIds);
    QString requestName(const TraceRecord& r) const { return requestName(r.rq, r.script, m_scriptIds); }

private:
    QString hctxName(int hctx) const;

    std::deque<TraceRecord> m_rows;
    QStringList m_scriptIds;
    QStringList m_hctxNames;
    QHash<int, int> m_slotScript; // request pool slot -> the script step of the request in it now
    std::size_t m_capacity;
    std::uint64_t m_dropped = 0;
};

} // namespace blkmq
