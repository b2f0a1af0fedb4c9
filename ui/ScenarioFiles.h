#pragma once

#include <QObject>

#include <string>
#include <vector>

class QMenu;
class QWidget;

namespace blkmq {

class EngineRunner;
class PatchPanel;
class ScenarioPanel;
class WindowHost;

// Where the window's scenario comes from: a preset, a scenario file, a fio job file on the scenario
// shown, or the live scenario with --set overrides; File: Open scenario or fio job…, Save scenario…
// and the recent ones. Each loads through the window (WindowHost::loadScenario) and returns an error
// message naming the file or setting, or "", leaving the window as it was on an error.
class ScenarioFiles : public QObject {
    Q_OBJECT
public:
    ScenarioFiles(WindowHost& host, EngineRunner* runner, QWidget* parent);

    void addFileActions(QMenu* file); // Open…, Save…
    void addRecentMenu(QMenu* file);
    // Run A's patch panel: a setting that needs a restart reloads the live scenario with it (and runs
    // on if it ran); the scenario panel's edits apply to the live scenario.
    void watch(PatchPanel* patches, ScenarioPanel* scenario);

    QString loadPreset(const QString& name, const std::vector<std::string>& sets = {});
    QString applyOverrides(const std::vector<std::string>& sets);
    QString openFile(const QString& path); // a scenario (.json) or a fio job file (.fio)
    // The job file's workload (and runtime) on the scenario shown, then `sets` (--set).
    QString openFioJob(const QString& path, const std::vector<std::string>& sets = {});
    QString exportScenario(const QString& path) const; // the live scenario, as JSON

private:
    static void addRecent(const QString& path);

    WindowHost& m_host;
    EngineRunner* m_runner;
    QWidget* m_parent; // dialogs' parent
};

} // namespace blkmq
