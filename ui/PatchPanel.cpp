#include "PatchPanel.h"

#include "scenario/PatchRegistry.h"
#include "scenario/ScenarioLoader.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QVBoxLayout>

namespace blkmq {

namespace {
QString q(const std::string& s) { return QString::fromStdString(s); }

const char* restartHelp(const std::string& v)
{
    if (v == "own-hctx")
        return "Restart only the completing hctx; an hctx without a driver tag waits on dispatch_wait (v4.15+, "
               "358a3a6bccb7).";
    if (v == "rr-shared")
        return "Bart Van Assche, 6d8c6c0f97ad (v4.11): with shared tags, walk every hctx of every queue round robin "
               "until one restarts.";
    if (v == "rr-shared-queue-counter")
        return "+ 8e8320c9315c: skip the walk when the completing queue's shared_hctx_restart is 0. Stalls (seed 002).";
    return "Roman Pen's RFC (seed 002): the counter lives in the tag set. Fixes the stall; the walk stays costly.";
}
} // namespace

PatchPanel::PatchPanel(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    std::map<std::string, QVBoxLayout*> groups;
    auto* completion = new QGroupBox(tr("Completion (2020 series, seed 000)"), this);
    auto* cl = new QVBoxLayout(completion);
    m_threadirqs = new QCheckBox(tr("threadirqs (boot option)"), completion);
    m_threadirqs->setToolTip(
        tr("Device interrupt handlers run in irq threads; softirqs raised by IPIs are left to ksoftirqd."));
    cl->addWidget(m_threadirqs);
    connect(m_threadirqs, &QCheckBox::toggled, this, [this](bool on) {
        if (!m_updating)
            emit commandRequested({ "kernel.threadirqs", on ? "true" : "false" });
    });
    for (const PatchInfo& p : PatchRegistry::all()) {
        auto* box = new QCheckBox(q(p.id), completion);
        box->setToolTip(QStringLiteral("<b>%1</b><br>%2, %3<br>%4")
                            .arg(q(p.subject).toHtmlEscaped(), q(p.author), q(p.version), q(p.effect).toHtmlEscaped()));
        box->setObjectName(q(p.id));
        cl->addWidget(box);
        m_patches[p.id] = box;
        const std::string id = p.id;
        connect(box, &QCheckBox::toggled, this, [this, id](bool on) {
            if (!m_updating)
                emit commandRequested({ "kernel.patches." + id, on ? "true" : "false" });
        });
    }
    layout->addWidget(completion);

    auto* restart = new QGroupBox(tr("Shared tags and RESTART (2017, seed 002)"), this);
    auto* form = new QFormLayout(restart);
    m_restart = new QComboBox(restart);
    for (const auto& v : ScenarioLoader::restartVariants()) {
        m_restart->addItem(q(v), q(v));
        m_restart->setItemData(m_restart->count() - 1, QString::fromLatin1(restartHelp(v)), Qt::ToolTipRole);
    }
    form->addRow(tr("restart"), m_restart);
    connect(m_restart, &QComboBox::currentIndexChanged, this, [this] {
        if (!m_updating)
            emit commandRequested({ "kernel.restart", m_restart->currentData().toString().toStdString() });
        m_restart->setToolTip(QString::fromLatin1(restartHelp(m_restart->currentData().toString().toStdString())));
    });
    m_dispatch = new QComboBox(restart);
    m_dispatch->addItem(tr("v4.12: leave the scheduler's requests"), QStringLiteral("v4.12"));
    m_dispatch->addItem(tr("v4.14: go on with the scheduler"), QStringLiteral("v4.14"));
    form->addRow(tr("dispatch"), m_dispatch);
    connect(m_dispatch, &QComboBox::currentIndexChanged, this, [this] {
        if (!m_updating)
            emit commandRequested({ "kernel.dispatch", m_dispatch->currentData().toString().toStdString() });
    });
    m_fairShare = new QCheckBox(tr("fair tag sharing (0d2602ca30e4)"), restart);
    form->addRow(m_fairShare);
    connect(m_fairShare, &QCheckBox::toggled, this, [this](bool on) {
        if (!m_updating)
            emit commandRequested({ "kernel.tag_fair_share", on ? "true" : "false" });
    });
    layout->addWidget(restart);

    auto* tags = new QGroupBox(tr("Tag allocation (2014, seed 004)"), this);
    auto* tl = new QVBoxLayout(tags);
    auto* note = new QLabel(tr("bitmap tags (v3.16). The percpu_ida variants come with their issue."), tags);
    note->setWordWrap(true);
    tl->addWidget(note);
    layout->addWidget(tags);
    layout->addStretch(1);
}

void PatchPanel::setKernel(const KernelSpec& kernel)
{
    m_updating = true;
    m_threadirqs->setChecked(kernel.threadirqs);
    for (auto& [id, box] : m_patches) {
        auto it = kernel.patches.find(id);
        box->setChecked(it != kernel.patches.end() && it->second);
    }
    m_restart->setCurrentIndex(m_restart->findData(q(kernel.restart)));
    m_dispatch->setCurrentIndex(m_dispatch->findData(q(kernel.dispatch)));
    m_fairShare->setChecked(kernel.tag_fair_share);
    m_updating = false;
}

std::vector<std::string> PatchPanel::currentSets() const
{
    std::vector<std::string> sets { std::string("kernel.threadirqs=") + (m_threadirqs->isChecked() ? "true" : "false"),
        "kernel.restart=" + m_restart->currentData().toString().toStdString(),
        "kernel.dispatch=\"" + m_dispatch->currentData().toString().toStdString() + "\"",
        std::string("kernel.tag_fair_share=") + (m_fairShare->isChecked() ? "true" : "false") };
    for (const auto& [id, box] : m_patches)
        sets.push_back("kernel.patches." + id + "=" + (box->isChecked() ? "true" : "false"));
    return sets;
}

QCheckBox* PatchPanel::patchBox(const std::string& id) const
{
    auto it = m_patches.find(id);
    return it == m_patches.end() ? nullptr : it->second;
}

} // namespace blkmq
