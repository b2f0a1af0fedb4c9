#include "Banners.h"

#include "UiText.h"

namespace blkmq {

StallBanner::StallBanner(QWidget* parent)
    : QLabel(parent)
{
    setWordWrap(true);
    setTextFormat(Qt::RichText);
    setStyleSheet(QStringLiteral("QLabel { background: #fdecea; color: #7b241c; border: 2px solid #c0392b; "
                                 "border-radius: 4px; padding: 6px; }"));
    hide();
    connect(this, &QLabel::linkActivated, this, [this](const QString& link) {
        if (link.startsWith(QLatin1String("step:")))
            select(link.mid(5).toInt());
        else if (link.startsWith(QLatin1String("back:"))) { // the run just before that step happened
            const int i = link.mid(5).toInt();
            if (i >= 0 && i < static_cast<int>(m_steps.size()))
                emit backRequested(std::max<std::int64_t>(0, m_steps[static_cast<std::size_t>(i)].at.ns() - 1));
        }
    });
}

void StallBanner::showStall(const QString& why, const std::vector<StallStep>& steps)
{
    m_steps = steps;
    m_current = -1;
    setToolTip(why);
    render();
    show();
}

void StallBanner::reset()
{
    hide();
    m_steps.clear();
    m_current = -1;
}

void StallBanner::select(int step)
{
    if (step < 0 || step >= static_cast<int>(m_steps.size()))
        return;
    m_current = step;
    render();
    emit stepSelected(m_steps[static_cast<std::size_t>(step)]);
}

void StallBanner::render()
{
    if (m_steps.empty()) {
        setText(tr("<b>Stall detected.</b> ") + prose(toolTip().toStdString()));
        return;
    }
    QString html = tr("<b>Stall detected.</b> How it came about (click a step to show what it is about):");
    html.append(QStringLiteral("<table cellspacing=\"0\" cellpadding=\"1\">"));
    for (std::size_t i = 0; i < m_steps.size(); ++i) {
        const StallStep& st = m_steps[i];
        const bool current = static_cast<int>(i) == m_current;
        html.append(QStringLiteral(
            "<tr><td>%1.&nbsp;</td><td><a href=\"step:%2\" style=\"color:#7b241c\">t&nbsp;=&nbsp;%3&nbsp;µs"
            "</a>&nbsp;</td><td>%4%5%6</td><td>&nbsp;<a href=\"back:%2\" style=\"color:#7b241c\">%7</a></td></tr>")
                        .arg(i + 1)
                        .arg(i)
                        .arg(static_cast<double>(st.at.ns()) / 1e3, 0, 'f', 3)
                        .arg(current ? QStringLiteral("<b>") : QString(), prose(st.text),
                            current ? QStringLiteral("</b>") : QString(), tr("back&nbsp;to&nbsp;it")));
    }
    html.append(QStringLiteral("</table>"));
    setText(html);
}

RaceBanner::RaceBanner(QWidget* parent)
    : QLabel(parent)
{
    setWordWrap(true);
    setTextFormat(Qt::RichText);
    setStyleSheet(QStringLiteral("QLabel { background: #fef5e7; color: #7e5109; border: 2px solid "
                                 "#e67e22; border-radius: 4px; padding: 6px; }"));
    hide();
}

void RaceBanner::showRace(const QString& what)
{
    setText(tr("<b>Tag race.</b> ") + what.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>")));
    show();
}

} // namespace blkmq
