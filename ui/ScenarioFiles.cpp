#include "ScenarioFiles.h"

#include "EngineRunner.h"
#include "PatchPanel.h"
#include "ScenarioPanel.h"
#include "UiText.h"
#include "WindowHost.h"
#include "io/SafeFile.h"
#include "scenario/FioJobFile.h"
#include "scenario/ScenarioLoader.h"

#include <nlohmann/json.hpp>

#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QSettings>

namespace blkmq {

ScenarioFiles::ScenarioFiles(WindowHost& host, EngineRunner* runner, QWidget* parent)
    : QObject(parent)
    , m_host(host)
    , m_runner(runner)
    , m_parent(parent)
{
}

void ScenarioFiles::addFileActions(QMenu* file)
{
    file->addAction(tr("&Open scenario or fio job…"), QKeySequence::Open, this, [this] {
        const QString path = QFileDialog::getOpenFileName(m_parent, tr("Open scenario"), QString(),
            tr("Scenarios and fio job files (*.json *.fio);;Scenario (*.json);;fio job file (*.fio)"));
        if (path.isEmpty())
            return;
        if (const QString err = openFile(path); !err.isEmpty()) {
            QMessageBox::warning(m_parent, tr("Cannot open %1").arg(QFileInfo(path).fileName()), err);
            return;
        }
        addRecent(path);
    });
    file->addAction(tr("&Save scenario…"), QKeySequence::Save, this, [this] {
        const QString path
            = QFileDialog::getSaveFileName(m_parent, tr("Save scenario"), QString(), tr("Scenario (*.json)"));
        if (path.isEmpty())
            return;
        if (const QString err = exportScenario(path); !err.isEmpty())
            QMessageBox::critical(m_parent, tr("Save failed"), err);
        else
            addRecent(path);
    });
}

void ScenarioFiles::addRecentMenu(QMenu* file)
{
    auto* recent = file->addMenu(tr("Recent scenarios"));
    connect(recent, &QMenu::aboutToShow, this, [this, recent] {
        recent->clear();
        for (const auto& path : QSettings().value(QStringLiteral("recent")).toStringList())
            recent->addAction(path, this, [this, path] {
                if (const QString err = openFile(path); !err.isEmpty())
                    QMessageBox::warning(m_parent, tr("Cannot open %1").arg(QFileInfo(path).fileName()), err);
            });
    });
}

void ScenarioFiles::watch(PatchPanel* patches, ScenarioPanel* scenario)
{
    connect(patches, &PatchPanel::restartRequested, this, [this, patches](const std::vector<std::string>& sets) {
        const bool wasRunning = m_runner->isRunning();
        if (const QString err = applyOverrides(sets); !err.isEmpty()) {
            patches->setKernel(m_runner->scenario().kernel);
            QMessageBox::warning(m_parent, tr("Cannot change the kernel"), err);
            return;
        }
        m_host.showMessage(tr("%1: the run restarted from t = 0 with the same seed").arg(q(sets.front())), 8000);
        if (wasRunning)
            m_host.runOrPause();
    });
    connect(scenario, &ScenarioPanel::applyRequested, this, [this, scenario](const std::vector<std::string>& sets) {
        if (const QString err = applyOverrides(sets); !err.isEmpty())
            scenario->showError(err);
    });
}

void ScenarioFiles::addRecent(const QString& path)
{
    QSettings settings;
    QStringList list = settings.value(QStringLiteral("recent")).toStringList();
    list.removeAll(path);
    list.prepend(path);
    settings.setValue(QStringLiteral("recent"), list.mid(0, 8));
}

QString ScenarioFiles::loadPreset(const QString& name, const std::vector<std::string>& sets)
{
    auto s = ScenarioLoader::fromPreset(name.toStdString(), sets);
    if (!s)
        return q(s.error());
    m_host.loadScenario(*s);
    return {};
}

QString ScenarioFiles::applyOverrides(const std::vector<std::string>& sets)
{
    nlohmann::json doc = nlohmann::json::parse(m_runner->liveScenarioJson());
    for (const auto& set : sets)
        if (auto r = ScenarioLoader::applySet(doc, set); !r)
            return q(r.error());
    auto s = ScenarioLoader::fromJson(doc);
    if (!s)
        return q(s.error());
    m_runner->pause();
    m_host.loadScenario(*s);
    return {};
}

QString ScenarioFiles::openFile(const QString& path)
{
    if (path.endsWith(QStringLiteral(".fio")))
        return openFioJob(path);
    auto s = ScenarioLoader::fromFile(path.toStdString());
    if (!s)
        return q(s.error());
    m_host.loadScenario(*s);
    return {};
}

// The job file replaces the workload of the scenario the window shows (its runtime the duration),
// as `blkmqlab-cli run --preset NAME job.fio` does; filename=/dev/NAME names one of its devices.
QString ScenarioFiles::openFioJob(const QString& path, const std::vector<std::string>& sets)
{
    const Scenario& base = m_runner->scenario();
    auto s = FioJobFile::run(path.toStdString(), base, [&](const std::vector<std::string>& settings) {
        std::vector<std::string> all = settings;
        all.insert(all.end(), sets.begin(), sets.end()); // after the job's, so they can change a job
        return ScenarioLoader::fromText(base.sourceJson, "scenario", all);
    });
    if (!s)
        return q(s.error());
    m_host.loadScenario(*s);
    return {};
}

QString ScenarioFiles::exportScenario(const QString& path) const
{
    const std::string text = nlohmann::json::parse(m_runner->liveScenarioJson()).dump(2) + "\n";
    return q(SafeFile::write(path.toStdString(), text)); // atomic, never replacing a device
}

} // namespace blkmq
