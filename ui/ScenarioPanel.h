#pragma once

#include "spec/Scenario.h"

#include <QWidget>

#include <string>
#include <vector>

class QComboBox;
class QLabel;
class QLineEdit;
class QSpinBox;
class QTextBrowser;

namespace blkmq {

// The scenario's description and its main parameters (seed, duration,
// topology, the first device and the first job), edited as --set overrides
// that the main window validates and reloads.
class ScenarioPanel : public QWidget {
    Q_OBJECT
public:
    explicit ScenarioPanel(QWidget* parent = nullptr);
    void setScenario(const Scenario& s);
    void showError(const QString& message);
    QSpinBox* seedBox() const { return m_seed; }
    // The overrides for the fields that differ from the loaded scenario.
    std::vector<std::string> overrides() const;

signals:
    void applyRequested(const std::vector<std::string>& sets);

private:
    Scenario m_loaded;
    QTextBrowser* m_text;
    QSpinBox* m_seed;
    QLineEdit* m_duration;
    QLineEdit* m_topology;
    QSpinBox* m_queues;
    QSpinBox* m_depth;
    QComboBox* m_irqmode;
    QComboBox* m_scheduler;
    QSpinBox* m_rqAffinity;
    QSpinBox* m_numjobs;
    QSpinBox* m_iodepth;
    QLineEdit* m_cpus;
    QLabel* m_error;
};

} // namespace blkmq
