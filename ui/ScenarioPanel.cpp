#include "ScenarioPanel.h"

#include "block/DeviceModel.h"
#include "sim/Duration.h"

#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace blkmq {

namespace {
// A JSON string value (GCC 12 warns falsely on "literal" + std::string&&).
std::string quoted(const QString& text)
{
    std::string out(1, '"');
    out.append(text.toStdString()).push_back('"');
    return out;
}

QSpinBox* spin(int lo, int hi)
{
    auto* s = new QSpinBox;
    s->setRange(lo, hi);
    return s;
}
} // namespace

ScenarioPanel::ScenarioPanel(QWidget* parent)
    : QWidget(parent)
    , m_text(new QTextBrowser)
    , m_seed(spin(0, 2147483647))
    , m_duration(new QLineEdit)
    , m_topology(new QLineEdit)
    , m_queues(spin(1, 4096))
    , m_depth(spin(1, 4096))
    , m_irqmode(new QComboBox)
    , m_scheduler(new QComboBox)
    , m_rqAffinity(spin(0, 2))
    , m_numjobs(spin(1, 4096))
    , m_iodepth(spin(1, 65536))
    , m_cpus(new QLineEdit)
    , m_error(new QLabel)
{
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_text, 1);
    auto* box = new QGroupBox(tr("Parameters"));
    auto* form = new QFormLayout(box);
    form->addRow(tr("seed"), m_seed);
    form->addRow(tr("duration"), m_duration);
    m_topology->setToolTip(
        tr("a spec such as 2n:1p:8c:2t, a preset (gordeev-2n16, axboe-4s64, ...), host, or an hwloc .xml file"));
    form->addRow(tr("topology"), m_topology);
    for (const DeviceModel* model : DeviceModel::all()) {
        m_irqmode->addItem(QString::fromLatin1(model->name()));
        m_irqmode->setItemData(m_irqmode->count() - 1, QString::fromLatin1(model->summary()), Qt::ToolTipRole);
    }
    m_scheduler->addItems({ QStringLiteral("none"), QStringLiteral("mq-deadline") });
    form->addRow(tr("device: hw queues"), m_queues);
    form->addRow(tr("device: queue depth"), m_depth);
    form->addRow(tr("device: irqmode"), m_irqmode);
    form->addRow(tr("device: scheduler"), m_scheduler);
    form->addRow(tr("device: rq_affinity"), m_rqAffinity);
    form->addRow(tr("job: numjobs"), m_numjobs);
    form->addRow(tr("job: iodepth"), m_iodepth);
    form->addRow(tr("job: cpus_allowed"), m_cpus);
    auto* apply = new QPushButton(tr("Apply and reset"));
    form->addRow(apply);
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color: #c0392b"));
    form->addRow(m_error);
    layout->addWidget(box);
    connect(apply, &QPushButton::clicked, this, [this] { emit applyRequested(overrides()); });
}

void ScenarioPanel::setScenario(const Scenario& s)
{
    m_loaded = s;
    m_error->clear();
    m_text->setHtml(
        QStringLiteral("<h3>%1</h3><p>%2</p><p><i>%3 CPUs (%4), %5 device(s).</i></p>")
            .arg(QString::fromStdString(s.name).toHtmlEscaped(), QString::fromStdString(s.description).toHtmlEscaped())
            .arg(s.topology.nrCpus())
            .arg(QString::fromStdString(s.topology.name()).toHtmlEscaped())
            .arg(s.devices.size()));
    m_seed->setValue(static_cast<int>(std::min<std::uint64_t>(s.seed, 2147483647)));
    m_duration->setText(QString::fromStdString(formatDuration(s.duration)));
    m_topology->setText(QString::fromStdString(s.topologyText));
    const DeviceSpec& d = s.devices.front();
    m_queues->setValue(d.submit_queues);
    m_depth->setValue(d.hw_queue_depth);
    m_irqmode->setCurrentIndex(static_cast<int>(d.irqmode));
    m_scheduler->setCurrentIndex(d.scheduler == SchedulerKind::None ? 0 : 1);
    m_rqAffinity->setValue(d.rq_affinity);
    const bool hasJob = !s.jobs.empty();
    m_numjobs->setEnabled(hasJob);
    m_iodepth->setEnabled(hasJob);
    m_cpus->setEnabled(hasJob);
    if (hasJob) {
        m_numjobs->setValue(s.jobs.front().numjobs);
        m_iodepth->setValue(s.jobs.front().iodepth);
        m_cpus->setText(QString::fromStdString(cpuList(s.jobs.front().cpus_allowed)));
    }
}

std::vector<std::string> ScenarioPanel::overrides() const
{
    std::vector<std::string> sets;
    const auto add = [&](const std::string& key, const std::string& value) { sets.push_back(key + "=" + value); };
    if (static_cast<std::uint64_t>(m_seed->value()) != m_loaded.seed)
        add("seed", std::to_string(m_seed->value()));
    if (m_duration->text().toStdString() != formatDuration(m_loaded.duration))
        add("duration", quoted(m_duration->text()));
    if (m_topology->text().toStdString() != m_loaded.topologyText)
        add("topology", quoted(m_topology->text()));
    const DeviceSpec& d = m_loaded.devices.front();
    if (m_queues->value() != d.submit_queues)
        add("devices.0.submit_queues", std::to_string(m_queues->value()));
    if (m_depth->value() != d.hw_queue_depth)
        add("devices.0.hw_queue_depth", std::to_string(m_depth->value()));
    if (m_irqmode->currentIndex() != static_cast<int>(d.irqmode))
        add("devices.0.irqmode", quoted(m_irqmode->currentText()));
    if (m_scheduler->currentIndex() != (d.scheduler == SchedulerKind::None ? 0 : 1))
        add("devices.0.scheduler", quoted(m_scheduler->currentText()));
    if (m_rqAffinity->value() != d.rq_affinity)
        add("devices.0.rq_affinity", std::to_string(m_rqAffinity->value()));
    if (!m_loaded.jobs.empty()) {
        const JobSpec& j = m_loaded.jobs.front();
        if (m_numjobs->value() != j.numjobs)
            add("workload.jobs.0.numjobs", std::to_string(m_numjobs->value()));
        if (m_iodepth->value() != j.iodepth)
            add("workload.jobs.0.iodepth", std::to_string(m_iodepth->value()));
        if (m_cpus->text() != QString::fromStdString(cpuList(j.cpus_allowed)))
            add("workload.jobs.0.cpus_allowed", quoted(m_cpus->text()));
    }
    return sets;
}

void ScenarioPanel::showError(const QString& message) { m_error->setText(message); }

} // namespace blkmq
