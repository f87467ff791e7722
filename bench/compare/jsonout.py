"""The comparison as JSON: the same facts as the markdown, for machines.

{"benchmarks": [{backend, device, model, mode, metric, base, head, delta,
  verdict, reason, interval, p_value, unit, better, base_n, head_n, basis,
  detectable, error, ...}, ...],
 "counts": {verdict: n}, "environment": [{backend, device, field, base, head}],
 "baseline": "...", "min_change": 0.03, "alpha": 0.01,
 "rules": ["...", ...], "warnings": ["too few repeats to see 3% in ...", ...],
 "hosts": [{backend, device, shift}, ...]}

metric is "" for the benchmark's own value, else e.g. "p99" or "host
memory"; reason says which rule kept an unchanged row unchanged;
detectable is the smallest slowdown (a fraction) the rules could have
called, null when not compared or when none could be.

base/head are medians in `unit`, delta = head/base - 1 (a fraction, null when
either is missing), interval = [lo, hi] of that fraction or null, error =
{kind, message} or null. hosts: per target, the head's reference workload
against the baseline's (bench.compare.hostshift; a fraction, positive: the
host ran slower for the head), only where both have one of the same kind.
Keys are sorted, as in every JSON bench writes.
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
        "rules": list(outcome.rules()),
        "warnings": [blind_warning(r, outcome.min_change) for r in outcome.blind()],
        "hosts": [asdict(h) for h in outcome.hosts],
    })


def blind_warning(r: Row, min_change: float) -> str:
    """One line: which benchmark cannot see min_change, and what it can see (plain text)."""
    name = "/".join((r.backend, r.device, r.model, r.mode) + ((r.metric,) if r.metric else ()))
    sees = ("no change at all" if r.detectable is None
            else f"only changes of {r.detectable * 100:.1f}% or more")
    return f"too few repeats to see {min_change * 100:g}% in {name}: it could call {sees}"


def _row(r: Row) -> dict:
    d = asdict(r)
    d["interval"] = list(r.interval) if r.interval is not None else None
    d["error"] = {"kind": r.error.kind, "message": r.error.message} if r.error else None
    return d
