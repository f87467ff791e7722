"""A protocol 2 result's per-worker figures, paired by index across two
sides (pure).

results[].workers = [{"value", "status", "disturbed", ...}] is an extension of
schema_version 1 (docs/DESIGN.md, the record contract): old records lack it and
a hostile one may carry anything, so every reader here returns "absent" for an
entry of the wrong shape instead of failing. Measurement (the reference
ratio) and comparison (A/B verdicts) both read it, so it lives with the
records, below both.
"""

from __future__ import annotations

import math
from typing import Any, Mapping


def worker_values(result: Mapping[str, Any], disturbed_too: bool = False) -> tuple[float | None, ...]:
    """Each first-round worker's figure in run order, None for one that
    failed, was disturbed (unless `disturbed_too`), ran `alone` or has no
    usable value (it pairs with nothing); () without a workers list. Reruns
    (`rerun: true`, run once at the end for a disturbed worker) are left
    out: they ran apart from the pairs, so they pair with nothing either; so
    is a duet's calibration worker (`calibration: true`, A's only, run alone
    before the pairs)."""
    return tuple(_worker_value(w, disturbed_too) for w in first_round(result))


def first_round(result: Mapping[str, Any]) -> tuple[Any, ...]:
    """The result's worker entries that pair by index across two sides, in
    run order: all but reruns and a duet's calibration worker (see
    worker_values); () without a workers list."""
    workers = result.get("workers")
    if not isinstance(workers, list):
        return ()
    return tuple(w for w in workers
                 if not (isinstance(w, Mapping) and (w.get("rerun") is True or w.get("calibration") is True)))


def _worker_value(w: Any, disturbed_too: bool = False) -> float | None:
    if (not isinstance(w, Mapping) or w.get("status") != "ok" or (w.get("disturbed") is True and not disturbed_too)
            or w.get("alone") is True):  # a duet worker's leftover, run without its partner
        return None
    value = w.get("value")
    return float(value) if positive(value) else None


def positive(v: Any) -> bool:
    """A finite number above 0, not a bool: a usable figure."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0
