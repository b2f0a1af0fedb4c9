#include "Inspector.h"

#include "EngineRunner.h"
#include "EventLogModel.h"
#include "Palette.h"
#include "TagMapItem.h"
#include "UiText.h"
#include "io/Text.h"

#include <map>

#include <QDockWidget>
#include <QLabel>
#include <QTextBrowser>

namespace blkmq {

Inspector::Inspector(EngineRunner* runner, TopologyScene* scene, QObject* parent)
    : QObject(parent)
    , m_runner(runner)
    , m_scene(scene)
    , m_view(new QTextBrowser)
    , m_kernelPath(new QLabel)
{
    m_kernelPath->setTextFormat(Qt::RichText);
    m_kernelPath->setWordWrap(true);
    m_kernelPath->setStyleSheet(QStringLiteral("QLabel { border-top: 1px solid #bdc3c7; padding: 3px; }"));
    m_kernelPath->setToolTip(tr("What the selected CPU executes now, outermost level first: the task it runs or "
                                "interrupted, the softirq that irq_exit runs, the hardirq. Bold: executing now."));
}

void Inspector::clear()
{
    m_selection = {};
    m_selectionScript = -1;
    m_view->clear();
}

QString Inspector::inspect(const QString& what)
{
    const QStringList parts = what.split(QLatin1Char(':'));
    bool ok = false;
    const int index = parts.size() == 2 ? parts[1].toInt(&ok) : -1;
    const bool cpu = parts.value(0) == QLatin1String("cpu");
    const bool hctx = parts.value(0) == QLatin1String("hctx");
    if (!ok || (!cpu && !hctx))
        return tr("takes cpu:N or hctx:N (got '%1')").arg(q(printable(what.toStdString())));
    const auto snap = m_runner->snapshot();
    const int count = !snap ? 0 : static_cast<int>(cpu ? snap->cpus.size() : snap->hctxs.size());
    if (index < 0 || index >= count)
        return tr("%1 %2 does not exist (0..%3)").arg(parts[0]).arg(index).arg(count - 1);
    select({ cpu ? ObjectRef::Kind::Cpu : ObjectRef::Kind::Hctx, index });
    return {};
}

void Inspector::select(const ObjectRef& s, int script)
{
    m_selectionScript = s.kind == ObjectRef::Kind::Request && s.index == m_selection.index
        ? (script >= 0 ? script : m_selectionScript)
        : script;
    m_selection = s;
    if (s.kind == ObjectRef::Kind::Request)
        m_scene->setFollowed(s.index);
    m_scene->setSelected(s); // the canvas marks what the inspector shows (a request: the token it follows)
    refresh();
    for (QWidget* w = m_view; w; w = w->parentWidget())
        if (auto* dock = qobject_cast<QDockWidget*>(w))
            dock->raise();
    emit selected();
}

void Inspector::saveTo(nlohmann::json& view) const
{
    const ObjectRef& s = m_selection;
    if (s.kind == ObjectRef::Kind::Cpu || s.kind == ObjectRef::Kind::Hctx)
        view["inspect"] = (s.kind == ObjectRef::Kind::Cpu ? "cpu:" : "hctx:") + std::to_string(s.index);
}

QString Inspector::restore(const nlohmann::json& view)
{
    if (!view.contains("inspect")) // checked against this machine: one it lacks is said, not shown
        return {};
    const QString err = inspect(q(view["inspect"].get<std::string>()));
    return err.isEmpty() ? err : tr("view.inspect: %1").arg(err);
}

void Inspector::select(const TraceRecord& r)
{
    if (r.rq >= 0)
        select({ ObjectRef::Kind::Request, r.rq }, r.script);
    else if (r.cpu >= 0)
        select({ ObjectRef::Kind::Cpu, r.cpu });
}

void Inspector::show(const ObjectRef& s, int script)
{
    if (s.kind == ObjectRef::Kind::Request) {
        m_scene->setFollowed(s.index);
        m_selectionScript = script;
    }
    m_selection = s;
}

void Inspector::refreshKernelPath()
{
    const auto snap = m_runner->snapshot();
    int cpu = -1;
    if (snap) {
        if (m_selection.kind == ObjectRef::Kind::Cpu)
            cpu = m_selection.index;
        else if (m_selection.kind == ObjectRef::Kind::Hctx && m_selection.index < static_cast<int>(snap->hctxs.size()))
            cpu = snap->hctxs[static_cast<std::size_t>(m_selection.index)].vectorCpu;
        else if (m_selection.kind == ObjectRef::Kind::Request)
            for (const RequestSnapshot& r : snap->requests)
                if (r.id == m_selection.index)
                    cpu = r.atCpu >= 0 ? r.atCpu : r.cpu;
    }
    QString html;
    if (cpu < 0 || cpu >= static_cast<int>(snap->cpus.size())) {
        html = tr("<span style=\"color:#7f8c8d\">Kernel path: click a CPU to see what it executes, level by "
                  "level</span>");
    } else {
        const CpuSnapshot& c = snap->cpus[static_cast<std::size_t>(cpu)];
        html = tr("<b>CPU %1</b>&nbsp; ").arg(cpu);
        if (c.kernelDepth == 0)
            html += tr("idle");
        const QString arrow = QStringLiteral(" → ");
        for (int i = 0; i < c.kernelDepth; ++i) {
            const KernelFrame& f = c.kernelPath[static_cast<std::size_t>(i)];
            if (i > 0)
                html += QStringLiteral(" <span style=\"color:#7f8c8d\">⇢</span> ");
            const bool idleTask = f.level == KernelFrame::Level::Task && c.currentTask < 0; // swapper
            const QColor bg = Palette::contextColour(f.context, idleTask);
            const QString label = f.task ? QString::fromUtf8(f.task) : QString::fromLatin1(execContextName(f.context));
            html += QStringLiteral("<span style=\"background:%1\">&nbsp;%2&nbsp;</span> ")
                        .arg(bg.name(), label.toHtmlEscaped());
            QString path;
            for (const char* part : { f.via, f.caller, f.path })
                if (part)
                    path += (path.isEmpty() ? QString() : arrow) + QString::fromUtf8(part).toHtmlEscaped();
            html += f.running ? QStringLiteral("<b>%1</b>").arg(path)
                              : QStringLiteral("<span style=\"color:#566573\">%1</span>").arg(path);
        }
    }
    if (html != m_kernelPath->text())
        m_kernelPath->setText(html);
}

void Inspector::refresh()
{
    refreshKernelPath();
    const auto snap = m_runner->snapshot();
    if (!snap || m_selection.kind == ObjectRef::Kind::None)
        return;
    QString html;
    switch (m_selection.kind) {
    case ObjectRef::Kind::Cpu: {
        const CpuSnapshot& c = snap->cpus[static_cast<std::size_t>(m_selection.index)];
        html = QStringLiteral("<h3>CPU %1</h3><p>%2</p><p>pending softirqs: %3<br>blk_cpu_done: %4 request(s)<br>"
                              "call-function queue: %5</p><table>")
                   .arg(m_selection.index)
                   .arg(c.idle ? tr("idle") : tr("running in %1").arg(QString::fromLatin1(execContextName(c.running))))
                   .arg(EventLogModel::softirqNames(c.softirqPending))
                   .arg(c.doneListLen)
                   .arg(c.callSingleLen);
        for (int k = 0; k < kExecContexts; ++k)
            html += QStringLiteral("<tr><td>%1</td><td align=right>%2 µs</td></tr>")
                        .arg(QString::fromLatin1(execContextName(static_cast<ExecContext>(k))))
                        .arg(static_cast<double>(c.busy_ns[static_cast<std::size_t>(k)]) / 1e3, 0, 'f', 1);
        html += QStringLiteral("</table>");
        const auto& p = c.restartProfile; // ftrace's function profile, as in Roman Pen's table
        html += QStringLiteral("<p><b>blk_mq_sched_restart</b> (entry to return, nested interrupts included)<br>"
                               "hits %1, time %2 µs, avg %3 µs, s² %4 µs²</p>")
                    .arg(p.hits)
                    .arg(static_cast<double>(p.total_ns) / 1e3, 0, 'f', 3)
                    .arg(p.avg_ns() / 1e3, 0, 'f', 3)
                    .arg(p.s2_us2(), 0, 'f', 3);
        break;
    }
    case ObjectRef::Kind::Hctx: {
        const HctxSnapshot& h = snap->hctxs[static_cast<std::size_t>(m_selection.index)];
        html = QStringLiteral(
            "<h3>%1 hctx %2</h3><p>interrupt vector on CPU %3<br>hctx->dispatch: %4<br>scheduler FIFO: %5<br>"
            "at the device: %6<br>completion queue: %7<br>RESTART: %8<br>driver tags: %9 of %10 in use, %11 held "
            "here</p>")
                   .arg(q(m_runner->scenario().devices[static_cast<std::size_t>(h.dev)].name))
                   .arg(h.index)
                   .arg(h.vectorCpu)
                   .arg(h.dispatchLen)
                   .arg(h.schedLen)
                   .arg(h.atDevice)
                   .arg(h.cqLen)
                   .arg(h.restart ? tr("<b>set</b>") : tr("clear"))
                   .arg(h.tagsInUse)
                   .arg(h.tagDepth)
                   .arg(h.tagsHeld);
        break;
    }
    case ObjectRef::Kind::Request: {
        auto it = std::find_if(
            snap->requests.begin(), snap->requests.end(), [&](auto& r) { return r.id == m_selection.index; });
        if (it == snap->requests.end()) {
            html = tr("<h3>%1</h3><p>completed.</p>")
                       .arg(EventLogModel::requestName(m_selection.index, m_selectionScript, m_scriptIds));
            break;
        }
        m_selectionScript = it->script;
        html = tr("<h3>%1</h3><p>%2%3<br>submitted on CPU %4 at %5 µs<br>%6<br>%7</p>")
                   .arg(EventLogModel::requestName(it->id, it->script, m_scriptIds))
                   .arg(QString::fromLatin1(rqStateWhere(it->state)))
                   .arg(it->stuck ? tr(" — <b style='color:#c0392b'>stuck</b>") : QString())
                   .arg(it->cpu)
                   .arg(static_cast<double>(it->submitted_ns) / 1e3, 0, 'f', 3)
                   .arg(q(m_runner->scenario()
                                .devices[static_cast<std::size_t>(snap->hctxs[static_cast<std::size_t>(it->hctx)].dev)]
                                .name)
                       + tr(" hctx %1").arg(snap->hctxs[static_cast<std::size_t>(it->hctx)].index))
                   .arg(it->state >= RqState::AtDevice
                           ? tr("dispatched at %1 µs").arg(static_cast<double>(it->dispatched_ns) / 1e3, 0, 'f', 3)
                           : tr("not dispatched yet"));
        break;
    }
    case ObjectRef::Kind::Tags: {
        const HctxSnapshot& h = snap->hctxs[static_cast<std::size_t>(m_selection.index)];
        const auto& map = snap->tagMaps[static_cast<std::size_t>(h.tags)];
        QStringList used, lost;
        std::map<int, QStringList> cached; // by CPU
        for (std::size_t t = 0; t < map.size(); ++t) {
            if (map[t] == kTagInUse)
                used << QString::number(t);
            else if (map[t] == kTagLost)
                lost << QString::number(t);
            else if (map[t] >= 0)
                cached[map[t]] << QString::number(t);
        }
        QString caches;
        for (const auto& [cpu, tags] : cached)
            caches += tr("<br><span style='color:%1'>&#9632;</span> CPU %2 caches %3")
                          .arg(Palette::cacheColour(cpu).name())
                          .arg(cpu)
                          .arg(tags.join(QStringLiteral(", ")));
        if (!lost.isEmpty())
            caches += tr("<br><b>lost</b> (neither free nor in use, ida-lock-split): %1")
                          .arg(lost.join(QStringLiteral(", ")));
        html = tr("<h3>driver tags of %1 hctx %2</h3><p>%3 of %4 in use%5</p><p>in use: %6%7</p>")
                   .arg(q(m_runner->scenario().devices[static_cast<std::size_t>(h.dev)].name))
                   .arg(h.index)
                   .arg(h.tagsInUse)
                   .arg(h.tagDepth)
                   .arg(h.tagsHeld != h.tagsInUse ? tr(" (%1 by this hctx; the set is shared)").arg(h.tagsHeld)
                                                  : QString())
                   .arg(used.isEmpty() ? tr("none") : used.join(QStringLiteral(", ")))
                   .arg(caches);
        break;
    }
    case ObjectRef::Kind::Queue: // outlined, not inspected
    case ObjectRef::Kind::None:
        break;
    }
    m_view->setHtml(html);
}

void Inspector::pointAt(const StallStep& st)
{
    std::vector<ObjectRef> marks;
    const ObjectRef sel = blkmq::pointAt(st.object, marks);
    m_scene->setHighlights(marks);
    if (sel.kind != ObjectRef::Kind::None)
        select(sel);
}

ObjectRef pointAt(const ObjectRef& object, std::vector<ObjectRef>& marks)
{
    if (object.kind == ObjectRef::Kind::None)
        return {};
    if (object.kind != ObjectRef::Kind::Request) // a request: the inspector's token, which moves
        marks.push_back(object);
    return object.kind == ObjectRef::Kind::Queue ? ObjectRef {} : object;
}

} // namespace blkmq
