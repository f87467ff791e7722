"""Batch-1 latency: time N single calls, report p50/p90/p99/mean in ms (pure).

The workload is `call()`, one batch-1 inference that returns only when its
result is on the host (the child wraps `model.predict_on_batch` plus the
backend's sync). The clock is injected, so tests drive it with a fake one.

Protocol: `warmup_calls` untimed calls (the first one compiles), then `calls`
timed calls, each between two reads of a monotonic clock. Every per-call time
is kept (`samples_ms`), so a reader (or `bench compare`) can test the whole
distribution, not only its percentiles. Percentiles use numpy's default
(linear interpolation between order statistics). Times are milliseconds;
smaller is better.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

Clock = Callable[[], float]  # monotonic seconds
MIN_CALLS = 200  # issue 13: at least 200 timed calls per worker
PATH = "predict_on_batch"  # the one user path timed: Keras's compiled single-batch predict


@dataclass(frozen=True)
class Latency:
    """The timed calls of one latency benchmark, in ms (smaller is better)."""

    samples_ms: tuple[float, ...]
    path: str = PATH

    def __post_init__(self):
        if len(self.samples_ms) < 1:
            raise ValueError("Latency.samples_ms is empty; expected at least one timed call")
        bad = [s for s in self.samples_ms if not (s >= 0 and np.isfinite(s))]
        if bad:
            raise ValueError(f"Latency.samples_ms holds {bad[:3]!r}; expected finite times >= 0 ms")

    def percentile(self, q: float) -> float:
        return float(np.percentile(self.samples_ms, q))

    @property
    def p50_ms(self) -> float:
        return self.percentile(50)

    def summary(self) -> dict:
        """The record's `latency` block (contract: p50_ms, p90_ms, p99_ms, mean_ms, calls, path)."""
        return {"p50_ms": _r(self.percentile(50)), "p90_ms": _r(self.percentile(90)),
                "p99_ms": _r(self.percentile(99)), "mean_ms": _r(float(np.mean(self.samples_ms))),
                "calls": len(self.samples_ms), "path": self.path}


def _r(ms: float) -> float:
    return round(ms, 6)  # nanosecond resolution: far below any clock's noise


def measure(call: Callable[[], object], calls: int = MIN_CALLS, warmup_calls: int = 20,
            clock: Clock = time.perf_counter, path: str = PATH) -> Latency:
    """Warm up, then time `calls` single calls of `call()`."""
    if calls < 1 or warmup_calls < 0:
        raise ValueError(f"latency calls={calls!r}, warmup_calls={warmup_calls!r}; "
                         f"expected calls >= 1 and warmup_calls >= 0")
    for _ in range(warmup_calls):
        call()
    out = []
    for _ in range(calls):
        t0 = clock()
        call()
        out.append((clock() - t0) * 1000.0)
    return Latency(tuple(out), path)


def combine(blocks: list[dict]) -> dict:
    """One `latency` block from several workers' blocks: the median worker's
    figure for each percentile and the mean (so p50_ms agrees with a median
    headline over the workers), every timed call counted."""
    import statistics

    out = {k: round(statistics.median(b[k] for b in blocks), 6) for k in ("p50_ms", "p90_ms", "p99_ms", "mean_ms")}
    out.update(calls=sum(b["calls"] for b in blocks), path=blocks[0]["path"], workers=len(blocks))
    return out
