#include "PatchPanel.h"

#include "scenario/KernelSwitches.h"

#include <algorithm>

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QVBoxLayout>

namespace blkmq {

namespace {
QString q(const std::string& s) { return QString::fromStdString(s); }

QString tip(const Provenance& p)
{
    QStringList lines;
    if (!p.subject.empty())
        lines << u"<b>"_qs + q(p.subject).toHtmlEscaped() + u"</b>"_qs;
    QStringList who;
    for (const std::string* part : { &p.author, &p.commit, &p.version })
        if (!part->empty())
            who << q(*part).toHtmlEscaped();
    if (!who.isEmpty())
        lines << who.join(u", "_qs);
    if (!p.effect.empty())
        lines << q(p.effect).toHtmlEscaped();
    return lines.join(u"<br>"_qs);
}

// The group titles, by seed thread.
QString groupTitle(const std::string& thread)
{
    if (thread.rfind("2020", 0) == 0)
        return PatchPanel::tr("Completion: the 2020 LKML series");
    if (thread.rfind("2017", 0) == 0)
        return PatchPanel::tr("Shared tags and RESTART: the 2017 LKML thread");
    if (thread.rfind("2014", 0) == 0)
        return PatchPanel::tr("Tag allocation: the 2014 LKML thread");
    return q(thread);
}
} // namespace

PatchPanel::PatchPanel(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    QGroupBox* group = nullptr;
    QFormLayout* form = nullptr;
    std::string thread;
    const QString restartMark = QStringLiteral(" \u27f2");
    const QString restartTip = PatchPanel::restartTip();
    for (const KernelSwitch& sw : KernelSwitches::all()) {
        if (sw.type == KernelSwitch::Type::Duration)
            continue; // a time, not a patch: set in the scenario
        if (!group || sw.from.thread != thread) {
            thread = sw.from.thread;
            group = new QGroupBox(this);
            form = new QFormLayout(group);
            form->setRowWrapPolicy(QFormLayout::WrapLongRows); // a narrow dock: the field under its label
            layout->addWidget(group);
            // The title as a label that wraps: a group box's own title sets its minimum width, and a
            // long one ("Debian 12's kernel (...), the oracle's guest") widened the dock past 1280x800.
            if (const QString text = groupTitle(thread); !text.isEmpty()) {
                auto* title = new QLabel(text, group);
                title->setObjectName(QStringLiteral("groupTitle"));
                title->setWordWrap(true);
                QFont bold = title->font();
                bold.setBold(true);
                title->setFont(bold);
                form->addRow(title);
            }
            const bool anyRestart = std::any_of(KernelSwitches::all().begin(), KernelSwitches::all().end(),
                [&](const KernelSwitch& o) { return !o.live && o.from.thread == thread; });
            if (anyRestart) {
                auto* note
                    = new QLabel(tr("%1 restarts the run from t = 0 (same seed).").arg(restartMark.trimmed()), group);
                note->setToolTip(restartTip);
                note->setWordWrap(true);
                note->setStyleSheet(QStringLiteral("color: #7e5109;"));
                form->addRow(note);
            }
        }
        Row row;
        row.sw = &sw;
        const std::string path = sw.path();
        if (sw.type == KernelSwitch::Type::Bool) {
            row.box = new QCheckBox(q(sw.label) + (sw.live ? QString() : restartMark), group);
            row.box->setObjectName(q(sw.key.rfind("patches.", 0) == 0 ? sw.key.substr(8) : sw.key));
            row.box->setToolTip(tip(sw.from) + (sw.live ? QString() : u"<br>"_qs + restartTip));
            form->addRow(row.box);
            const bool live = sw.live;
            const std::size_t index = m_rows.size();
            connect(row.box, &QCheckBox::toggled, this, [this, path, live, index](bool on) {
                if (m_updating)
                    return;
                if (live)
                    emit commandRequested({ path, on ? "true" : "false" });
                else
                    emit restartRequested(restartSets(index));
            });
        } else {
            row.combo = new QComboBox(group);
            row.combo->setObjectName(q(sw.key));
            // Long choices ("v4.15: blk-mq: ...") elide in the box instead of widening the dock.
            row.combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
            row.combo->setMinimumContentsLength(16);
            for (const SwitchChoice& c : sw.choices) {
                const QString label
                    = c.from.subject.empty() || sw.key == "restart" ? q(c.name) : q(c.name + ": " + c.from.subject);
                row.combo->addItem(label, q(c.name));
                row.combo->setItemData(row.combo->count() - 1, tip(c.from), Qt::ToolTipRole);
            }
            form->addRow(q(sw.label) + (sw.live ? QString() : restartMark), row.combo);
            QComboBox* combo = row.combo;
            const bool live = sw.live;
            const std::size_t index = m_rows.size();
            connect(combo, &QComboBox::currentIndexChanged, this, [this, path, combo, live, index, restartTip] {
                combo->setToolTip(
                    combo->currentData(Qt::ToolTipRole).toString() + (live ? QString() : u"<br>"_qs + restartTip));
                if (m_updating)
                    return;
                if (live)
                    emit commandRequested({ path, combo->currentData().toString().toStdString() });
                else
                    emit restartRequested(restartSets(index));
            });
        }
        m_rows.push_back(row);
    }
    layout->addStretch(1);
}

void PatchPanel::setKernel(const KernelSpec& kernel)
{
    m_updating = true;
    for (const Row& row : m_rows) {
        const std::string value = row.sw->value(kernel);
        if (row.box)
            row.box->setChecked(value == "true");
        else
            row.combo->setCurrentIndex(row.combo->findData(q(value)));
        // A patch of one allocator is off and greyed while another allocator runs.
        const KernelSwitch* needs = row.sw->requiresKey.empty() ? nullptr : KernelSwitches::find(row.sw->requiresKey);
        const bool applies = !needs || needs->value(kernel) == row.sw->requiresValue;
        QWidget* w = row.box ? static_cast<QWidget*>(row.box) : row.combo;
        w->setEnabled(applies);
        if (row.box)
            w->setToolTip(tip(row.sw->from) + (row.sw->live ? QString() : u"<br>"_qs + restartTip())
                + (applies ? QString()
                           : u"<br>"_qs + tr("Applies to the %1 allocator only.").arg(q(row.sw->requiresValue))));
    }
    m_updating = false;
}

QString PatchPanel::restartTip()
{
    return tr("Changing it restarts the run from t = 0 with the same seed: the tag allocator and its caches are "
              "built when the queue is set up, so they cannot change under a running queue.");
}

std::vector<std::string> PatchPanel::restartSets(std::size_t changed) const
{
    const Row& row = m_rows[changed];
    std::vector<std::string> sets { setFor(row) };
    if (!row.combo)
        return sets;
    const std::string value = row.combo->currentData().toString().toStdString();
    for (const Row& other : m_rows) // the patches of another allocator go off with it
        if (other.box && other.sw->requiresKey == row.sw->key && other.sw->requiresValue != value
            && other.box->isChecked())
            sets.push_back(other.sw->path() + "=false");
    return sets;
}

std::string PatchPanel::setFor(const Row& row)
{
    if (row.box)
        return row.sw->path() + (row.box->isChecked() ? "=true" : "=false");
    return row.sw->path() + "=\"" + row.combo->currentData().toString().toStdString() + "\"";
}

std::vector<std::string> PatchPanel::currentSets(bool withRestart) const
{
    std::vector<std::string> sets;
    for (const Row& row : m_rows)
        if (row.sw->live || withRestart)
            sets.push_back(setFor(row));
    return sets;
}

QCheckBox* PatchPanel::patchBox(const std::string& id) const
{
    for (const Row& row : m_rows)
        if (row.box && row.sw->key == "patches." + id)
            return row.box;
    return nullptr;
}

QComboBox* PatchPanel::choiceBox(const std::string& key) const
{
    for (const Row& row : m_rows)
        if (row.combo && row.sw->key == key)
            return row.combo;
    return nullptr;
}

} // namespace blkmq
