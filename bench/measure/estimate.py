"""The headline over a benchmark's workers, its spread, and when it is unstable. Pure.

Every worker process gives one figure (the median of its own timed repeats).
The headline is HEADLINE over the clean workers' figures. The candidates are
all here so scripts/bench_stability.py can compare them on the same records:

  median   median of the worker medians (the default; see HEADLINE)
  best     the best worker (max for bigger-is-better, min for times)
  trimmed  mean of the workers after dropping the best and the worst

Units are those of the figures (samples/s, ms); `better` says which way is good.
"""

from __future__ import annotations

import statistics
from typing import Sequence

# Chosen from scripts/bench_stability.py (README "Measuring honestly"): on the
# 2-core development VM the median of worker medians had the smallest spread
# across 5 invocations among the candidates that never rescale by a single
# process; "best" follows whichever process was luckiest and moves with it.
HEADLINE = "median"


def median(values: Sequence[float], better: str = "bigger") -> float:
    return statistics.median(values)


def best(values: Sequence[float], better: str = "bigger") -> float:
    return max(values) if better == "bigger" else min(values)


def trimmed(values: Sequence[float], better: str = "bigger") -> float:
    v = sorted(values)
    return statistics.fmean(v[1:-1] if len(v) > 2 else v)


ESTIMATORS = {"median": median, "best": best, "trimmed": trimmed}


def headline(values: Sequence[float], better: str = "bigger", how: str = HEADLINE) -> float:
    if not values:
        raise ValueError("headline: no worker figures; expected at least one")
    if how not in ESTIMATORS:
        raise ValueError(f"headline: estimator {how!r}; expected one of {', '.join(ESTIMATORS)}")
    return ESTIMATORS[how](values, better)


def spread(values: Sequence[float], centre: float) -> float:
    """Largest relative distance of a worker's figure from the headline (0.03 = 3 %)."""
    return max((abs(v / centre - 1) for v in values), default=0.0) if centre else 0.0


def unstable(values: Sequence[float], centre: float, limit: float) -> str | None:
    """Why the result may be unstable (pyperf's 'may be unstable'), or None.

    Unstable: fewer than two clean workers to agree, or a worker further than
    `limit` (harness.unstable_spread) from the headline.
    """
    if len(values) < 2:
        return f"only {len(values)} clean worker"
    s = spread(values, centre)
    if s > limit:
        return f"the workers spread ±{100 * s:.1f}% around the headline (over ±{100 * limit:.0f}%)"
    return None
