#include "WheelGuard.h"

#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QComboBox>
#include <QEvent>
#include <QWidget>

namespace blkmq {

namespace {
class WheelFilter : public QObject {
public:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (event->type() != QEvent::Wheel)
            return false;
        const auto* w = static_cast<QWidget*>(watched);
        if (w->hasFocus())
            return false;
        // Handled here, but not accepted: QApplication offers the wheel to the parent widgets
        // (the panel's scroll area) as it does with any wheel event a widget ignores.
        event->ignore();
        return true;
    }
};
} // namespace

void guardWheel(QWidget* panel)
{
    static WheelFilter filter;
    const auto guard = [](QWidget* w) {
        w->setFocusPolicy(Qt::StrongFocus);
        w->installEventFilter(&filter);
    };
    for (auto* w : panel->findChildren<QComboBox*>())
        guard(w);
    for (auto* w : panel->findChildren<QAbstractSpinBox*>())
        guard(w);
    for (auto* w : panel->findChildren<QAbstractSlider*>())
        guard(w);
}

} // namespace blkmq
