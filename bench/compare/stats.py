"""Statistics for pull-request deltas: pure functions, no I/O, on scipy.stats.

Values are throughputs or times in the series' own unit, all > 0. The tests
and the intervals are direction-free; only drop_dips needs `better` (which
side a dip lies on); the verdict in bench.compare.verdicts applies it.

- mann_whitney_p: scipy.stats.mannwhitneyu, two-sided, of a run's repeats
  against the baseline's values: rank-based, so one dipped repeat moves it
  by at most one rank per pair, however deep.
- prediction_p_value: a t test of the head's value as one more night or run:
  the repeats of one run share that night's conditions, so only the spread
  between runs says whether a run is out of the ordinary.
- ratio_interval: the headline change is the ratio of the medians; its
  interval is a seeded scipy.stats.bootstrap (percentile) of that same ratio,
  so the figure shown and its interval agree and the same inputs always give
  the same interval. Resamples are drawn in batches: memory stays bounded.
- compare_pairs: a same-machine A/B run, worker i of A against worker i of
  B: an exact sign-flip permutation test of the pairs' log ratios
  (sign_flip_p), and the interval that test inverts to (sign_flip_interval).
  Under "no change" each pair's ratio is as likely one way round as the
  other, whatever the noise's shape, so the test is valid at 8 pairs, where a
  t test rests on a normality nobody can check. No pair is ever left out for
  its value: a far-off pair moves the mean, and the test counts it.
- bh_levels: Benjamini–Hochberg across the rows of one comparison: the
  level each row's p-value must meet, given the others'.
- drop_dips: a shared GPU's deep dips (a busy night, a disturbed repeat)
  say nothing about Keras; they are left out of the unpaired tests (nights
  and repeats), never out of pairs.

Measured against the hand-written versions these replace (issue 15,
studies/bench_compare_stats.py): the same p-values and intervals; scipy's U
test costs ~0.7 ms a call instead of ~20 us, which no comparison notices.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from statistics import median
from typing import Sequence

import numpy as np
from scipy import special, stats as sps

# Above this many pairs the normal approximation is used: it is then accurate
# to well below alpha, and the exact distribution grows as n*m.
EXACT_MAX_PAIRS = 2500
# Up to this many (head, base) pairs the U test's critical scale is found
# among the exact crossing points (their ratios, 8 bytes each); beyond, by
# bisection of the factor itself.
CANDIDATES_MAX = 1_000_000
# Enough resamples that a 99 % interval's tails rest on 20 draws each.
BOOTSTRAP_RESAMPLES = 4000
BOOTSTRAP_SEED = 20261201
# Values resampled at once per group (resamples x values): bounds the
# bootstrap's memory (~3 arrays of this many 8-byte numbers, ~50 MB) whatever
# the sample size; up to 500 values all 4000 resamples fit in one batch.
BOOTSTRAP_BATCH_VALUES = 2_000_000
# A value this far (fraction) and this many robust sigmas worse than its
# group's median is a dip of the machine, not a measurement of Keras.
DIP_DEPTH = 0.10
DIP_SIGMAS = 5.0
# Sign patterns of up to this many pairs are all enumerated (2^16 = 65,536:
# ~10 ms); beyond, SIGN_FLIP_DRAWS (16,384) seeded random patterns (a Monte Carlo
# p-value, (hits + 1) / (draws + 1), never below its true value on average).
EXACT_SIGN_FLIP_PAIRS = 16
SIGN_FLIP_DRAWS = 2 ** 14
SIGN_FLIP_SEED = 20261207


@dataclass(frozen=True)
class Comparison:
    """Head samples against baseline values, both in the series' unit.

    base, head: medians (the headline figures); delta = head/base - 1, a
    fraction in the value's own direction (positive = the value went up)
    (paired: the geometric mean of the pair ratios, minus 1);
    interval: (lo, hi), the (1 - alpha) confidence interval of delta;
    p_value: two-sided (Mann–Whitney U, or the paired sign-flip test);
    base_n, head_n: how many values each (paired: pairs, both).
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
    _check_alpha(alpha)
    b, h = median(base), median(head)
    return Comparison(
        base=b, head=h, delta=h / b - 1.0,
        interval=ratio_interval(head, base, alpha),
        p_value=mann_whitney_p(head, base),
        base_n=len(base), head_n=len(head),
    )


def compare_pairs(head: Sequence[float], base: Sequence[float], alpha: float) -> Comparison:
    """Paired comparison: head[i] and base[i] ran back to back (worker i of
    an A/B run), so the machine's drift cancels in their ratio. p: the
    two-sided sign-flip permutation test of log(head[i]/base[i]) (the log
    makes a ratio symmetric: 2x and 0.5x are equally far); delta: the mean
    log ratio back on the ratio scale; interval: the shifts that test does
    not reject at `alpha` (sign_flip_interval; unbounded, (-1, inf), when
    too few pairs can reject anything)."""
    _check(head, "head")
    _check(base, "base")
    _check_alpha(alpha)
    if len(head) != len(base) or len(head) < 2:
        raise ValueError(f"paired values: {len(head)} head and {len(base)} base; expected the same number, at least 2")
    logs = np.log(np.asarray(head, dtype=float) / np.asarray(base, dtype=float))
    mean = float(np.mean(logs))
    lo, hi = sign_flip_interval(logs, alpha)
    return Comparison(base=median(base), head=median(head), delta=math.expm1(mean),
                      interval=(math.expm1(lo), math.expm1(hi)), p_value=sign_flip_p(logs),
                      base_n=len(base), head_n=len(head))


def sign_flip_p(logs: Sequence[float]) -> float:
    """Two-sided p-value of "the mean log ratio is 0" by flipping signs: the
    share of the 2^n sign patterns whose |sum| reaches the observed |sum|.
    Exact up to EXACT_SIGN_FLIP_PAIRS pairs; beyond, SIGN_FLIP_DRAWS seeded
    random patterns, (hits + 1) / (draws + 1). Unitless; the smallest value
    n pairs can give is sign_flip_min_p(n) (8 pairs: 2/256 = 0.0078). The
    same p as scipy.stats.permutation_test (permutation_type='samples'),
    which tests/test_compare_stats.py checks; the patterns are kept per n
    because the interval and "sees" bisect over many shifted copies, where
    scipy's setup cost (~0.5 s at 16 pairs) would dominate."""
    x = np.asarray(logs, dtype=float)
    observed = abs(float(np.sum(x)))
    if observed == 0.0 and not np.any(x):
        return 1.0  # every pair exactly even: every pattern ties
    signs = _patterns(len(x))
    tol = 1e-12 * max(1.0, float(np.sum(np.abs(x))))
    hits = int(np.count_nonzero(np.abs(signs @ x) >= observed - tol))
    if len(x) <= EXACT_SIGN_FLIP_PAIRS:
        return hits / signs.shape[0]
    return (hits + 1) / (signs.shape[0] + 1)


@lru_cache(maxsize=8)
def _patterns(n: int) -> np.ndarray:
    """Every +-1 pattern of n signs (2^n rows), or SIGN_FLIP_DRAWS seeded ones."""
    if n <= EXACT_SIGN_FLIP_PAIRS:
        bits = (np.arange(2 ** n)[:, None] >> np.arange(n)[None, :]) & 1
    else:
        bits = np.random.default_rng(SIGN_FLIP_SEED).integers(0, 2, size=(SIGN_FLIP_DRAWS, n))
    out = 1.0 - 2.0 * bits.astype(float)
    out.setflags(write=False)
    return out


def sign_flip_min_p(n: int) -> float:
    """The smallest p-value sign_flip_p can give for n pairs (all on one
    side): 2 / 2^n exact; beyond, about 1 / (draws + 1), taken as 2 / (draws + 1)
    so that no level is promised that a draw might miss."""
    if n < 1:
        return 1.0
    if n <= EXACT_SIGN_FLIP_PAIRS:
        return min(1.0, 2.0 / 2 ** n)
    return 2.0 / (SIGN_FLIP_DRAWS + 1)


def sign_flip_interval(logs: Sequence[float], alpha: float) -> tuple[float, float]:
    """(lo, hi) of the mean log ratio: every shift m for which the sign-flip
    test of (logs - m) is not rejected at `alpha`, found by bisection on each
    side of the mean (to 1e-5 in log, 0.001 %). So the interval excludes 0
    exactly when the test rejects, and the figure shown never contradicts
    the p-value. (-inf, inf) when n pairs cannot reach alpha at all."""
    x = np.asarray(logs, dtype=float)
    mean = float(np.mean(x))
    if sign_flip_min_p(len(x)) >= alpha:
        return -math.inf, math.inf
    if float(np.ptp(x)) == 0.0:
        return mean, mean
    # lo: the shift m = mean - d at which (logs - m) = (centred + d) is first rejected; hi alike
    return (mean - _reach(x - mean, alpha, 1.0), mean + _reach(x - mean, alpha, -1.0))


def sign_flip_shift(centred: Sequence[float], level: float, sign: float) -> float | None:
    """The smallest shift d > 0 (in log) for which the sign-flip test of
    (centred + sign * d) rejects at `level`: how far these pairs' mean must
    move, with their spread, to be called. None when n pairs cannot reach
    `level` at all (sign_flip_min_p)."""
    x = np.asarray(centred, dtype=float)
    if sign_flip_min_p(len(x)) >= level:
        return None
    return _reach(x - float(np.mean(x)), level, sign)


def _reach(centred: np.ndarray, level: float, sign: float) -> float:
    """The distance from the mean, on the side `sign`, where the test of
    (centred - sign * d) first rejects at `level` (bisection; p falls as d grows:
    past the farthest value every pair has one sign and p is its least)."""
    near, far = 0.0, float(np.max(np.abs(centred))) + 1e-9
    if far <= 1e-9:
        return 0.0
    while sign_flip_p(centred + sign * far) >= level:  # a tie at the minimum: move on
        far *= 2.0
        if far > 1e3:
            return math.inf
    while far - near > 1e-5:
        mid = (near + far) / 2.0
        near, far = (near, mid) if sign_flip_p(centred + sign * mid) < level else (mid, far)
    return far


def bh_levels(p_values: Sequence[float], alpha: float) -> tuple[float, ...]:
    """Per row, the level its p-value must meet under Benjamini–Hochberg at
    `alpha` across these m rows, given the other rows' p-values: alpha * R / m,
    where R is how many rows BH rejects with this row's p set to 0. A row is
    rejected by BH exactly when its p <= its level. (With one row, alpha.)

    Why BH: when nothing changed, it holds the chance of calling any row at
    alpha (then FDR = FWER), so `--fail-on slower` trips falsely at most at
    alpha; when a Keras change moves several rows of a backend at once, it
    keeps the power Holm gives up, calling a share of false rows at most
    alpha. Valid for independent or positively dependent p-values (PRDS): the
    rows of one A/B share its host, whose noise moves them together."""
    ps = list(p_values)
    for p in ps:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p-value {p!r}; expected a probability in [0, 1]")
    _check_alpha(alpha)
    m = len(ps)
    out = []
    for i in range(m):
        trial = ps[:i] + [0.0] + ps[i + 1:]
        out.append(alpha * _bh_count(trial, alpha) / m)
    return tuple(out)


def _bh_count(ps: Sequence[float], alpha: float) -> int:
    """How many rows BH rejects: the largest k with p_(k) <= alpha * k / m."""
    m = len(ps)
    return max((k for k, p in enumerate(sorted(ps), 1) if p <= alpha * k / m), default=0)


def drop_dips(values: Sequence[float], better: str, depth: float = DIP_DEPTH,
              sigmas: float = DIP_SIGMAS) -> tuple[tuple[float, ...], int]:
    """(kept values, how many were dips): a dip is a value worse than the
    group's median by more than `depth` (a fraction, 0.10) and by more than
    `sigmas` robust standard deviations (the MAD of value/median, scaled to
    a normal sigma: scipy.stats.median_abs_deviation(scale='normal')).

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
    spread = float(sps.median_abs_deviation(rel, scale="normal"))
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
    mean, scale = _prediction_scale(runs)
    gap = abs(math.log(head) - mean)
    if scale == 0.0:
        return 1.0 if gap == 0.0 else 0.0
    # scipy.special.stdtr is the t CDF as a plain ufunc (~2 us; t.sf ~100 us).
    return float(2.0 * special.stdtr(n - 1, -gap / scale))


def prediction_critical(runs: Sequence[float], alpha: float) -> float:
    """The smallest |log head - mean log runs| the prediction test calls at
    `alpha` (infinite with fewer than 2 runs; 0 when they never vary)."""
    n = len(runs)
    if n < 2:
        return math.inf
    _, scale = _prediction_scale(runs)
    return float(special.stdtrit(n - 1, 1.0 - alpha / 2.0)) * scale


def _prediction_scale(runs: Sequence[float]) -> tuple[float, float]:
    """(mean of log runs, sd * sqrt(1 + 1/N)): the prediction test's centre and unit."""
    logs = np.log(np.asarray(runs, dtype=float))
    return float(np.mean(logs)), float(np.std(logs, ddof=1)) * math.sqrt(1.0 + 1.0 / len(logs))


def min_p_value(n: int, m: int) -> float:
    """The smallest two-sided p-value an exact U test of n against m values
    can reach (complete separation): with too few values, no difference is
    ever significant, whatever its size (3 against 3: 0.1)."""
    return min(1.0, 2.0 / math.comb(n + m, n))


def mann_whitney_p(x: Sequence[float], y: Sequence[float]) -> float:
    """Two-sided p-value of the Mann–Whitney U test of x against y.

    Exact when there are no ties between the groups and at most
    EXACT_MAX_PAIRS pairs; otherwise the normal approximation with tie and
    continuity corrections (scipy's 'auto' would switch elsewhere).
    """
    return float(_mwu(x, y).pvalue)


def u_statistic(x: Sequence[float], y: Sequence[float]) -> float:
    """U of x: the number of pairs (x_i, y_j) with x_i > y_j, ties counting 1/2."""
    return float(_mwu(x, y).statistic)


def u_critical_scale(x: Sequence[float], y: Sequence[float], alpha: float, down: bool) -> float | None:
    """The factor nearest 1 by which x must be scaled (down when `down`, else
    up) for the U test of x against y to reach p < alpha; None when no factor
    can (min_p_value(n, m) >= alpha). U changes only where a scaled x_i
    passes a y_j, at the ratios y_j / x_i: for the exact test without ties
    the crossing is the ratio at the critical U (_critical_u, cached per
    n, m); otherwise p only falls as x moves away, so it is bisected over
    those ratios or, beyond CANDIDATES_MAX pairs, over the factor itself (to
    1e-6): memory and time stay bounded for 1000 latency calls too."""
    n, m = len(x), len(y)
    if min_p_value(n, m) >= alpha:
        return None
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    step = 1.0 - 1e-9 if down else 1.0 + 1e-9  # just past a crossing

    def called(f: float) -> bool:
        return mann_whitney_p(xs * f, ys) < alpha

    # Beyond this factor every x lies past every y: complete separation.
    far = (ys.min() / xs.max() if down else ys.max() / xs.min()) * step
    if (far >= 1.0) if down else (far <= 1.0):
        return 1.0  # already separated
    if n * m <= EXACT_MAX_PAIRS and len(set(x)) == n and len(set(y)) == m:
        # Exact test (no ties within a group; between them, every f tested is
        # nudged off a crossing): p depends on U alone, and U(f) counts the
        # ratios y_j / x_i below f (down): the crossing is the ratio at the
        # critical U, which depends only on (n, m, alpha) and is cached.
        ratios = np.sort((ys[None, :] / xs[:, None]).ravel())
        u = _critical_u(n, m, alpha)
        return float(ratios[u] * step if down else ratios[n * m - 1 - u] * step)
    if not called(far):
        return None  # ties keep even complete separation above alpha
    if n * m <= CANDIDATES_MAX:
        ratios = np.unique(ys[None, :] / xs[:, None]) * step
        factors = np.sort(ratios[ratios < 1.0])[::-1] if down else np.sort(ratios[ratios > 1.0])
        lo, hi = 0, len(factors) - 1  # factors[hi] is called (it is `far` or nearer)
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if called(float(factors[mid])) else (mid + 1, hi)
        return float(factors[hi])
    near, outer = 1.0, float(far)  # called at `outer`, not known at `near`
    while abs(math.log(outer / near)) > 1e-6:
        mid = math.sqrt(near * outer)
        near, outer = (near, mid) if called(mid) else (mid, outer)
    return outer


@lru_cache(maxsize=1024)
def _critical_u(n: int, m: int, alpha: float) -> int:
    """The largest U (of n against m values, no ties) whose exact two-sided
    p is below alpha, found by bisection over made-up groups with that U:
    y = 0..m-1 and each x_i just above c_i of them (sum c_i = U)."""
    def p_of(u: int) -> float:
        counts = [m] * (u // m) + ([u % m] if u % m else [])
        counts += [0] * (n - len(counts))
        x = [c - 0.5 + 1e-6 * i for i, c in enumerate(counts)]
        return float(sps.mannwhitneyu(x, list(range(m)), alternative="two-sided", method="exact").pvalue)

    lo, hi = 0, n * m // 2  # p(0) < alpha (the caller checked min_p_value); p(n*m/2) is 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if p_of(mid) < alpha else (lo, mid - 1)
    return lo


def _mwu(x: Sequence[float], y: Sequence[float]):
    n, m = len(x), len(y)
    tied = len(set(x) | set(y)) < n + m
    method = "exact" if not tied and n * m <= EXACT_MAX_PAIRS else "asymptotic"
    return sps.mannwhitneyu(x, y, alternative="two-sided", method=method, use_continuity=True)


def ratio_interval(x: Sequence[float], y: Sequence[float], alpha: float,
                   resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED) -> tuple[float, float]:
    """(1 - alpha) bootstrap percentile interval of median(x)/median(y) - 1.

    Both groups are resampled with replacement, each on its own
    (scipy.stats.bootstrap, paired=False), and the ratio of the medians
    recomputed; the interval is the alpha/2 and 1 - alpha/2 quantiles.
    Medians keep it robust: a deep-dip night or a dipped repeat moves it
    only when it would be drawn into the middle of a resample. Seeded, so
    the same inputs always give the same interval; batched, so 20,000
    values take megabytes, not gigabytes. A group of one value is fixed
    (scipy resamples only groups of two or more; one value has no spread).
    """
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    groups = [g for g in (xs, ys) if g.size > 1]
    if not groups:
        d = float(xs[0] / ys[0] - 1.0)
        return d, d

    def ratio(*drawn, axis=-1):
        it = iter(drawn)
        mx = np.median(next(it), axis=axis) if xs.size > 1 else xs[0]
        my = np.median(next(it), axis=axis) if ys.size > 1 else ys[0]
        return mx / my - 1.0

    batch = max(1, BOOTSTRAP_BATCH_VALUES // max(g.size for g in groups))
    res = sps.bootstrap(groups, ratio, n_resamples=resamples, batch=min(batch, resamples),
                        vectorized=True, paired=False, confidence_level=1.0 - alpha,
                        method="percentile", rng=np.random.default_rng(seed))
    ci = res.confidence_interval
    return float(ci.low), float(ci.high)


def _check_alpha(alpha: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha is {alpha!r}; expected a probability such as 0.01")


def _check(values: Sequence[float], name: str) -> None:
    if not values:
        raise ValueError(f"{name} values are empty; expected at least one number > 0")
    for v in values:
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise ValueError(f"{name} value {v!r}; expected a finite number > 0")
