"""The status table as GitHub markdown (the README and the job summary)."""

from __future__ import annotations

from bench.analyse import host
from bench.analyse.profile import describe
from bench.present.escape import markdown as escape
from bench.present.format import DASH, format_delta, format_value
from bench.present.origin import mark_note, origin_note
from bench.present.table import Row, back_at_level, sort_rows, summary

HEADER = ("BACKEND↑", "DEVICE", "MODEL", "MODE", "LATEST", "Δ PREV", "TREND", "RUNS", "STATUS", "NOTE")
NOTE_CHARS = 80  # a failure message is cut here: the table must stay readable


# Marks that read in plain text too (a screen reader, a terminal, a diff),
# not only as colour: what needs a look stands out in any rendering.
STATUS_MARKS = {"Failed": "✖", "Regressed": "▼", "Watch": "⚠", "Faster": "▲", "Stale": "…"}
DELTA_MARKS = {"worse": "▼", "better": "▲"}


def header(by: str = "status") -> tuple[str, ...]:
    """HEADER with the arrow on the column the rows are sorted by."""
    first = "STATUS" if by == "status" else "BACKEND"
    return tuple(h.rstrip("↑") + ("↑" if h.rstrip("↑") == first else "") for h in HEADER)


def render_markdown(rows: list[Row], by: str = "status") -> str:
    """A summary line ('1 Regressed, 22 Steady'), then the table, rows sorted
    `by` 'status' (then name) or 'name' (table.sort_rows)."""
    rows = sort_rows(rows, by)
    head = header(by)
    lines = [f"**{summary(rows)}**"]
    groups = by_unit(rows)
    for unit, better, group in groups:
        # LATEST has no unit of its own: latency (ms) beside throughput (samples/s)
        # would read as one scale, so each unit gets its own table, throughput first.
        lines += [""] + ([f"_{escape(unit)}, {better} is better_", ""] if len(groups) > 1 else [])
        lines += [_line(head), _line(("---",) * len(head))]
        # Record text (labels, failure messages) is escaped cell by cell; the link is ours.
        lines += [_line(tuple(escape(c) for c in cells(r)[:-1]) + (_with_link(r),)) for r in group]
    return "\n".join(lines) + "\n"


def by_unit(rows: list[Row]) -> list[tuple[str, str, list[Row]]]:
    """Rows grouped by (unit, better), order kept within each; samples/s first."""
    groups: dict[tuple[str, str], list[Row]] = {}
    for r in rows:
        groups.setdefault((r.unit, r.better), []).append(r)
    keys = sorted(groups, key=lambda k: (k[0] != "samples/s", k))
    return [(unit, better, groups[(unit, better)]) for unit, better in keys]


def _with_link(r: Row) -> str:
    text = escape(note(r))
    if r.window is not None:
        text += f" [Keras commits]({r.window.commits_url})"
    return text


def status_text(r: Row) -> str:
    mark = STATUS_MARKS.get(r.status)
    return f"{mark} {r.status}" if mark else r.status


def delta_text(r: Row) -> str:
    mark = DELTA_MARKS.get(r.delta_off or "")
    return f"{format_delta(r.delta_prev)} {mark}" if mark else format_delta(r.delta_prev)


def cells(r: Row) -> tuple[str, ...]:
    """The table's text for one row (shared with the HTML page)."""
    return (r.backend, r.device, r.model, r.mode,
            format_value(r.latest) if r.latest is not None else DASH,
            delta_text(r), r.trend or DASH, str(r.runs), status_text(r), note(r))


def note(r: Row) -> str:
    """Why the status says what it says, when that is not obvious, and what
    the host did on the nights it speaks of (bench.analyse.host)."""
    text = _why(r)
    words = host.describe(r.host)
    text = f"{text}; {words}" if text and words else text
    if r.ratio_status is not None and r.status != r.ratio_status:
        ratio = f"context: {r.mode}.vs-ref (the ratio to the reference build) alerts, {r.ratio_status}"
        text = f"{ratio}; {text}" if text else ratio
    return "; ".join(t for t in (text, origin_note(r), mark_note(r)) if t)


def _why(r: Row) -> str:
    if r.status in ("Regressed", "Faster") and r.change is not None:
        c = r.change
        text = f"{format_delta(c.relative)}: {format_value(c.before)} → {format_value(c.after)} {r.unit}"
        text += _window_note(r.window) if r.window is not None else ""
        return text + (f"; ops: {describe(r.ops)}" if r.ops is not None else "")
    if r.status == "Watch" and r.watch is not None:
        level, rel = r.watch
        return (f"newest 2 nights {format_delta(rel)} from {format_value(level)} {r.unit}: "
                "a change if the next night agrees")
    if r.status == "Steady" and r.delta_off and r.level is not None and r.delta_prev is not None:
        if back_at_level(r.latest, r.delta_prev, r.level):
            return f"back at {format_value(r.level)} {r.unit} after an off night"
        return f"one night off {format_value(r.level)} {r.unit}: not a change"
    if r.status in ("Failed", "Skipped") and r.last_failure is not None:
        f = r.last_failure
        text = f"{f.kind}: {' '.join(f.message.split())}"
        return text if len(text) <= NOTE_CHARS else text[:NOTE_CHARS - 1] + "…"
    return ""


def _window_note(w) -> str:
    """'; Keras 3.16.0.dev2026110402 (2026-11-04) → 3.16.0.dev2026110502 (2026-11-05);
    also jax 0.4.30 → 0.4.31': the last nightly before and the first after."""
    text = f"; Keras {w.before.label()} → {w.after.label()}"
    if w.env_changes:
        text += "; also " + ", ".join(c.text() for c in w.env_changes)
    return text


def _line(cells) -> str:
    """Cells already escaped (bench.present.escape.markdown) or our own text."""
    return "| " + " | ".join(cells) + " |"
