"""Escapers for text that comes from a record (labels, units, messages, URLs).

Records are untrusted input: a pull request's code writes the head records,
and anyone who can get a file onto the data branch writes the rest. One
function per output, used by every writer of that output:

  markdown(text)    inline markdown, safe inside a table cell (README table,
                    job summaries, the PR comment and its footer)
  plain(text)       one line of terminal or log text: whitespace runs become
                    one space and control characters (ESC sequences, a
                    newline that would start a '::' workflow command) show
                    as U+XXXX (bench.records.guard.one_line, also used for
                    publish's refusal lines)
  html              the standard library's html.escape (bench.present.html)
  plot labels       matplotlib Text objects with parse_math=False (plots.py)

`markdown` leaves no way out: whitespace runs (newlines too) become one
space, so a message cannot end the table row or put a marker comment on a
line of its own; & < > become entities, so no HTML tag or comment (the
README's `<!-- bench:table:... -->` markers) survives; markdown punctuation
gets a backslash (no code span, link, image, emphasis or table pipe), and
so does '$' (no GitHub math: `$\\color{red}{\\huge x}$` would recolour and
resize the text around it); '@' gets a zero-width space after it so a record
mentions nobody (nor makes an e-mail link), and so do a URL scheme and 'www'
before their ':' or '.', which GitHub would otherwise turn into a live link
even without brackets, and a '#' or 'GH-' before a number (`#1`,
`owner/repo#1`, `GH-1` would link, and notify, another issue or pull
request); and every character that controls layout (bidirectional
overrides, zero-width joiners, C0/C1 controls) is shown as its code point
instead of acting.
"""

from __future__ import annotations

import re
import unicodedata

from bench.records.guard import one_line as plain

_SPECIAL = re.compile(r"([\\`*_\[\]()#!|~$])")
_AUTOLINK = re.compile(r"(?i)\b(https?|ftp|mailto|www)(?=[:.])")  # GitHub's bare autolinks start so
# GitHub's issue references: #1, owner/repo#1, GH-1 (a backslash does not stop them).
_REFERENCE = re.compile(r"(?i)(#|\bGH-)(?=[0-9])")


def markdown(text: object) -> str:
    """Record text as inert inline markdown (see the module docstring)."""
    s = " ".join(str(text).split())
    # Control (Cc) and format (Cf: bidi overrides, zero-width joiners)
    # characters change how the text around them looks: show them instead.
    s = "".join(f"U+{ord(c):04X}" if unicodedata.category(c) in ("Cc", "Cf") else c for c in s)
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = _AUTOLINK.sub("\\1\u200b", s)
    s = _REFERENCE.sub(lambda m: m.group(1)[:-1] + "\u200b-" if m.group(1) != "#" else "#\u200b", s)
    return _SPECIAL.sub(r"\\\1", s).replace("@", "@\u200b")


__all__ = ["markdown", "plain"]
