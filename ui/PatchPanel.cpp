#include "PatchPanel.h"

#include "scenario/KernelSwitches.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
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
        return PatchPanel::tr("Completion (2020 series, seed 000)");
    if (thread.rfind("2017", 0) == 0)
        return PatchPanel::tr("Shared tags and RESTART (2017, seed 002)");
    if (thread.rfind("2014", 0) == 0)
        return PatchPanel::tr("Tag allocation (2014, seed 004)");
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
    for (const KernelSwitch& sw : KernelSwitches::all()) {
        if (sw.type == KernelSwitch::Type::Duration)
            continue; // a time, not a patch: set in the scenario
        if (!group || sw.from.thread != thread) {
            thread = sw.from.thread;
            group = new QGroupBox(groupTitle(thread), this);
            form = new QFormLayout(group);
            layout->addWidget(group);
        }
        Row row;
        row.sw = &sw;
        const std::string path = sw.path();
        if (sw.type == KernelSwitch::Type::Bool) {
            row.box = new QCheckBox(q(sw.label), group);
            row.box->setObjectName(q(sw.key.rfind("patches.", 0) == 0 ? sw.key.substr(8) : sw.key));
            row.box->setToolTip(tip(sw.from));
            row.box->setEnabled(sw.live);
            if (!sw.live)
                row.box->setToolTip(
                    tip(sw.from) + u"<br>"_qs + tr("Set when the scenario starts (not while it runs)."));
            form->addRow(row.box);
            connect(row.box, &QCheckBox::toggled, this, [this, path](bool on) {
                if (!m_updating)
                    emit commandRequested({ path, on ? "true" : "false" });
            });
        } else {
            row.combo = new QComboBox(group);
            row.combo->setObjectName(q(sw.key));
            for (const SwitchChoice& c : sw.choices) {
                const QString label
                    = c.from.subject.empty() || sw.key == "restart" ? q(c.name) : q(c.name + ": " + c.from.subject);
                row.combo->addItem(label, q(c.name));
                row.combo->setItemData(row.combo->count() - 1, tip(c.from), Qt::ToolTipRole);
            }
            row.combo->setEnabled(sw.live);
            if (!sw.live)
                row.combo->setToolTip(tr("Set when the scenario starts (not while it runs)."));
            form->addRow(q(sw.label), row.combo);
            QComboBox* combo = row.combo;
            connect(combo, &QComboBox::currentIndexChanged, this, [this, path, combo] {
                combo->setToolTip(combo->currentData(Qt::ToolTipRole).toString());
                if (!m_updating)
                    emit commandRequested({ path, combo->currentData().toString().toStdString() });
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
    }
    m_updating = false;
}

std::vector<std::string> PatchPanel::currentSets() const
{
    std::vector<std::string> sets;
    for (const Row& row : m_rows) {
        if (!row.sw->live)
            continue;
        if (row.box)
            sets.push_back(row.sw->path() + (row.box->isChecked() ? "=true" : "=false"));
        else
            sets.push_back(row.sw->path() + "=\"" + row.combo->currentData().toString().toStdString() + "\"");
    }
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
