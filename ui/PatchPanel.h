#pragma once

#include "engine/CommandInbox.h"
#include "scenario/Scenario.h"

#include <QWidget>

#include <map>
#include <string>
#include <vector>

class QCheckBox;
class QComboBox;

namespace blkmq {

struct KernelSwitch;

// The kernel switches, grouped by seed thread and built from the one switch
// table (scenario/KernelSwitches.cpp), so a switch or a variant added to the
// engine shows up here without GUI changes. Every change is a Command.
class PatchPanel : public QWidget {
    Q_OBJECT
public:
    explicit PatchPanel(QWidget* parent = nullptr);
    void setKernel(const KernelSpec& kernel); // shows a scenario's settings without emitting
    QCheckBox* patchBox(const std::string& id) const; // kernel.patches.<id>
    // The panel's settings as --set overrides (for loading run B of a comparison).
    std::vector<std::string> currentSets() const;
    QComboBox* restartBox() const { return choiceBox("restart"); }
    QComboBox* choiceBox(const std::string& key) const;

signals:
    void commandRequested(const blkmq::Command& command);

private:
    struct Row {
        const KernelSwitch* sw = nullptr;
        QCheckBox* box = nullptr;
        QComboBox* combo = nullptr;
    };
    std::vector<Row> m_rows; // table order
    bool m_updating = false;
};

} // namespace blkmq
