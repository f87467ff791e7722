"""The comparison as markdown: a sticky pull-request comment or a job summary.

The first line is a hidden marker, so a workflow can find its own comment and
update it. Every piece of text that comes from a record (labels, units, error
messages, environment values, the data folder's name) goes through
`escape`: head records are untrusted (pull-request code wrote them), and a
pipe, backtick, bracket or HTML tag in them must not break the table, inject
markup or mention anyone.
"""

from __future__ import annotations

from bench.present import format as fmt
from bench.present.format import DASH
from bench.compare.outcome import Outcome
from bench.compare.verdicts import Row
from bench.present.escape import markdown as escape  # the one markdown escaper (issue 15)

MARKER = "<!-- keras-nightly-bench:compare -->"
LABELS = {"slower": "🔴 slower", "failed": "❌ failed", "missing": "⚪ missing",
          "faster": "🟢 faster", "new": "🆕 new", "unchanged": "unchanged"}
MAX_MESSAGE = 200  # characters of an error message in a table cell


def render_markdown(outcome: Outcome) -> str:
    lines = [MARKER, f"### Benchmark comparison: {outcome.headline()}", "", _legend(outcome), ""]
    if outcome.rows:
        lines += _table(outcome)
    if outcome.differences:
        lines += ["", f"<details><summary>Environment differences ({len(outcome.differences)})</summary>",
                  "", "| backend | device | field | base | head |", "|---|---|---|---|---|"]
        lines += [_cells(d.backend, d.device, d.field, d.base or "—", d.head or "—")
                  for d in outcome.differences]
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n"


def format_value(v: float | None, unit: str = "samples/s") -> str:
    """288.7k, 1.2M, 950, 2.53 (bench.present.format.format_value); the unit is shown when it is not samples/s."""
    if v is None:
        return DASH
    text = fmt.format_value(v)
    return text if unit == "samples/s" else f"{text} {escape(unit)}"


format_delta = fmt.format_delta


def _legend(o: Outcome) -> str:
    return (f"Head against the {escape(o.baseline)}. A change is called when the medians differ by at "
            f"least {o.min_change * 100:g}% and p < {o.alpha:g} (two-sided Mann–Whitney U test of the head's "
            f"repeats and, given 3 or more nights or base runs, a t test of the head as one more of them); "
            f"the interval is a {_confidence(o.alpha)} bootstrap interval of the change.")


def _table(o: Outcome) -> list[str]:
    head = ["verdict", "backend", "device", "model", "mode", "base", "head", "delta",
            f"{_confidence(o.alpha)} interval", "note"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in o.rows:
        interval = "—" if r.interval is None else f"{format_delta(r.interval[0])} … {format_delta(r.interval[1])}"
        out.append("| " + " | ".join([
            LABELS[r.verdict], escape(r.backend), escape(r.device), escape(r.model), escape(r.mode),
            format_value(r.base, r.unit), format_value(r.head, r.unit), format_delta(r.delta),
            interval, _note(r)]) + " |")
    return out


def _note(r: Row) -> str:
    if r.error is not None:
        message = r.error.message if len(r.error.message) <= MAX_MESSAGE else r.error.message[:MAX_MESSAGE] + "…"
        return escape(f"{r.error.kind}: {message}" if message else r.error.kind)
    if r.verdict == "new":
        return "no baseline"
    if r.verdict == "missing":
        return "not in the head"
    against = {"nights": "nights", "runs": "base runs", "samples": "base repeats"}[r.basis]
    p = r.p_value if r.p_prediction is None else max(r.p_value, r.p_prediction)  # the deciding one
    note = f"p={p:.2g}, {r.head_n} repeats vs {r.base_n} {against}"
    dips = [f"{n} {side} dip{'s' * (n > 1)}" for n, side in ((r.head_dips, "head"), (r.base_dips, "base")) if n]
    return note + (f", {' and '.join(dips)} left out" if dips else "")


def _cells(*texts: str) -> str:
    return "| " + " | ".join(escape(t) for t in texts) + " |"


def _confidence(alpha: float) -> str:
    return f"{(1 - alpha) * 100:g}%"
