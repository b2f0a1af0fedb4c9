#pragma once

#include "scenario/Scenario.h"
#include "sim/CommandInbox.h"

#include <QWidget>

#include <map>
#include <string>
#include <vector>

class QCheckBox;
class QComboBox;

namespace blkmq {

// The kernel switches, grouped by seed thread and built from the engine's
// registries (PatchRegistry, the RESTART variants), so a policy added to the
// engine shows up here without GUI changes. Every change is a Command.
class PatchPanel : public QWidget {
    Q_OBJECT
public:
    explicit PatchPanel(QWidget* parent = nullptr);
    void setKernel(const KernelSpec& kernel); // shows a scenario's settings without emitting
    QCheckBox* patchBox(const std::string& id) const;
    // The panel's settings as --set overrides (for loading run B of a comparison).
    std::vector<std::string> currentSets() const;
    QComboBox* restartBox() const { return m_restart; }

signals:
    void commandRequested(const blkmq::Command& command);

private:
    std::map<std::string, QCheckBox*> m_patches;
    QCheckBox* m_threadirqs = nullptr;
    QComboBox* m_restart = nullptr;
    QComboBox* m_dispatch = nullptr;
    QCheckBox* m_fairShare = nullptr;
    bool m_updating = false;
};

} // namespace blkmq
