#include "EventLogModel.h"

#include "cpu/Op.h"
#include "sim/ExecContext.h"

#include <algorithm>
#include <iterator>

namespace blkmq {

EventLogModel::EventLogModel(QObject* parent, std::size_t capacity)
    : QAbstractTableModel(parent)
    , m_capacity(capacity)
{
}

void EventLogModel::append(const std::vector<TraceRecord>& batch)
{
    if (batch.empty())
        return;
    // Each record keeps the script step of the request in its slot then (slots are reused).
    std::vector<TraceRecord> records(batch.begin(), batch.end());
    for (TraceRecord& r : records) {
        if (r.rq < 0)
            continue;
        if (r.kind == TraceKind::Submit)
            m_slotScript.insert(r.rq, r.script);
        else
            r.script = static_cast<std::int16_t>(m_slotScript.value(r.rq, -1));
    }
    // Records come in the order the engine made them; an operation may stamp its start time, a
    // little before the last one shown. Merge in time order: only the short tail that is later
    // than the batch's first record is taken back out.
    std::stable_sort(
        records.begin(), records.end(), [](const TraceRecord& a, const TraceRecord& b) { return a.time < b.time; });
    std::size_t keep = m_rows.size();
    while (keep > 0 && m_rows[keep - 1].time > records.front().time)
        --keep;
    if (keep < m_rows.size()) {
        std::vector<TraceRecord> tail(m_rows.begin() + static_cast<std::ptrdiff_t>(keep), m_rows.end());
        beginRemoveRows({}, static_cast<int>(keep), static_cast<int>(m_rows.size()) - 1);
        m_rows.erase(m_rows.begin() + static_cast<std::ptrdiff_t>(keep), m_rows.end());
        endRemoveRows();
        std::vector<TraceRecord> merged;
        merged.reserve(tail.size() + records.size());
        std::merge(tail.begin(), tail.end(), records.begin(), records.end(), std::back_inserter(merged),
            [](const TraceRecord& a, const TraceRecord& b) { return a.time < b.time; });
        records.swap(merged);
    }
    // Only the newest `capacity` of this batch can survive.
    const std::size_t take = std::min(records.size(), m_capacity);
    const std::size_t overflow = m_rows.size() + take > m_capacity ? m_rows.size() + take - m_capacity : 0;
    if (overflow > 0) {
        beginRemoveRows({}, 0, static_cast<int>(overflow) - 1);
        m_rows.erase(m_rows.begin(), m_rows.begin() + static_cast<std::ptrdiff_t>(overflow));
        endRemoveRows();
    }
    const int first = static_cast<int>(m_rows.size());
    beginInsertRows({}, first, first + static_cast<int>(take) - 1);
    m_rows.insert(m_rows.end(), records.end() - static_cast<std::ptrdiff_t>(take), records.end());
    endInsertRows();
}

void EventLogModel::clear()
{
    beginResetModel();
    m_rows.clear();
    m_slotScript.clear();
    m_dropped = 0;
    endResetModel();
}

void EventLogModel::setNames(const QStringList& scriptIds, const QStringList& hctxNames)
{
    m_scriptIds = scriptIds;
    m_hctxNames = hctxNames;
}

QString EventLogModel::shortName(int rq, int script, const QStringList& scriptIds)
{
    if (script >= 0 && script < scriptIds.size() && !scriptIds[script].isEmpty())
        return scriptIds[script];
    return QStringLiteral("#%1").arg(rq);
}

QString EventLogModel::requestName(int rq, int script, const QStringList& scriptIds)
{
    return QStringLiteral("request ") + shortName(rq, script, scriptIds);
}

QString EventLogModel::hctxName(int hctx) const
{
    return hctx >= 0 && hctx < m_hctxNames.size() ? m_hctxNames[hctx] : QStringLiteral("hctx %1").arg(hctx);
}

QString EventLogModel::describeRow(const TraceRecord& r) const
{
    QString s = kindName(r.kind);
    if (r.cpu >= 0)
        s += QStringLiteral(" on CPU %1").arg(r.cpu);
    if (r.rq >= 0)
        s += QStringLiteral(" (%1)").arg(requestName(r));
    const QString d = describe(r);
    return d.isEmpty() ? s : s + QStringLiteral(": ") + d;
}

int EventLogModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int EventLogModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QString EventLogModel::kindName(TraceKind k)
{
    const std::string_view label = traceKindName(k).label;
    return QString::fromLatin1(label.data(), static_cast<qsizetype>(label.size()));
}

QString EventLogModel::describe(const TraceRecord& r) const
{
    switch (r.kind) {
    case TraceKind::Submit:
    case TraceKind::Dispatch:
    case TraceKind::Requeue:
    case TraceKind::Restart:
        return hctxName(r.arg);
    case TraceKind::RestartMark:
        return hctxName(r.arg) + QStringLiteral(": BLK_MQ_S_SCHED_RESTART set");
    case TraceKind::RestartSkip:
        return QStringLiteral("blk_mq_sched_restart() for %1 returned at once: its counter was 0").arg(hctxName(r.arg));
    case TraceKind::IpiSend:
        return QStringLiteral("to CPU %1").arg(r.arg);
    case TraceKind::DoneListAdd:
        return QStringLiteral("list of CPU %1").arg(r.arg);
    case TraceKind::TagSteal:
        return QStringLiteral("the cached tags of CPU %1").arg(r.arg);
    case TraceKind::TagLost:
        return QStringLiteral("%1 tag(s) overwritten by the steal's memcpy").arg(r.arg);
    case TraceKind::TagMissed:
        return QStringLiteral("CPU %1's cached tags hidden from cpus_have_tags").arg(r.arg);
    case TraceKind::SoftirqRaise:
        return QString::fromLatin1(softirqName(r.arg));
    case TraceKind::SoftirqRun:
        return QStringLiteral("pending: %1").arg(softirqNames(static_cast<unsigned>(r.arg)));
    case TraceKind::Complete:
        return QStringLiteral("in %1").arg(QString::fromLatin1(execContextName(static_cast<ExecContext>(r.arg))));
    case TraceKind::IrqEnter:
    case TraceKind::IrqExit:
        return QString::fromLatin1(irqKindName(r.arg));
    default:
        return QString();
    }
}

QString EventLogModel::softirqNames(unsigned mask)
{
    QStringList names;
    for (int nr = 0; nr < NR_SOFTIRQS_MODELLED; ++nr)
        if (mask & (1u << nr))
            names << QString::fromLatin1(softirqName(nr));
    return names.isEmpty() ? QStringLiteral("none") : names.join(u' ');
}

QVariant EventLogModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount())
        return {};
    const TraceRecord& r = m_rows[static_cast<std::size_t>(index.row())];
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case Time:
            return QStringLiteral("%1 µs").arg(static_cast<double>(r.time) / 1e3, 0, 'f', 3);
        case Cpu:
            return r.cpu >= 0 ? QVariant(static_cast<int>(r.cpu)) : QVariant(QString());
        case Kind:
            return kindName(r.kind);
        case Request:
            return r.rq >= 0 ? QVariant(requestName(r)) : QVariant(QString());
        case Detail:
            return describe(r);
        }
    }
    if (role == Qt::UserRole)
        return static_cast<qlonglong>(r.time);
    return {};
}

QVariant EventLogModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case Time:
        return QStringLiteral("time");
    case Cpu:
        return QStringLiteral("CPU");
    case Kind:
        return QStringLiteral("event");
    case Request:
        return QStringLiteral("request");
    case Detail:
        return QStringLiteral("detail");
    }
    return {};
}

} // namespace blkmq
