"""Formatting for tables, comments and plots: values, deltas, sparklines.

Pure functions, unit-agnostic: a value is shown in its own unit (the caller
adds it). Used by the report, the site, the PR comparison and the exports.
"""

from __future__ import annotations

import math
from typing import Sequence

BARS = "▁▂▃▄▅▆▇█"
DASH = "—"


def format_value(v: float) -> str:
    """A value for a table cell: 950, 288.7k, 1.2M, 3.4G; small values keep
    three significant digits (12.3, 1.25, 0.0123). Unit-agnostic."""
    if not math.isfinite(v):
        raise ValueError(f"format_value: {v!r}; expected a finite number")
    a = abs(v)
    # A unit is used from where the next smaller one would print 1000:
    # 999,960 reads 1.0M (not 1000.0k); 999.4 reads 999.
    for scale, suffix, start in ((1e9, "G", 999.95e6), (1e6, "M", 999.95e3), (1e3, "k", 999.5)):
        if a >= start:
            return f"{v / scale:.1f}{suffix}"
    if round(a) >= 100:
        return f"{v:.0f}"
    if round(a, 1) >= 10:
        return f"{v:.1f}"
    if round(a, 2) >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


def format_delta(d: float | None) -> str:
    """A fraction as a signed percentage: -0.094 -> '-9.4%'; None -> '—'."""
    if d is None:
        return DASH
    if not math.isfinite(d):
        raise ValueError(f"format_delta: {d!r}; expected a finite fraction or None")
    pct = round(d * 100, 1)
    return f"{pct:+.1f}%" if pct != 0 else "+0.0%"


def sparkline(values: Sequence[float], n: int = 15, levels: Sequence[float] = (),
              band: float = 0.0) -> str:
    """The last `n` values as ▁▂▃▄▅▆▇█, scaled between their min and max.
    A flat run (or a single point) is drawn at the top: '█'.

    With the series' `levels` (its level, or the levels before and after a
    change) and noise `band` (half-width in log value, see
    bench.analyse.trends.band), noise does not look like a swing: a value
    within the band of a level is drawn at that level, and the scale spans
    at least 4 bands (so one bar is at least half a band)."""
    tail = list(values)[-n:] if n > 0 else []
    if not tail:
        return ""
    logs = [math.log(v) for v in levels if v is not None and v > 0]
    if logs and band > 0:
        return _banded(tail, logs, band)
    lo, hi = min(tail), max(tail)
    if hi == lo:
        return BARS[-1] * len(tail)
    top = len(BARS) - 1
    return "".join(BARS[int((v - lo) / (hi - lo) * top + 0.5)] for v in tail)


def _banded(tail: Sequence[float], levels: Sequence[float], band: float) -> str:
    def snap(v: float) -> float:
        near = min(levels, key=lambda lv: abs(v - lv))
        return near if abs(v - near) <= band else v
    x = [snap(math.log(v)) for v in tail]
    lo, hi = min(x), max(x)
    pad = max(0.0, 4 * band - (hi - lo)) / 2  # widen to >= 4 bands, centred
    lo, hi = lo - pad, hi + pad
    top = len(BARS) - 1
    return "".join(BARS[int((v - lo) / (hi - lo) * top + 0.5)] for v in x)
