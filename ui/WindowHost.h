#pragma once

#include <QString>

namespace blkmq {

struct Scenario;

// What the window's jobs (run control, lessons, time travel) ask of the window that wires them:
// the window implements it, and a job holds it, so no job includes the window.
class WindowHost {
public:
    virtual void loadScenario(const Scenario& scenario) = 0; // shown paused at t = 0
    // What a run has shown so far: the log, banners and, unless `keepPlots` (a move along the same
    // run: its course stays drawn), the plots.
    virtual void clearRunView(bool keepPlots) = 0;
    virtual void frame() = 0; // pulls the runners' output and redraws what changed
    virtual void wake() = 0; // the frame timer runs again
    virtual void showMessage(const QString& text, int ms = 0) = 0; // on the status bar
    virtual void runOrPause() = 0; // every run

protected:
    ~WindowHost() = default;
};

} // namespace blkmq
