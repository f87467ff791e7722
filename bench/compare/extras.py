"""The optional record fields a comparison reads beyond value and samples (pure).

All are extensions of schema_version 1 (docs: the record contract), so old
records lack them and a hostile one may carry anything: every reader here
returns "absent" for a field of the wrong shape instead of failing.

- run.ab (read by bench.records.extensions.ab_side, for every stage);
- results[].workers = [{"value", "status", "disturbed", ...}]: one figure
  per worker process (protocol 2);
- results[].latency.p99_ms (mode "latency"; its value is the p50) and
  results[].memory.{host,device}_peak_bytes: figures with one value per
  run, all better: smaller.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

# metric name -> (where in the result, the key there, unit); better is 'smaller' for all.
METRICS = {
    "p99": ("latency", "p99_ms", "ms"),
    "host memory": ("memory", "host_peak_bytes", "bytes"),
    "device memory": ("memory", "device_peak_bytes", "bytes"),
}


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


def metric_values(result: Mapping[str, Any]) -> dict[str, tuple[float, str]]:
    """{metric: (value, unit)} of the one-value-per-run figures present."""
    out = {}
    for name, (group, key, unit) in METRICS.items():
        holder = result.get(group)
        value = holder.get(key) if isinstance(holder, Mapping) else None
        if _positive(value):
            out[name] = (float(value), unit)
    return out


def _worker_value(w: Any, disturbed_too: bool = False) -> float | None:
    if (not isinstance(w, Mapping) or w.get("status") != "ok" or (w.get("disturbed") is True and not disturbed_too)
            or w.get("alone") is True):  # a duet worker's leftover, run without its partner
        return None
    value = w.get("value")
    return float(value) if _positive(value) else None


def _positive(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0
