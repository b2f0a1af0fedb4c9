#pragma once

#include <QObject>

#include <vector>

class QAction;
class QDockWidget;
class QMainWindow;
class QMenu;

namespace blkmq {

// For a lecture hall: Presentation mode (F11) puts the window in full screen and hides the panels
// around the canvas and the plots, so the canvas, fitted to the room it gets, draws its text large;
// Hide panels (F9) hides or shows the panels alone. Either restores the panels that were shown.
class PresentationMode : public QObject {
    Q_OBJECT
public:
    explicit PresentationMode(QMainWindow* window);

    void addActions(QMenu* view);
    void setPresenting(bool on);
    bool presenting() const { return m_presenting; }
    void setPanelsHidden(bool hidden);
    bool panelsHidden() const { return m_panelsHidden; }

private:
    QMainWindow* m_window;
    QAction* m_present = nullptr;
    QAction* m_hide = nullptr;
    bool m_presenting = false;
    bool m_panelsHidden = false;
    bool m_wasMaximized = false;
    std::vector<QDockWidget*> m_hidden; // the panels hidden, shown again when the mode ends
};

} // namespace blkmq
