"""The status table as GitHub markdown (the README and the job summary)."""

from __future__ import annotations

from bench.present.format import DASH, format_delta, format_value
from bench.present.table import Row

HEADER = ("BACKEND↑", "DEVICE", "MODEL", "MODE", "LATEST", "Δ PREV", "TREND", "RUNS", "STATUS", "NOTE")
NOTE_CHARS = 80  # a failure message is cut here: the table must stay readable


def render_markdown(rows: list[Row]) -> str:
    lines = [_line(HEADER), _line(("---",) * len(HEADER))]
    lines += [_line(cells(r)) for r in rows]
    return "\n".join(lines) + "\n"


def cells(r: Row) -> tuple[str, ...]:
    """The table's text for one row (shared with the HTML page)."""
    return (r.backend, r.device, r.model, r.mode,
            format_value(r.latest) if r.latest is not None else DASH,
            format_delta(r.delta_prev), r.trend or DASH, str(r.runs), r.status, note(r))


def note(r: Row) -> str:
    """Why the status says what it says, when that is not obvious."""
    if r.status in ("Regressed", "Faster") and r.change is not None:
        c = r.change
        return f"{format_delta(c.relative)}: {format_value(c.before)} → {format_value(c.after)} {r.unit}"
    if r.status in ("Failed", "Skipped") and r.last_failure is not None:
        f = r.last_failure
        text = f"{f.kind}: {' '.join(f.message.split())}"
        return text if len(text) <= NOTE_CHARS else text[:NOTE_CHARS - 1] + "…"
    return ""


def _line(cells) -> str:
    return "| " + " | ".join(_escape(c) for c in cells) + " |"


def _escape(text: str) -> str:
    # A '|' would split the cell; a newline would end the table.
    return " ".join(text.replace("|", "\\|").split()) if text else ""
