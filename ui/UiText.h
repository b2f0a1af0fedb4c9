#pragma once

#include <QString>

#include <string>

namespace blkmq {

// The core's text in the window.
inline QString q(const std::string& s) { return QString::fromStdString(s); }

// Narrative as HTML whose lines never break inside the kernel's arrows (->complete, hctx->dispatch),
// where a break after the hyphen would leave "-" at a line's end and ">complete" on the next: word
// joiners (U+2060) around the hyphen forbid it.
inline QString prose(const std::string& s)
{
    return q(s).toHtmlEscaped().replace(QStringLiteral("-&gt;"), QStringLiteral("\u2060-\u2060&gt;"));
}

// A name or a relation of names as HTML whose lines break at spaces only, never inside a name such
// as queue.0.shared_hctx_restart: a word joiner after each dot forbids the break there.
inline QString unbroken(const std::string& s)
{
    return q(s).toHtmlEscaped().replace(QLatin1Char('.'), QStringLiteral(".\u2060"));
}

} // namespace blkmq
