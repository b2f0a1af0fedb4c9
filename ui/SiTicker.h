#pragma once

#include <qcustomplot.h>

#include <QLocale>
#include <QString>

namespace blkmq {

// Tick labels with SI prefixes (400k, 1.2M), not "4·10⁵": the live plots, the exported charts and
// the sweep charts read alike.
QString siLabel(double v, const QLocale& locale = QLocale::c());

class SiTicker final : public QCPAxisTicker {
protected:
    QString getTickLabel(double tick, const QLocale& locale, QChar, int) override { return siLabel(tick, locale); }
};

} // namespace blkmq
