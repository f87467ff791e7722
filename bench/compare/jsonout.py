"""The comparison as JSON: the same facts as the markdown, for machines.

{"benchmarks": [{backend, device, model, mode, base, head, delta, verdict,
  interval, p_value, unit, better, base_n, head_n, basis, error}, ...],
 "counts": {verdict: n}, "environment": [{backend, device, field, base, head}],
 "baseline": "...", "min_change": 0.03, "alpha": 0.01}

base/head are medians in `unit`, delta = head/base - 1 (a fraction, null when
either is missing), interval = [lo, hi] of that fraction or null, error =
{kind, message} or null. Keys are sorted, as in every JSON bench writes.
"""

from __future__ import annotations

from dataclasses import asdict

from bench.records.record import dumps
from bench.compare.outcome import Outcome
from bench.compare.verdicts import Row


def render_json(outcome: Outcome) -> str:
    return dumps({
        "benchmarks": [_row(r) for r in outcome.rows],
        "counts": outcome.counts(),
        "environment": [asdict(d) for d in outcome.differences],
        "baseline": outcome.baseline,
        "min_change": outcome.min_change,
        "alpha": outcome.alpha,
    })


def _row(r: Row) -> dict:
    d = asdict(r)
    d["interval"] = list(r.interval) if r.interval is not None else None
    d["error"] = {"kind": r.error.kind, "message": r.error.message} if r.error else None
    return d
