#pragma once

class QDockWidget;
class QMainWindow;

namespace blkmq {

// Help: "Keys and mouse" (F1), a sheet of every shortcut the window's actions have, read from the
// actions when it opens, and what the mouse does; "Lessons", which shows the Lessons panel; and
// where the documents are.
void addHelpMenu(QMainWindow* window, QDockWidget* lessons);

} // namespace blkmq
