#include "PresentationMode.h"

#include <QAction>
#include <QDockWidget>
#include <QMainWindow>
#include <QMenu>
#include <QSignalBlocker>

namespace blkmq {

PresentationMode::PresentationMode(QMainWindow* window)
    : QObject(window)
    , m_window(window)
{
}

void PresentationMode::addActions(QMenu* view)
{
    view->addSeparator();
    m_present = view->addAction(tr("Presentation mode"), this, &PresentationMode::setPresenting);
    m_present->setCheckable(true);
    m_present->setShortcut(Qt::Key_F11);
    m_present->setToolTip(tr("Full screen, the panels hidden: the canvas and the plots get the room (F11)"));
    m_hide = view->addAction(tr("Hide panels"), this, &PresentationMode::setPanelsHidden);
    m_hide->setCheckable(true);
    m_hide->setShortcut(Qt::Key_F9);
    m_hide->setToolTip(tr("Hide or show the panels around the canvas and the plots (F9)"));
}

void PresentationMode::setPanelsHidden(bool hidden)
{
    if (hidden == m_panelsHidden)
        return;
    m_panelsHidden = hidden;
    if (hidden) {
        m_hidden.clear();
        for (QDockWidget* d : m_window->findChildren<QDockWidget*>())
            if (d->isVisible()) {
                m_hidden.push_back(d);
                d->hide();
            }
    } else {
        for (QDockWidget* d : m_hidden)
            d->show();
        m_hidden.clear();
    }
    if (m_hide) {
        const QSignalBlocker quiet(m_hide);
        m_hide->setChecked(hidden);
    }
}

void PresentationMode::setPresenting(bool on)
{
    if (on == m_presenting)
        return;
    m_presenting = on;
    if (on) {
        m_wasMaximized = m_window->isMaximized();
        m_window->showFullScreen();
    } else if (m_wasMaximized) {
        m_window->showMaximized();
    } else {
        m_window->showNormal();
    }
    setPanelsHidden(on);
    if (m_present) {
        const QSignalBlocker quiet(m_present);
        m_present->setChecked(on);
    }
}

} // namespace blkmq
