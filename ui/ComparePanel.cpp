#include "ComparePanel.h"

#include "PatchPanel.h"
#include "PlotPanel.h"
#include "UiText.h"
#include "experiment/Experiment.h"
#include "experiment/SeedComparison.h"
#include "experiment/TbbHandoff.h"
#include "io/Text.h"
#include "metrics/Metrics.h"
#include "scenario/ScenarioLoader.h"

#include <cmath>

#include <QCheckBox>
#include <QDockWidget>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QRegularExpression>
#include <QResizeEvent>
#include <QScrollArea>
#include <QTextDocument>
#include <QSpinBox>
#include <QVBoxLayout>

namespace blkmq {

ComparePanel::ComparePanel(RunSet& runs, RunRecord& record, PlotPanel* plots, QWidget* parent)
    : QWidget(parent)
    , m_runs(runs)
    , m_record(record)
    , m_plots(plots)
    , m_patchesB(new PatchPanel)
    , m_compareBox(new QCheckBox(tr("Run B beside A (same seed, in lockstep)")))
    , m_canvasB(new QCheckBox(tr("Canvas shows run B")))
    , m_table(new QLabel)
    , m_seedsCount(new QSpinBox)
    , m_seedsTable(new QLabel)
    , m_workers(this)
{
    auto* cbl = new QVBoxLayout(this);
    cbl->addWidget(m_compareBox);
    m_canvasB->setToolTip(tr("Draw run B's machine on the canvas (its CPUs, requests, IPIs and tag maps) "
                             "instead of A's; the inspector and the log stay with A"));
    m_canvasB->setEnabled(false);
    cbl->addWidget(m_canvasB);
    connect(m_canvasB, &QCheckBox::toggled, this, [this] {
        m_traceB.clear();
        emit canvasRunChanged();
    });
    m_table->setTextFormat(Qt::RichText);
    m_table->setWordWrap(true); // the metric names wrap, so Δ and Δ% fit a narrow dock
    m_table->setObjectName(QStringLiteral("compareTable"));
    cbl->addWidget(m_table); // the table first: it is what a comparison is for
    // The same comparison over seeds (blkmqlab-cli ab): A as loaded and B on N seeds, a paired t-test.
    auto* seedsRow = new QHBoxLayout;
    m_seedsCount->setRange(2, 1000);
    m_seedsCount->setValue(10);
    m_seedsCount->setSuffix(tr(" seeds"));
    auto* seedsButton = new QPushButton(tr("Compare over"));
    seedsButton->setToolTip(tr("Run A and B to the scenario's end on the same seeds (from the scenario's), in the "
                               "background, and say per metric whether B differs from A by more than the spread "
                               "over the seeds (paired t-test, 95%)"));
    connect(seedsButton, &QPushButton::clicked, this, [this] {
        if (const QString err = compareOverSeeds(m_seedsCount->value()); !err.isEmpty())
            m_seedsTable->setText(err.toHtmlEscaped());
    });
    seedsRow->addWidget(seedsButton);
    seedsRow->addWidget(m_seedsCount);
    seedsRow->addStretch(1);
    cbl->addLayout(seedsRow);
    m_seedsTable->setTextFormat(Qt::RichText);
    m_seedsTable->setWordWrap(true);
    m_seedsTable->setObjectName(QStringLiteral("seedsTable"));
    cbl->addWidget(m_seedsTable);
    cbl->addWidget(new QLabel(tr("Kernel patches of run B (dashed curves):")));
    cbl->addWidget(m_patchesB);
    m_patchesB->setEnabled(false);
    connect(m_compareBox, &QCheckBox::toggled, this, &ComparePanel::setCompare);
    connect(m_patchesB, &PatchPanel::restartRequested, this, [this](const std::vector<std::string>&) {
        if (const QString err = compareWith(m_patchesB->currentSets(true)); !err.isEmpty()) {
            m_patchesB->setKernel(
                m_runs.comparing() ? m_runs.all[1].runner->scenario().kernel : m_runs.a()->scenario().kernel);
            QMessageBox::warning(this, tr("Cannot change run B's kernel"), err);
        }
    });
    connect(m_patchesB, &PatchPanel::commandRequested, this, [this](const Command& c) {
        for (const RunSession& s : m_runs.all)
            if (s.patches == m_patchesB)
                s.runner->post(c);
        updateRunLabels();
    });
}

void ComparePanel::saveTo(nlohmann::json& view) const
{
    if (m_runs.comparing())
        view["compare"] = m_runs.all[1].patches->currentSets(true);
}

QString ComparePanel::restore(const nlohmann::json& view)
{
    if (!view.contains("compare")) { // the session compared nothing
        setCompare(false);
        return {};
    }
    const QString err = compareWith(view["compare"].get<std::vector<std::string>>());
    return err.isEmpty() ? err : tr("view.compare: %1").arg(err);
}

void ComparePanel::reload()
{
    for (std::size_t i = 1; i < m_runs.all.size(); ++i)
        loadRun(i);
}

bool ComparePanel::drain()
{
    bool changed = false;
    for (std::size_t i = 1; i < m_runs.all.size(); ++i) {
        RunnerOutput out = m_runs.all[i].runner->drain();
        const auto& rows = out.rows;
        if (i == 1 && canvasShowsB())
            m_traceB.insert(m_traceB.end(), out.trace.begin(), out.trace.end());
        if (m_record.others.size() < i)
            m_record.others.resize(i);
        m_record.others[i - 1].insert(m_record.others[i - 1].end(), rows.begin(), rows.end());
        const auto snapB = m_runs.all[i].runner->snapshot();
        const bool freshB = snapB && snapB != m_drawnB;
        changed |= !rows.empty() || freshB;
        m_drawnB = snapB;
        m_plots->append(rows, static_cast<int>(i));
        if (snapB && (freshB || !rows.empty()))
            m_plots->setProvisional(snapB->intervalSoFar, static_cast<int>(i));
    }
    return changed;
}

QString ComparePanel::tableText() const { return m_runs.comparing() ? m_tableText : QString(); }

bool ComparePanel::canvasShowsB() const { return m_runs.comparing() && m_canvasB->isChecked(); }

void ComparePanel::setCanvasShowsB(bool on) { m_canvasB->setChecked(on); }

std::shared_ptr<const Snapshot> ComparePanel::snapshotB() const
{
    return m_runs.comparing() ? m_runs.all[1].runner->snapshot() : nullptr;
}

std::vector<TraceRecord> ComparePanel::takeTraceB() { return std::exchange(m_traceB, {}); }

void ComparePanel::raiseDock()
{
    for (QWidget* w = this; w; w = w->parentWidget())
        if (auto* dock = qobject_cast<QDockWidget*>(w))
            dock->raise();
}

void ComparePanel::setCompare(bool on)
{
    m_compareBox->setChecked(on);
    m_patchesB->setEnabled(on);
    m_canvasB->setEnabled(on);
    if (!on)
        m_canvasB->setChecked(false);
    if (on == (m_runs.comparing()))
        return;
    if (on) {
        auto* runner = new EngineRunner(this);
        runner->followLeader(m_runs.a());
        runner->setPauseOnStall(false);
        m_patchesB->setKernel(m_runs.a()->scenario().kernel);
        m_runs.all.push_back({ runner, m_patchesB, tr("B") });
        loadRun(m_runs.all.size() - 1);
        if (m_runs.a()->isRunning())
            runner->run();
    } else {
        for (std::size_t i = 1; i < m_runs.all.size(); ++i)
            delete m_runs.all[i].runner;
        m_runs.all.resize(1);
        m_table->clear();
        m_tableText.clear();
        m_narrowTableText.clear();
    }
    updateRunLabels();
}

void ComparePanel::updateRunLabels()
{
    // Each compared run is named by how it differs from A: "B: complete-llist on".
    const std::vector<std::string> a = m_runs.all.front().patches->currentSets(true);
    QStringList others;
    for (std::size_t i = 1; i < m_runs.all.size(); ++i) {
        QStringList diff;
        for (const std::string& set : m_runs.all[i].patches->currentSets(true))
            if (std::find(a.begin(), a.end(), set) == a.end())
                diff << PlotPanel::markerLabel(QString(), q(set)).mid(2);
        others << QString(m_runs.all[i].label + QStringLiteral(": ")
            + (diff.isEmpty() ? tr("the same kernel") : diff.join(QStringLiteral(", "))));
    }
    m_plots->setRuns(others);
}

QString ComparePanel::compareWith(const std::vector<std::string>& sets)
{
    for (const auto& set : sets)
        if (set.rfind("kernel.", 0) != 0)
            return tr("%1: run B differs from A in kernel settings only (kernel.*)").arg(q(printable(set)));
    auto b = ScenarioLoader::fromText(m_runs.a()->scenario().sourceJson, "scenario", sets);
    if (!b)
        return q(b.error());
    setCompare(true);
    m_patchesB->setKernel(b->kernel);
    loadRun(1);
    updateRunLabels();
    raiseDock(); // the table of A, B and their differences
    return {};
}

void ComparePanel::loadRun(std::size_t i)
{
    // Session i: a point of an experiment over scenario A as loaded, with its own kernel settings.
    const std::string base = m_runs.a()->scenario().sourceJson;
    std::vector<AxisPoint> points;
    for (const RunSession& s : m_runs.all)
        points.push_back({ s.label.toStdString(), s.patches->currentSets(true) });
    points.front().sets.clear(); // A is the scenario as loaded
    const Experiment runs(
        [&](const std::vector<std::string>& sets) { return ScenarioLoader::fromText(base, "scenario", sets); },
        { Axis::configurations("kernel", std::move(points)) });
    auto s = runs.scenario(i);
    if (!s) {
        m_tableText.clear();
        m_narrowTableText.clear();
        m_table->setText(q(s.error()).toHtmlEscaped());
        return;
    }
    EngineRunner* run = m_runs.all[i].runner;
    run->setSpeed(m_runs.a()->speed());
    run->load(*s);
    // A stands paused past t = 0 (a session opened, a run stopped): the run catches up and pauses at
    // A's time, so the table compares the two at one time.
    const auto a = m_runs.a()->snapshot();
    if (!m_runs.a()->isRunning() && a && a->now.ns() > 0)
        run->runTo(a->now);
}

void ComparePanel::updateTable()
{
    if (!m_runs.comparing())
        return;
    std::vector<std::shared_ptr<const Snapshot>> snaps;
    for (const RunSession& s : m_runs.all)
        if (!snaps.emplace_back(s.runner->snapshot()))
            return;
    const auto cell = [](const QString& text) { return QStringLiteral("<td align=right nowrap>%1</td>").arg(text); };
    // Two layouts: the whole table (A, B, Δ and Δ% per compared run: exports, a wide dock), and a
    // narrow one for a dock at 1280x800, with one change column: percentage points for a percentage,
    // the relative change for anything else (the absolute Δ in the row's tooltip).
    const auto table = [&](bool narrow) -> QString { // a QString: not a QStringBuilder of the local html
        QString html = QStringLiteral("<table cellspacing=2 width='100%' style='font-size:small'><tr><th></th>");
        for (const RunSession& s : m_runs.all)
            html += QStringLiteral("<th>%1</th>").arg(s.label);
        for (std::size_t k = 1; k < m_runs.all.size(); ++k)
            html += narrow
                ? QStringLiteral("<th title='%1 − %2: pp for a percentage, else (%1 − %2) / %2'>Δ</th>")
                      .arg(m_runs.all[k].label, m_runs.all[0].label)
                : QStringLiteral("<th title='%1 − %2 (pp: percentage points)'>Δ</th><th title='(%1 − %2) / %2'>Δ%</th>")
                      .arg(m_runs.all[k].label, m_runs.all[0].label);
        html += QStringLiteral("</tr><tr><td>%1</td>").arg(tr("simulated time"));
        for (const auto& snap : snaps)
            html += cell(QString::number(snap->now.seconds() * 1e3, 'f', 3) + tr(" ms"));
        html += QStringLiteral("</tr>");
        for (std::size_t i = 0; i < kMetrics.size(); ++i) {
            const Metric& m = kMetrics[i];
            if (std::all_of(snaps.begin(), snaps.end(), [i](const auto& snap) { return snap->totals[i] == 0; }))
                continue; // a metric no run exercises
            html += QStringLiteral("<tr><td width='26%'>%1</td>")
                        .arg(QString::fromUtf8(m.label.data(), static_cast<qsizetype>(m.label.size())).toHtmlEscaped());
            for (const auto& snap : snaps)
                html += cell(QString::fromStdString(formatMetric(m, snap->totals[i])));
            const double a = snaps.front()->totals[i];
            // A difference that rounds to zero is written without a sign ("-0.0%" reads as a change).
            const auto signedText = [](double d, QString text) {
                if (!text.contains(QRegularExpression(QStringLiteral("[1-9]"))))
                    return text.startsWith(QLatin1Char('-')) ? text.mid(1) : text;
                return d > 0 ? QLatin1Char('+') + text : text;
            };
            for (std::size_t k = 1; k < snaps.size(); ++k) {
                const double d = snaps[k]->totals[i] - a;
                // A percentage's difference is in percentage points; Δ% is the relative change.
                const QString delta = m.unit == Unit::Percent ? QString::number(d, 'f', 1) + tr(" pp")
                                                              : QString::fromStdString(formatMetric(m, d));
                const QString relative = a != 0
                    ? signedText(d, QString::number(100.0 * d / a, 'f', 1)) + QLatin1Char('%')
                    : QStringLiteral("–");
                if (narrow && m.unit != Unit::Percent)
                    html += QStringLiteral("<td align=right nowrap title='%1'>%2</td>")
                                .arg(signedText(d, delta).toHtmlEscaped(), relative);
                else
                    html += cell(signedText(d, delta));
                if (!narrow)
                    html += cell(relative);
            }
            html += QStringLiteral("</tr>");
        }
        return html + QStringLiteral("</table>");
    };
    m_tableText = table(false);
    m_narrowTableText = table(true);
    showTable();
}

void ComparePanel::showTable()
{
    if (m_tableText.isEmpty())
        return;
    // The whole table if it fits the width the dock gives the panel (its scroll area's viewport: the
    // panel itself widens to what it shows), as the label would lay it out; else the narrow one.
    int room = width();
    for (QWidget* w = parentWidget(); w; w = w->parentWidget())
        if (auto* scroll = qobject_cast<QScrollArea*>(w)) {
            room = scroll->viewport()->width();
            break;
        }
    const QMargins margins = layout()->contentsMargins();
    QTextDocument doc;
    doc.setDefaultFont(m_table->font());
    doc.setHtml(m_tableText);
    const bool fits = doc.idealWidth() <= room - margins.left() - margins.right();
    const QString& text = fits ? m_tableText : m_narrowTableText;
    if (m_table->text() != text)
        m_table->setText(text);
}

void ComparePanel::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    showTable();
}

QString ComparePanel::compareOverSeeds(int seeds)
{
    if (!m_runs.comparing())
        return tr("Turn on \"Run B beside A\" first: the comparison is between A and B's patch set.");
    const std::string base = m_runs.a()->scenario().sourceJson;
    const std::vector<std::string> bSets = m_runs.all[1].patches->currentSets(true);
    const std::uint64_t first = m_runs.a()->scenario().seed;
    const QString bLabel = m_runs.all[1].label;
    m_seedsTable->setText(tr("Running A and B on %1 seeds…").arg(seeds));
    auto* worker = QThread::create([this, base, bSets, first, seeds, bLabel] {
        auto result = blkmq::compareOverSeeds(
            [&base](const std::vector<std::string>& sets) { return ScenarioLoader::fromText(base, "scenario", sets); },
            {}, bSets, first, static_cast<std::uint64_t>(seeds));
        QString html;
        if (!result) {
            html = QString::fromStdString(result.error()).toHtmlEscaped();
        } else {
            const SeedComparison& c = result.value();
            html = tr("<b>%1 seeds</b> (%2 to %3), to the scenario's end; B/A: mean of the per-seed ratios ± their "
                      "standard deviation; ✔: B differs from A by more than the spread, a paired t-test over the "
                      "seeds, two-sided 95% (|t| > %4). "
                      "Stalled: A %5, B %6.")
                       .arg(seeds)
                       .arg(first)
                       .arg(first + static_cast<std::uint64_t>(seeds) - 1)
                       .arg(c.tCritical, 0, 'f', 3)
                       .arg(c.stalledA)
                       .arg(c.stalledB);
            html += QStringLiteral("<table cellspacing=2 width='100%' style='font-size:small'><tr><th></th><th>A</th>"
                                   "<th>%1</th><th>%1/A</th><th title='differs (paired t-test, 95%)'>≠</th></tr>")
                        .arg(bLabel);
            for (const MetricComparison& m : c.metrics) {
                const Metric& metric = kMetrics[static_cast<std::size_t>(m.metric)];
                const QString ratio = m.hasRatio
                    ? QStringLiteral("%1±%2").arg(m.ratioMean, 0, 'f', 3).arg(m.ratioSd, 0, 'f', 3)
                    : QStringLiteral("–");
                const QString t = std::isfinite(m.t) ? QString::number(m.t, 'f', 2) : QStringLiteral("∞");
                html += QStringLiteral("<tr title='t = %6'><td width='30%'>%1</td><td align=right nowrap>%2</td>"
                                       "<td align=right nowrap>%3</td><td align=right nowrap>%4</td><td>%5</td></tr>")
                            .arg(QString::fromUtf8(metric.label.data(), static_cast<qsizetype>(metric.label.size()))
                                     .toHtmlEscaped(),
                                QString::fromStdString(formatMetric(metric, m.aMean)),
                                QString::fromStdString(formatMetric(metric, m.bMean)), ratio,
                                m.differs ? QStringLiteral("<b title='differs'>✔</b>") : QString(), t);
            }
            html += QStringLiteral("</table>");
        }
        const auto handoff = TbbHandoff::hold(); // as in exportTrace
        QMetaObject::invokeMethod(
            this,
            [this, html] {
                TbbHandoff::pass();
                m_seedsTable->setText(html);
                emit seedsCompared();
            },
            Qt::QueuedConnection);
    });
    m_workers.start(worker);
    return {};
}

} // namespace blkmq
