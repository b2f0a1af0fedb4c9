#pragma once

class QWidget;

namespace blkmq {

// A setting changes on a deliberate click or key, never because the wheel passed over it: the
// combo boxes, spin boxes and sliders under `panel` take the wheel only while they have the keyboard
// focus (a click or Tab gives it); otherwise the wheel goes on to what holds them, so scrolling a
// panel scrolls it. They no longer take the focus from the wheel either.
void guardWheel(QWidget* panel);

} // namespace blkmq
