#pragma once

#include "block/StallStep.h"

#include <QLabel>

#include <cstdint>
#include <vector>

namespace blkmq {

// Above the canvas when the stall detector fires: how the stall came about, step by step. A click on
// a step's time selects it (stepSelected: its object is outlined and inspected, the log scrolls to
// it); "back to it" asks for the run just before it happened (backRequested).
class StallBanner : public QLabel {
    Q_OBJECT
public:
    explicit StallBanner(QWidget* parent = nullptr);

    // `why`: the whole explanation in prose, as the CLI prints it (the tooltip); `steps` numbered from 1.
    void showStall(const QString& why, const std::vector<StallStep>& steps);
    void reset(); // hidden, no steps (a new run)
    bool shown() const { return !isHidden(); }
    const std::vector<StallStep>& steps() const { return m_steps; }
    void select(int step); // 0-based; emits stepSelected

signals:
    void stepSelected(const blkmq::StallStep& step);
    void backRequested(std::int64_t ns);

private:
    void render();
    std::vector<StallStep> m_steps;
    int m_current = -1; // the one last clicked
};

// Above the canvas when a tag allocator races (lost tags, missed wake-ups), flagged like a stall.
class RaceBanner : public QLabel {
    Q_OBJECT
public:
    explicit RaceBanner(QWidget* parent = nullptr);
    void showRace(const QString& what);
};

} // namespace blkmq
