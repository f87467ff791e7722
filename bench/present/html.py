"""The status table as a standalone HTML page (no scripts, no external files).

Every text that comes from the data (labels, failure messages) is escaped:
record files are untrusted input.
"""

from __future__ import annotations

from html import escape

from bench.present.markdown import HEADER, cells, header
from bench.present.palette import palette
from bench.present.table import Row, sort_rows, summary

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; }
th, td { padding: .3em .7em; border-bottom: 1px solid #ddd; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.trend { font-family: monospace; letter-spacing: -1px; }
.Regressed, .Failed, .Faster { font-weight: bold; }
.worse { color: %(Regressed)s; } .better { color: %(Faster)s; }
""" % palette() + "".join(f".{s} {{ color: {c}; }}\n" for s, c in palette().items())
_NUMERIC = {"LATEST", "Δ PREV", "RUNS"}


def render_html(rows: list[Row], title: str = "Keras Nightly Bench", by: str = "status") -> str:
    rows = sort_rows(rows, by)
    head = "".join(f"<th>{escape(h)}</th>" for h in header(by))
    body = "\n".join(_row(r) for r in rows)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{escape(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
        f"<h1>{escape(title)}</h1>\n<p class=\"summary\"><strong>{escape(summary(rows))}</strong></p>\n<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n"
        "</table>\n</body>\n</html>\n"
    )


def _row(r: Row) -> str:
    tds = []
    for name, text in zip(HEADER, cells(r)):
        cls = "num" if name in _NUMERIC else "trend" if name == "TREND" else ""
        if name == "STATUS":
            cls = escape(r.status)
        if name == "Δ PREV" and r.delta_off:  # colour only a move beyond the noise band
            cls += f" {r.delta_off}"
        attr = f' class="{cls}"' if cls else ""
        link = ""
        if name == "NOTE" and r.window is not None:
            link = f' <a href="{escape(r.window.commits_url)}">Keras commits</a>'
        tds.append(f"<td{attr}>{escape(text)}{link}</td>")
    return "<tr>" + "".join(tds) + "</tr>"
