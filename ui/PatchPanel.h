#pragma once

#include "engine/CommandInbox.h"
#include "spec/Scenario.h"

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
    // The panel's settings as --set overrides (for loading run B of a comparison): the live switches,
    // and with withRestart the ones set when a run starts too.
    std::vector<std::string> currentSets(bool withRestart = false) const;
    QComboBox* restartBox() const { return choiceBox("restart"); }
    QComboBox* choiceBox(const std::string& key) const;

signals:
    void commandRequested(const blkmq::Command& command);
    // A switch that is set when a run starts (the tag allocator, a percpu_ida patch) changed: the run
    // must restart from t = 0 with `sets` applied ("kernel.tags=\"sbitmap\"", and the patches of the
    // allocator left turned off).
    void restartRequested(const std::vector<std::string>& sets);

private:
    struct Row {
        const KernelSwitch* sw = nullptr;
        QCheckBox* box = nullptr;
        QComboBox* combo = nullptr;
    };
    std::vector<Row> m_rows; // table order
    static std::string setFor(const Row& row); // the row's value as a --set override
    std::vector<std::string> restartSets(std::size_t changed) const;
    static QString restartTip();
    bool m_updating = false;
};

} // namespace blkmq
