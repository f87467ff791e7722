"""The optional record fields a comparison reads beyond value and samples (pure).

All are extensions of schema_version 1 (docs: the record contract), so old
records lack them and a hostile one may carry anything: every reader here
returns "absent" for a field of the wrong shape instead of failing.

- run.ab (read by bench.records.extensions.ab_side, for every stage);
- results[].workers: bench.records.workers;
- results[].latency.p99_ms (mode "latency"; its value is the p50) and
  results[].memory.{host,device}_peak_bytes: figures with one value per
  run, all better: smaller.
"""

from __future__ import annotations

from typing import Any, Mapping

from bench.records.workers import positive

# metric name -> (where in the result, the key there, unit); better is 'smaller' for all.
METRICS = {
    "p99": ("latency", "p99_ms", "ms"),
    "host memory": ("memory", "host_peak_bytes", "bytes"),
    "device memory": ("memory", "device_peak_bytes", "bytes"),
}


def metric_values(result: Mapping[str, Any]) -> dict[str, tuple[float, str]]:
    """{metric: (value, unit)} of the one-value-per-run figures present."""
    out = {}
    for name, (group, key, unit) in METRICS.items():
        holder = result.get(group)
        value = holder.get(key) if isinstance(holder, Mapping) else None
        if positive(value):
            out[name] = (float(value), unit)
    return out
