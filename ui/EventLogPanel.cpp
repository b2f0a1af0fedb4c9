#include "EventLogPanel.h"

#include "EventLogModel.h"

#include <algorithm>

#include <QHeaderView>
#include <QLineEdit>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

namespace blkmq {

EventLogPanel::EventLogPanel(QWidget* parent)
    : QWidget(parent)
    , m_log(new EventLogModel(this))
    , m_filter(new QSortFilterProxyModel(this))
    , m_view(new QTableView)
{
    auto* ll = new QVBoxLayout(this);
    ll->setContentsMargins(0, 0, 0, 0);
    auto* filter = new QLineEdit;
    filter->setPlaceholderText(tr("filter by CPU, request or event, e.g. IPI"));
    ll->addWidget(filter);
    m_filter->setSourceModel(m_log);
    m_filter->setFilterKeyColumn(-1);
    m_filter->setFilterCaseSensitivity(Qt::CaseInsensitive);
    connect(filter, &QLineEdit::textChanged, m_filter, &QSortFilterProxyModel::setFilterFixedString);
    m_view->setModel(m_filter);
    m_view->verticalHeader()->setDefaultSectionSize(18);
    m_view->verticalHeader()->hide();
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_view->setColumnWidth(EventLogModel::Time, 96);
    m_view->setColumnWidth(EventLogModel::Cpu, 44);
    m_view->setColumnWidth(EventLogModel::Kind, 190);
    m_view->setColumnWidth(EventLogModel::Request, 110);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    connect(
        m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& current) {
            if (current.row() < 0)
                return;
            const QModelIndex source = m_filter->mapToSource(m_filter->index(current.row(), 0));
            if (source.isValid())
                emit recordChosen(m_log->record(source.row()));
        });
    // A double-click goes back (or forward) to the row's time: the run as it stood then.
    connect(m_view, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
        const QModelIndex source = m_filter->mapToSource(index);
        if (source.isValid())
            emit seekRequested(m_log->record(source.row()).time);
    });
    ll->addWidget(m_view);
}

void EventLogPanel::flush(std::int64_t untilNs)
{
    const auto later = std::stable_partition(
        m_pending.begin(), m_pending.end(), [untilNs](const TraceRecord& r) { return r.time <= untilNs; });
    if (later == m_pending.begin())
        return;
    const bool atBottom = m_view->verticalScrollBar()->value() >= m_view->verticalScrollBar()->maximum() - 2;
    m_log->append(std::vector<TraceRecord>(m_pending.begin(), later));
    m_pending.erase(m_pending.begin(), later);
    if (atBottom)
        m_view->scrollToBottom();
}

void EventLogPanel::clear()
{
    m_log->clear();
    m_pending.clear();
    m_droppedShown = 0;
}

std::uint64_t EventLogPanel::droppedNews()
{
    if (m_log->dropped() == m_droppedShown)
        return 0;
    return m_droppedShown = m_log->dropped();
}

void EventLogPanel::scrollToTime(std::int64_t ns)
{
    int lo = 0, hi = m_log->rowCount(); // rows are in time order
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (m_log->record(mid).time < ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == m_log->rowCount())
        m_view->scrollToBottom();
    else if (const QModelIndex at = m_filter->mapFromSource(m_log->index(lo, 0)); at.isValid())
        m_view->scrollTo(at, QAbstractItemView::PositionAtTop);
}

} // namespace blkmq
