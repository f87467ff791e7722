"""The comparison as markdown: a sticky pull-request comment or a job summary.

The first line is a hidden marker, so a workflow can find its own comment and
update it. Every piece of text that comes from a record (labels, units, error
messages, environment values, the data folder's name) goes through
`escape`: head records are untrusted (pull-request code wrote them), and a
pipe, backtick, bracket or HTML tag in them must not break the table, inject
markup or mention anyone.

After the legend, a line per target says how fast the host ran for the head
against the baseline (bench.compare.hostshift: a slower host slows every
row, and nothing is rescaled by it); then a warning names each benchmark
that could not have called a slowdown of min_change (too few repeats for
this noise); the table's "sees" column gives the smallest slowdown each could
have called, the note says which rule kept an unchanged row unchanged, and
the footer lists every rule (bench.compare.verdicts.RULES).
"""

from __future__ import annotations

from bench.analyse import host
from bench.present import format as fmt
from bench.present.format import DASH
from bench.compare.jsonout import blind_warning
from bench.compare.outcome import Outcome
from bench.compare.verdicts import Row
from bench.present.escape import markdown as escape  # the one markdown escaper (issue 15)

MARKER = "<!-- keras-nightly-bench:compare -->"
LABELS = {"slower": "🔴 slower", "failed": "❌ failed", "missing": "⚪ missing",
          "faster": "🟢 faster", "new": "🆕 new", "unchanged": "unchanged"}
MAX_MESSAGE = 200  # characters of an error message in a table cell


def render_markdown(outcome: Outcome) -> str:
    lines = [MARKER, f"### Benchmark comparison: {outcome.headline()}", "", _legend(outcome), ""]
    if outcome.hosts:
        lines += ["The host against the baseline (its reference workload runs no Keras code; "
                  "a slower host slows every row):", ""]
        lines += [f"- {escape(h.backend)} on {escape(h.device)}: {host.describe(h.shift)}"  # our own words
                  for h in outcome.hosts] + [""]
    blind = outcome.blind()
    if blind:
        lines += [f"⚠️ {escape(blind_warning(r, outcome.min_change))}" + ("  " if i < len(blind) - 1 else "")
                  for i, r in enumerate(blind)] + [""]
    if outcome.rows:
        lines += _table(outcome)
    if outcome.differences:
        lines += ["", f"<details><summary>Environment differences ({len(outcome.differences)})</summary>",
                  "", "| backend | device | field | base | head |", "|---|---|---|---|---|"]
        lines += [_cells(d.backend, d.device, d.field, d.base or "—", d.head or "—")
                  for d in outcome.differences]
        lines += ["", "</details>"]
    lines += ["", f"<details><summary>Rules ({len(outcome.rules())})</summary>", ""]
    lines += [f"{i}. {rule}" for i, rule in enumerate(outcome.rules(), 1)]  # our own text: no escaping
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
            f"least {o.min_change * 100:g}% and p < {o.alpha:g}, shared across the rows by Benjamini–Hochberg "
            f"(two-sided Mann–Whitney U test of the head's "
            f"repeats and, given 3 or more nights or base runs, a t test of the head as one more of them); "
            f"the interval is a {_confidence(o.alpha)} bootstrap interval of the change; "
            f"\"sees\" is the smallest slowdown it could have called. Every rule is listed below."
            + (" Rows marked A/B worker pairs pair worker i of the base with worker i of the head "
               "(they ran back to back): an exact sign-flip permutation test of the log ratios and the interval it inverts to."
               if any(r.basis == "pairs" for r in o.rows) else ""))


def _table(o: Outcome) -> list[str]:
    head = ["verdict", "backend", "device", "model", "mode", "base", "head", "delta",
            f"{_confidence(o.alpha)} interval", "sees", "note"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in o.rows:
        interval = "—" if r.interval is None else f"{format_delta(r.interval[0])} … {format_delta(r.interval[1])}"
        out.append("| " + " | ".join([
            LABELS[r.verdict], escape(r.backend), escape(r.device), escape(r.model),
            escape(f"{r.mode} {r.metric}" if r.metric else r.mode),
            format_value(r.base, r.unit), format_value(r.head, r.unit), format_delta(r.delta),
            interval, _sees(r), _note(r)]) + " |")
    return out


def _note(r: Row) -> str:
    if r.error is not None:
        message = r.error.message if len(r.error.message) <= MAX_MESSAGE else r.error.message[:MAX_MESSAGE] + "…"
        return escape(f"{r.error.kind}: {message}" if message else r.error.kind)
    if r.verdict == "new":
        return "no baseline"
    if r.verdict == "missing":
        return "not in the head"
    if r.p_value is None:  # a one-value metric with too few base values
        return escape(r.reason or "")
    p = r.p_value if r.p_prediction is None else max(r.p_value, r.p_prediction)  # the deciding one
    if r.basis == "pairs":
        note = f"p={p:.2g}, {r.head_n} A/B worker pairs"
        left = [f"{r.pairs_left_out} pair{'s' * (r.pairs_left_out > 1)}"] if r.pairs_left_out else []
    else:
        against = {"nights": "nights", "runs": "base runs", "samples": "base repeats"}[r.basis]
        note = f"p={p:.2g}, {r.head_n} {'value' if r.metric else 'repeats'} vs {r.base_n} {against}"
        left = [f"{n} {side} dip{'s' * (n > 1)}" for n, side in ((r.head_dips, "head"), (r.base_dips, "base")) if n]
    note += f", {' and '.join(left)} left out" if left else ""
    return note + (f"; {escape(r.reason)}" if r.reason else "")


def _sees(r: Row) -> str:
    """The smallest slowdown the rules could have called ("nothing": none)."""
    if r.p_value is None:
        return "nothing" if r.basis is not None else DASH
    return "nothing" if r.detectable is None else f"≥{r.detectable * 100:.1f}%"


def _cells(*texts: str) -> str:
    return "| " + " | ".join(escape(t) for t in texts) + " |"


def _confidence(alpha: float) -> str:
    return f"{(1 - alpha) * 100:g}%"
