"""Statistics for pull-request deltas: pure functions, no I/O.

Values are throughputs or times in the series' own unit, all > 0. The tests
and the interval are direction-free; only drop_dips needs `better` (which
side a dip lies on); the verdict in bench.compare.verdicts applies it.

- mann_whitney_p: the Mann–Whitney U (Wilcoxon rank-sum) test, two-sided,
  of a run's repeats against the baseline's values: rank-based, so one
  dipped repeat moves it by at most one rank per pair, however deep.
- prediction_p_value: a t test of the head's value as one more night or run:
  the repeats of one run share that night's conditions, so only the spread
  between runs says whether a run is out of the ordinary.
- ratio_interval: the headline change is the ratio of the medians; its
  interval is a seeded bootstrap of that same ratio, so the figure shown and
  its interval agree and the same inputs always give the same interval.
- drop_dips: a shared GPU's deep dips (a busy night, a disturbed repeat)
  say nothing about Keras; they are left out before any of the above.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from statistics import median
from typing import Sequence

import numpy as np

# Above this many pairs the normal approximation is used: it is then accurate
# to well below alpha, and the exact distribution's table would grow as n*m.
EXACT_MAX_PAIRS = 2500
# Enough resamples that a 99 % interval's tails rest on 20 draws each.
BOOTSTRAP_RESAMPLES = 4000
BOOTSTRAP_SEED = 20261201
# A value this far (fraction) and this many robust sigmas worse than its
# group's median is a dip of the machine, not a measurement of Keras.
DIP_DEPTH = 0.10
DIP_SIGMAS = 5.0


@dataclass(frozen=True)
class Comparison:
    """Head samples against baseline values, both in the series' unit.

    base, head: medians (the headline figures); delta = head/base - 1, a
    fraction in the value's own direction (positive = the value went up);
    interval: (lo, hi), the (1 - alpha) confidence interval of head/base - 1;
    p_value: two-sided Mann–Whitney U; base_n, head_n: how many values each.
    """

    base: float
    head: float
    delta: float
    interval: tuple[float, float]
    p_value: float
    base_n: int
    head_n: int

    def __post_init__(self):
        for name in ("base", "head"):
            v = getattr(self, name)
            if not (math.isfinite(v) and v > 0):
                raise ValueError(f"Comparison.{name} is {v!r}; expected a finite number > 0")
        if not 0.0 <= self.p_value <= 1.0:
            raise ValueError(f"Comparison.p_value is {self.p_value!r}; expected a probability in [0, 1]")
        lo, hi = self.interval
        if not lo <= hi:
            raise ValueError(f"Comparison.interval is {self.interval!r}; expected (lo, hi) with lo <= hi")


def compare_samples(head: Sequence[float], base: Sequence[float], alpha: float) -> Comparison:
    """Compare `head` values (a run's repeats) with `base` values (nightly
    values or a base run's repeats). All values must be finite and > 0."""
    _check(head, "head")
    _check(base, "base")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha is {alpha!r}; expected a probability such as 0.01")
    b, h = median(base), median(head)
    return Comparison(
        base=b, head=h, delta=h / b - 1.0,
        interval=ratio_interval(head, base, alpha),
        p_value=mann_whitney_p(head, base),
        base_n=len(base), head_n=len(head),
    )


def drop_dips(values: Sequence[float], better: str, depth: float = DIP_DEPTH,
              sigmas: float = DIP_SIGMAS) -> tuple[tuple[float, ...], int]:
    """(kept values, how many were dips): a dip is a value worse than the
    group's median by more than `depth` (a fraction, 0.10) and by more than
    `sigmas` robust standard deviations (1.4826 MAD of value/median).

    "Worse" is lower when better == 'bigger' (throughput), higher when
    'smaller' (time). A shared GPU makes the odd night or repeat far slower;
    such a value says nothing about Keras, and with 7 values even a rank
    test's interval would stretch to reach it. Only a minority can be dips:
    they lie beyond the median.
    """
    if better not in ("bigger", "smaller"):
        raise ValueError(f"better is {better!r}; expected 'bigger' or 'smaller'")
    mid = median(values)
    rel = [v / mid - 1.0 for v in values]
    spread = 1.4826 * median(abs(r) for r in rel)
    limit = max(depth, sigmas * spread)
    sign = 1.0 if better == "bigger" else -1.0
    kept = tuple(v for v, r in zip(values, rel) if sign * r >= -limit)
    return kept, len(values) - len(kept)


def prediction_p_value(head: float, runs: Sequence[float]) -> float:
    """Two-sided p-value of `head` (one run's value) as one more of the `runs`
    values (one per night or base run): a t prediction test on the log scale,
    t = (log head - mean log runs) / (sd * sqrt(1 + 1/N)), N - 1 degrees of
    freedom.

    Why besides the U test: a run's repeats share that night's conditions
    (clocks, other jobs on a shared card), so they scatter less than runs
    do; against nightly values the U test alone would call an ordinary night
    a change. Drop the dips first: the standard deviation is not robust.
    """
    n = len(runs)
    if n < 2:
        return 1.0  # one run says nothing about the spread of runs
    logs = [math.log(v) for v in runs]
    mean = sum(logs) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (n - 1))
    gap = abs(math.log(head) - mean)
    if sd == 0.0:
        return 1.0 if gap == 0.0 else 0.0
    t = gap / (sd * math.sqrt(1.0 + 1.0 / n))
    df = n - 1
    return _betainc(df / 2.0, 0.5, df / (df + t * t))


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b), by its continued fraction
    (modified Lentz); the two-sided t tail is I_{df/(df+t^2)}(df/2, 1/2)."""
    if x <= 0.0 or x >= 1.0:
        return 0.0 if x <= 0.0 else 1.0
    if x > (a + 1.0) / (a + b + 2.0):
        return 1.0 - _betainc(b, a, 1.0 - x)
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x)) / a
    tiny = 1e-300
    f, c, d = 1.0, 1.0, 0.0
    for i in range(400):
        m = i // 2
        if i == 0:
            num = 1.0
        elif i % 2 == 0:
            num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        else:
            num = -((a + m) * (a + b + m) * x) / ((a + 2 * m) * (a + 2 * m + 1))
        d = 1.0 + num * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + num / c
        c = c if abs(c) > tiny else tiny
        f *= c * d
        if abs(1.0 - c * d) < 1e-14:
            break
    return front * (f - 1.0)


def min_p_value(n: int, m: int) -> float:
    """The smallest two-sided p-value an exact U test of n against m values
    can reach (complete separation): with too few values, no difference is
    ever significant, whatever its size."""
    return min(1.0, 2.0 / math.comb(n + m, n))


def mann_whitney_p(x: Sequence[float], y: Sequence[float]) -> float:
    """Two-sided p-value of the Mann–Whitney U test of x against y.

    Exact (from the null distribution of U) when there are no ties between
    the groups and at most EXACT_MAX_PAIRS pairs; otherwise the normal
    approximation with tie and continuity corrections.
    """
    n, m = len(x), len(y)
    u = u_statistic(x, y)
    pooled = list(x) + list(y)
    tied = len(set(pooled)) < len(pooled)
    if not tied and n * m <= EXACT_MAX_PAIRS:
        cdf = _u_cdf(min(n, m), max(n, m))
        u = int(u)  # an integer without ties
        # U is symmetric about n*m/2, so P(U >= u) = P(U <= n*m - u).
        return min(1.0, 2.0 * cdf[min(u, n * m - u)])
    var = _u_variance(n, m, pooled)
    if var <= 0:
        return 1.0  # every value equal: no evidence of any difference
    z = max(0.0, abs(u - n * m / 2.0) - 0.5) / math.sqrt(var)
    return min(1.0, math.erfc(z / math.sqrt(2.0)))


def u_statistic(x: Sequence[float], y: Sequence[float]) -> float:
    """U of x: the number of pairs (x_i, y_j) with x_i > y_j, ties counting 1/2."""
    return sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in x for b in y)


def ratio_interval(x: Sequence[float], y: Sequence[float], alpha: float,
                   resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED) -> tuple[float, float]:
    """(1 - alpha) bootstrap percentile interval of median(x)/median(y) - 1.

    Both groups are resampled with replacement, each on its own, and the
    ratio of the medians recomputed; the interval is the alpha/2 and
    1 - alpha/2 quantiles. Medians keep it robust: a deep-dip night or a
    dipped repeat moves it only when it would be drawn into the middle of a
    resample. Seeded, so the same inputs always give the same interval.
    """
    rng = np.random.default_rng(seed)
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    mx = np.median(xs[rng.integers(0, len(xs), (resamples, len(xs)))], axis=1)
    my = np.median(ys[rng.integers(0, len(ys), (resamples, len(ys)))], axis=1)
    lo, hi = np.quantile(mx / my - 1.0, [alpha / 2.0, 1.0 - alpha / 2.0])
    return float(lo), float(hi)


def _u_variance(n: int, m: int, pooled: Sequence[float]) -> float:
    total = n + m
    ties = {}
    for v in pooled:
        ties[v] = ties.get(v, 0) + 1
    correction = sum(t ** 3 - t for t in ties.values()) / (total * (total - 1))
    return n * m / 12.0 * ((total + 1) - correction)


@lru_cache(maxsize=256)
def _u_cdf(n: int, m: int) -> tuple[float, ...]:
    """P(U <= u) for u = 0..n*m under the null hypothesis, no ties.

    The counts are the coefficients of the Gaussian binomial [n+m choose n]_q
    = prod_{i=1..n} (1 - q^(m+i)) / (1 - q^i), built by exact integer
    multiplication and division by those factors.
    """
    size = n * m + 1
    poly = [0] * size
    poly[0] = 1
    for i in range(1, n + 1):
        for j in range(size - 1, m + i - 1, -1):  # times (1 - q^(m+i))
            poly[j] -= poly[j - m - i]
        for j in range(i, size):                   # divided by (1 - q^i)
            poly[j] += poly[j - i]
    total = math.comb(n + m, n)
    out, acc = [], 0
    for c in poly:
        acc += c
        out.append(acc / total)
    return tuple(out)


def _check(values: Sequence[float], name: str) -> None:
    if not values:
        raise ValueError(f"{name} values are empty; expected at least one number > 0")
    for v in values:
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise ValueError(f"{name} value {v!r}; expected a finite number > 0")
