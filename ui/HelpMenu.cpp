#include "HelpMenu.h"

#include <QAction>
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QDialog>
#include <QDockWidget>
#include <QMainWindow>
#include <QMenuBar>
#include <QMessageBox>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <algorithm>

namespace blkmq {

namespace {
// What the mouse does: no action holds it.
const char* const kMouse[][2] = {
    { "click a CPU, an hctx, a tag map or a request", "shows it in the Inspector and marks it" },
    { "click a row of the event log", "selects its request or CPU" },
    { "double-click a row of the event log", "goes to its time" },
    { "press or drag on the timeline", "shows that time of the run, back or forward" },
    { "click a step of the stall banner", "selects what it is about; \"back to it\" goes to just before it" },
    { "Ctrl+wheel on the canvas", "zooms around the pointer (F fits again)" },
    { "drag the canvas", "moves it" },
    { "Ctrl+wheel or drag on a plot", "looks at a part of the run; Whole run or a double click follows all" },
    { "hover a tag of a tag map", "says who holds it" },
};

QString keySheet(const QMainWindow* window)
{
    struct Row {
        QString keys, what;
    };
    std::vector<Row> rows;
    for (const QAction* a : window->findChildren<QAction*>()) {
        if (a->shortcuts().isEmpty())
            continue;
        QStringList keys;
        for (const QKeySequence& k : a->shortcuts())
            keys << k.toString(QKeySequence::NativeText);
        QString what = a->text().remove(QLatin1Char('&'));
        if (what.isEmpty())
            what = a->toolTip();
        if (!a->toolTip().isEmpty() && a->toolTip() != what && !a->toolTip().startsWith(what))
            what += QStringLiteral(": ") + a->toolTip();
        if (what.isEmpty()) // + and −: the speed
            what = QObject::tr("speed %1")
                       .arg(keys.front() == QLatin1String("+") ? QObject::tr("up") : QObject::tr("down"));
        rows.push_back({ keys.join(QStringLiteral(", ")), what });
    }
    std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.what < b.what; });
    rows.erase(
        std::unique(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.keys == b.keys; }), rows.end());
    QString html = QObject::tr("<h3>Keys</h3><table cellspacing=4>");
    for (const Row& r : rows)
        html += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>")
                    .arg(r.keys.toHtmlEscaped(), r.what.toHtmlEscaped());
    html += QObject::tr("</table><h3>Mouse</h3><table cellspacing=4>");
    for (const auto& [where, what] : kMouse)
        html += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>")
                    .arg(QString::fromUtf8(where).toHtmlEscaped(), QString::fromUtf8(what).toHtmlEscaped());
    return html + QStringLiteral("</table>");
}
} // namespace

void addHelpMenu(QMainWindow* window, QDockWidget* lessons)
{
    auto* help = window->menuBar()->addMenu(QObject::tr("&Help"));
    auto* keys = help->addAction(QObject::tr("Keys and mouse…"), window, [window] {
        auto* sheet = window->findChild<QDialog*>(QStringLiteral("keySheet"));
        if (!sheet) { // one sheet, kept open beside the window while one tries the keys
            sheet = new QDialog(window);
            sheet->setObjectName(QStringLiteral("keySheet"));
            sheet->setWindowTitle(QObject::tr("Keys and mouse"));
            auto* text = new QTextBrowser;
            auto* layout = new QVBoxLayout(sheet);
            layout->addWidget(text);
            sheet->resize(620, 560);
        }
        sheet->findChild<QTextBrowser*>()->setHtml(keySheet(window));
        sheet->show();
        sheet->raise();
    });
    keys->setShortcut(QKeySequence::HelpContents);
    help->addAction(QObject::tr("Lessons"), window, [lessons] {
        lessons->show();
        lessons->raise();
    });
    help->addAction(QObject::tr("Documents"), window, [window] {
        // Installed beside the program (share/doc/blkmqlab), or the source tree's README and docs/.
        const QString installed = QDir(QCoreApplication::applicationDirPath()).filePath(u"../share/doc/blkmqlab"_qs);
        const QString where
            = QFileInfo::exists(installed) ? QDir::cleanPath(installed) : QObject::tr("the source tree");
        QMessageBox::information(window, QObject::tr("Documents"),
            QObject::tr("In %1: README.md, and in docs/ scenario.md (scenario files, the run summary), model.md (what "
                        "is simulated and what each cost is), lessons.md, sessions.md, check.md, sweep.md, "
                        "oracle.md and validation.md.")
                .arg(where));
    });
}

} // namespace blkmq
