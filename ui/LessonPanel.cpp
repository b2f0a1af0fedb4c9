#include "LessonPanel.h"

#include "UiText.h"

#include <QAbstractItemView>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QStylePainter>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <algorithm>

namespace blkmq {

namespace {

// An item whose whole title is its tooltip too: the box may show it elided (ElidingComboBox).
void addTitle(QComboBox* box, const QString& title, const QVariant& data = {})
{
    box->addItem(title, data);
    box->setItemData(box->count() - 1, title, Qt::ToolTipRole);
}
// A combo box as narrow as the dock that shows a title too long for it with an ellipsis ("…marked
// RESTART" never reads "…marked RESTA") and lists every title whole when it opens.
class ElidingComboBox final : public QComboBox {
public:
    ElidingComboBox()
    {
        setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        setMinimumContentsLength(16);
    }
    void showPopup() override
    {
        int widest = 0;
        for (int i = 0; i < count(); ++i)
            widest = std::max(widest, view()->fontMetrics().horizontalAdvance(itemText(i)));
        view()->setMinimumWidth(widest + 2 * view()->frameWidth() + 24); // 24: the item's margins
        QComboBox::showPopup();
    }

protected:
    void paintEvent(QPaintEvent*) override
    {
        QStylePainter p(this);
        QStyleOptionComboBox opt;
        initStyleOption(&opt);
        p.drawComplexControl(QStyle::CC_ComboBox, opt);
        const QRect field = style()->subControlRect(QStyle::CC_ComboBox, &opt, QStyle::SC_ComboBoxEditField, this);
        opt.currentText = fontMetrics().elidedText(opt.currentText, Qt::ElideRight, field.width());
        p.drawControl(QStyle::CE_ComboBoxLabel, opt);
    }
};
} // namespace

LessonPanel::LessonPanel(QWidget* parent)
    : QWidget(parent)
    , m_choice(new ElidingComboBox)
    , m_title(new QLabel)
    , m_steps(new ElidingComboBox)
    , m_text(new QTextBrowser)
    , m_movedOn(new QLabel)
    , m_back(new QPushButton(tr("◀ Back")))
    , m_replay(new QPushButton(tr("↺ Replay step")))
    , m_next(new QPushButton(tr("Next step ▶")))
{
    auto* l = new QVBoxLayout(this);
    m_choice->addItem(tr("Choose a lesson…"));
    int number = 0; // the lessons as a course, numbered in its order (resources/lessons/course.txt)
    for (const auto& info : Lesson::builtin())
        addTitle(m_choice, QStringLiteral("%1. %2").arg(++number).arg(q(info.title)), q(info.name));
    m_title->setWordWrap(true);
    m_title->setTextFormat(Qt::RichText);
    m_steps->setToolTip(tr("Jump to a step: it is played from its scenario's start"));
    m_text->setMinimumHeight(200);
    m_text->setOpenLinks(false);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_back);
    buttons->addWidget(m_replay);
    buttons->addWidget(m_next);
    m_back->setToolTip(tr("Play the step before this one again, from its scenario's start"));
    m_replay->setToolTip(tr("Play this step again, from its scenario's start"));
    m_next->setToolTip(tr("Play the next step: switch, run to where it happens, check"));
    l->addWidget(m_choice);
    l->addWidget(m_title);
    l->addWidget(m_steps);
    l->addLayout(buttons);
    m_movedOn->setWordWrap(true);
    m_movedOn->setStyleSheet(
        QStringLiteral("QLabel { background: #fef9e7; border: 1px solid #f39c12; padding: 3px; }"));
    m_movedOn->hide();
    l->addWidget(m_movedOn);
    l->addWidget(m_text, 1);
    connect(m_choice, &QComboBox::activated, this, [this](int i) {
        if (i > 0)
            open(m_choice->itemData(i).toString());
    });
    connect(m_next, &QPushButton::clicked, this, &LessonPanel::next);
    connect(m_back, &QPushButton::clicked, this, &LessonPanel::back);
    connect(m_replay, &QPushButton::clicked, this, &LessonPanel::replay);
    connect(m_steps, &QComboBox::activated, this, [this](int item) {
        const int step = item - 1;
        if (step < 0) {
            showStep(m_current);
            return;
        }
        if (step != m_current)
            request(step, step != m_current + 1);
    });
    updateButtons();
}

QString LessonPanel::open(const QString& nameOrPath)
{
    auto l = Lesson::load(nameOrPath.toStdString());
    if (!l)
        return q(l.error());
    m_lesson = std::make_shared<const Lesson>(std::move(*l));
    m_current = -1;
    m_reachedNs = -1;
    m_movedOn->hide();
    m_busy = false;
    m_held = m_failed = 0;
    {
        const QSignalBlocker quiet(m_choice);
        const int i = m_choice->findData(q(m_lesson->name()));
        m_choice->setCurrentIndex(std::max(0, i));
    }
    m_title->setText(QStringLiteral("<b>%1</b><br><i>%2</i>")
                         .arg(q(m_lesson->title()).toHtmlEscaped(), q(m_lesson->source()).toHtmlEscaped()));
    m_steps->clear();
    m_steps->addItem(tr("%1 steps: press Start").arg(m_lesson->size()));
    for (int i = 0; i < m_lesson->size(); ++i)
        addTitle(m_steps,
            tr("Step %1/%2: %3")
                .arg(i + 1)
                .arg(m_lesson->size())
                .arg(q(m_lesson->steps()[static_cast<std::size_t>(i)].title)));
    m_text->setHtml(QStringLiteral("<p>%1</p><p>%2</p>")
                        .arg(prose(m_lesson->summary()),
                            tr("Press <b>Next step</b> to start: each step sets up or switches the kernel, runs to "
                               "where its event happens and checks what must hold there.")));
    updateButtons();
    emit opened();
    return {};
}

void LessonPanel::request(int step, bool fresh)
{
    if (!m_lesson || m_busy || step < 0 || step >= m_lesson->size())
        return;
    m_busy = true;
    m_movedOn->hide();
    updateButtons();
    emit playRequested(step, fresh || m_lesson->segmentStart(step) == step);
}

// Next continues the engine from the step's stop; back, replay, a jump, and Next once the run has
// moved on from the step (Run, the timeline) rebuild the step's scenario and play to it.
void LessonPanel::next() { request(m_current + 1, movedOn()); }

void LessonPanel::back()
{
    if (m_current > 0)
        request(m_current - 1, true);
}

void LessonPanel::replay() { request(m_current, true); }

void LessonPanel::stepReached(int step, const QString& error, const Snapshot& snap)
{
    m_busy = false;
    m_current = step;
    m_reachedNs = snap.now.ns();
    m_movedOn->hide();
    m_held = m_failed = 0;
    const LessonStep& s = m_lesson->steps()[static_cast<std::size_t>(step)];
    QString checks;
    if (!error.isEmpty()) {
        ++m_failed;
        checks = QStringLiteral("<p style='color:#c0392b'><b>%1</b> %2</p>")
                     .arg(tr("Not reached:"), error.toHtmlEscaped());
    } else {
        for (const ExpectationResult& r : m_lesson->check(snap, step)) {
            ++(r.held ? m_held : m_failed);
            // The values under their expectation: each line has the panel's width, so a name fits. A
            // held equality's values say it again ("restarts == 1": "restarts = 1") and are left out.
            const QString text = q(r.text), values = q(r.values);
            const bool restated = r.held && QString(text).replace(u"=="_qs, u"="_qs) == values;
            checks
                += QStringLiteral("<tr><td style='color:%1'>%2</td><td><code>%3</code>%4</td></tr>")
                       .arg(r.held ? QStringLiteral("#1e8449") : QStringLiteral("#c0392b"),
                           r.held ? QStringLiteral("✔") : QStringLiteral("✘"), unbroken(r.text),
                           restated
                               ? QString()
                               : QStringLiteral("<br><span style='color:#566573'>%1</span>").arg(unbroken(r.values)));
        }
        if (!checks.isEmpty())
            checks
                = QStringLiteral("<p><b>%1</b></p><table cellspacing=3>%2</table>").arg(tr("What holds here"), checks);
    }
    m_text->setHtml(QStringLiteral("<h3>%1. %2</h3><p><i>t = %3 µs</i></p><p>%4</p>%5")
                        .arg(step + 1)
                        .arg(prose(s.title))
                        .arg(static_cast<double>(snap.now.ns()) / 1e3, 0, 'f', 3)
                        .arg(prose(s.text), checks));
    showStep(step);
    updateButtons();
}

void LessonPanel::setShownTime(std::int64_t ns)
{
    const bool moved = m_current >= 0 && m_reachedNs >= 0 && ns != m_reachedNs && !m_busy;
    if (moved)
        m_movedOn->setText(tr("The run has moved on to t = %1 µs; step %2 and what holds there are at t = %3 µs "
                              "(Replay step goes back to it).")
                               .arg(static_cast<double>(ns) / 1e3, 0, 'f', 3)
                               .arg(m_current + 1)
                               .arg(static_cast<double>(m_reachedNs) / 1e3, 0, 'f', 3));
    m_movedOn->setVisible(moved);
}

bool LessonPanel::movedOn() const { return !m_movedOn->isHidden(); }

void LessonPanel::showStep(int step)
{
    const QSignalBlocker quiet(m_steps);
    m_steps->setCurrentIndex(step + 1); // item 0 is the lesson before its first step
}

void LessonPanel::updateButtons()
{
    const bool have = m_lesson != nullptr;
    m_next->setEnabled(have && !m_busy && m_current + 1 < m_lesson->size());
    m_back->setEnabled(have && !m_busy && m_current > 0);
    m_replay->setEnabled(have && !m_busy && m_current >= 0);
    m_next->setText(have && m_current < 0 ? tr("Start ▶") : tr("Next step ▶"));
}

} // namespace blkmq
