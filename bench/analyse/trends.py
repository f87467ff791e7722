"""Trends: the delta to the previous point and the status of a series
(formatting lives in bench/present/format.py; the rule in words: docs/status.md).

Pure functions, no I/O. Values are in the series' own unit; `Series.better`
gives the direction ('bigger' for throughput, 'smaller' for times). The rule
works on x = log(value), negated for 'smaller', so a drop in x is a
regression in both directions and a step is relative (-3 % is the same
distance at 9k and at 250k samples/s).

Status, first that applies: Failed (the newest result failed), Skipped (only
skipped results), Stale (no point for `stale_days`), New (fewer than
`min_points` nights of the newest protocol), Regressed / Faster (a change,
below), Watch (the newest two nights off the level on one side), Steady.

A change at night c, within the last `window` nights, is called when:
1. the old level lb and its noise sigma are the median and Qn of the up to
   BASELINE nights before c with the dips left out (bench.analyse.noise),
   at least `min_points` of them; sigma is raised to the median of the
   nights' own standard errors where the records carry one;
2. the nights from c sit at the new level la, its median of them: within
   its band (noise_factor times its own sigma, at most NOISIER times the
   old, and at least the floor), at most half the step from it, or past it
   within the band. At least `confirm` nights from c, c counted, must, all but
   max(1, n // 4) of the n; dips below both levels are neither at it nor
   off it, but the newest `confirm` nights are not all dips. So a dip, or a
   few dips of different depths, is no level;
3. |la - lb| is at least `min_change` (the floor, a fraction) and at least
   `noise_factor` standard errors of the difference of the two medians,
   MEDIAN_SE * sqrt(sigma²/n_before + pooled²/n_at), pooled: the new
   level's sigma pooled with the old by degrees of freedom;
4. no night since a slowdown is back at lb and off la (dips are only ever
   slower), nor the newest night since a speed-up;
5. the last night before c that is no dip is not at la, and at most VISITS
   of the nights before c sat at la (an older change, or a second mode of
   the series, is not a new level).
Among qualifying nights the one that fits both levels best is the change.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from statistics import median
from typing import Sequence

from bench.config import Trends
from bench.analyse.noise import level_noise, qn_sigma
from bench.analyse.series import Series, protocol_start

STATUSES = ("Failed", "Stale", "New", "Regressed", "Faster", "Watch", "Steady", "Skipped")

# Nights before a candidate change that set the old level and the noise.
BASELINE = 36
# The standard error of a median is ~1.2533 times that of a mean (normal noise).
MEDIAN_SE = 1.2533
# At most this share of the nights before a change may already sit at the new level.
VISITS = 0.1
# The new level's own noise counts up to this many times the old's (a step
# onto a busier code path); beyond it the nights are dips, not one level.
NOISIER = 2


def delta_prev(values: Sequence[float]) -> float | None:
    """Latest against the previous point, as a fraction of the previous
    (in the value's own unit, whatever its direction); None with < 2 points."""
    if len(values) < 2:
        return None
    return values[-1] / values[-2] - 1


@dataclass(frozen=True)
class Change:
    """A detected change point.

    index: index in series.points where the new level starts.
    before, after: the levels (medians) before and from the change, in the
    value's own unit. relative: after/before - 1 (so for 'smaller is better'
    a positive relative is a slowdown).
    """

    index: int
    before: float
    after: float
    relative: float

    def __post_init__(self):
        if self.index < 0:
            raise ValueError(f"Change.index is {self.index!r}; expected an index >= 0")
        for name in ("before", "after"):
            v = getattr(self, name)
            if not (math.isfinite(v) and v > 0):
                raise ValueError(f"Change.{name} is {v!r}; expected a finite level > 0")


@dataclass(frozen=True)
class Assessment:
    """status: one of STATUSES. level: the recent level in the value's unit
    (the new level after a change), None without points. noise: the robust
    relative noise (sigma of log values, ~ a fraction of the level), None
    when there are too few points to tell."""

    status: str
    change: Change | None = None
    level: float | None = None
    noise: float | None = None

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"Assessment.status is {self.status!r}; expected one of {', '.join(STATUSES)}")


@dataclass(frozen=True)
class Found:
    """A change in log values: index into x, the two levels, the old noise."""

    index: int
    before: float
    after: float
    noise: float


def assess(series: Series, newest_run: datetime, t: Trends) -> Assessment:
    """The status of `series`, given the newest run in the whole data folder."""
    points = series.points
    if series.latest_failed():
        return Assessment("Failed", level=points[-1].value if points else None)
    if not points:
        return Assessment("Skipped")
    if (newest_run.date() - points[-1].day).days > t.stale_days:
        return Assessment("Stale", level=points[-1].value)
    start = protocol_start(points)  # only nights of the newest protocol are compared
    if len(points) - start < t.min_points:
        return Assessment("New", level=points[-1].value)
    sign = -1.0 if series.better == "smaller" else 1.0
    tail = max(start, len(points) - t.window - BASELINE)
    x = [sign * math.log(p.value) for p in points[tail:]]
    se = [p.se for p in points[tail:]]
    found = find_change(x, t, se)
    if found is not None:
        before, after = math.exp(sign * found.before), math.exp(sign * found.after)
        return Assessment("Faster" if found.after > found.before else "Regressed",
                          Change(tail + found.index, before, after, after / before - 1),
                          level=after, noise=found.noise)
    level, noise = noise_of(x[-BASELINE:], se[-BASELINE:])
    status = "Watch" if is_watch(x, t, se) else "Steady"
    return Assessment(status, level=math.exp(sign * level), noise=noise)


def noise_of(x: Sequence[float], se: Sequence[float | None] = ()) -> tuple[float, float]:
    """(level, sigma) of log values: the dip-free median and Qn
    (bench.analyse.noise), sigma at least the median of the nights' own
    standard errors where they carry one."""
    level, sigma, _ = level_noise(x)
    return level, own_floor(sigma, se)


def own_floor(sigma: float, se: Sequence[float | None]) -> float:
    """sigma, at least the median of the nights' own standard errors where
    they carry one: a few quiet nights must not make the noise look smaller
    than what each night's pairs say it is."""
    own = [s for s in se if s is not None]
    return max(sigma, median(own)) if own else sigma


def find_change(x: Sequence[float], t: Trends, se: Sequence[float | None] = ()) -> Found | None:
    """The change within the last `t.window` of log values x (up is better)
    that the module's rule calls, or None. `se`: each night's own standard
    error of its log value, None where the record has none."""
    n = len(x)
    se = list(se) or [None] * n
    span = max(0, n - t.window - BASELINE)
    best, best_cost = None, math.inf
    for c in range(max(t.min_points, n - t.window), n - t.confirm + 1):
        found = _candidate(x, se, c, t)
        if found is not None:
            cost = _cost(x[span:c], found.before, found.noise, t) + _cost(x[c:], found.after, found.noise, t)
            if cost < best_cost:
                best, best_cost = found, cost
    return best


def _candidate(x, se, c: int, t: Trends) -> Found | None:
    """The change at night c when it meets the rule's conditions, else None."""
    base, after = tuple(x[max(0, c - BASELINE):c]), x[c:]
    lb, sigma, kept = _old_level(base)
    if kept < t.min_points:
        return None  # an old level needs as many nights as a status does
    sigma = own_floor(sigma, se[max(0, c - BASELINE):c])
    level = _new_level(after, lb, sigma, t)
    if level is None:
        return None
    la, at, sigma_a, tol = level
    shift, n_at, band_a = la - lb, sum(at), band(sigma_a, t)
    if abs(shift) < math.log1p(t.min_change):
        return None
    # the new level's sigma in the standard error is pooled with the old by
    # degrees of freedom: from 3 nights alone a sigma is a guess
    pooled = math.sqrt(((kept - 1) * sigma ** 2 + (n_at - 1) * sigma_a ** 2) / (kept + n_at - 2))
    if abs(shift) < t.noise_factor * MEDIAN_SE * math.sqrt(sigma ** 2 / kept + pooled ** 2 / n_at):
        return None
    back = [abs(v - lb) <= tol and abs(v - la) > band_a for v in after]
    if back[-1] or (shift < 0 and any(back)):
        return None  # back at the old level: dips are only ever slower
    undipped = [v for v in base if v >= min(lb, la) - tol]
    if undipped and abs(undipped[-1] - la) <= tol:
        return None  # the change started earlier
    if sum(abs(v - la) <= tol for v in base) > VISITS * len(base):
        return None
    return Found(c, lb, la, sigma)


@lru_cache(maxsize=1024)
def _old_level(base: tuple[float, ...]) -> tuple[float, float, int]:
    """level_noise(base), memoised: replayed night by night, the same old
    nights come back for each of the `window` nights a candidate is tried."""
    return level_noise(base)


def _new_level(after, lb: float, sigma: float, t: Trends):
    """(la, which nights are at it, its sigma, tol) when the nights `after`
    make a new level (condition 2 of the module's rule), else None."""
    la = median(after)
    for _ in range(2):  # la: the median of the nights at it, so that a dip does not drag it
        shift = la - lb
        sigma_a = min(max(sigma, qn_sigma(after)), NOISIER * sigma)
        band_a = band(sigma_a, t)
        tol = min(band_a, abs(shift) / 2)
        # dips: nights below both levels by more than the band; neither at la nor off it
        dip = [v < min(lb, la) - band_a for v in after]
        at = [abs(v - la) <= tol or ((v - la) * shift > 0 and abs(v - la) <= band_a) for v in after]
        off = len(at) - sum(at) - sum(d and not a for d, a in zip(dip, at))
        if not at[0] or sum(at) < t.confirm or off > max(1, len(at) // 4) or all(dip[-t.confirm:]):
            return None  # the newest `confirm` nights all below it are a level of their own
        la = median(v for v, ok in zip(after, at) if ok)
    return la, at, sigma_a, tol


def _cost(xs: Sequence[float], level: float, sigma: float, t: Trends) -> float:
    """How badly a level fits nights xs: absolute deviations, each capped at
    noise_factor sigmas so that a dip weighs no more than a noisy night."""
    cap = max(t.noise_factor * sigma, 1e-9)
    return sum(min(abs(v - level), cap) for v in xs)


def is_watch(x: Sequence[float], t: Trends, se: Sequence[float | None] = ()) -> bool:
    """The newest two nights both sit beyond the noise band (band()) of the
    level before them, on the same side, the level of the BASELINE nights and
    of the `window` nights alike (a change older than the window is the level
    now): maybe a change, not yet confirmed. A single off night stays Steady."""
    if len(x) < t.min_points + 2:
        return False
    level, sigma = noise_of(x[-(BASELINE + 2):-2], list(se)[-(BASELINE + 2):-2] if se else ())
    recent, _ = noise_of(x[-(t.window + 2):-2])
    width = band(sigma, t)
    off = [v - lv for lv in (level, recent) for v in x[-2:]]
    return all(abs(d) > width for d in off) and len({d > 0 for d in off}) == 1


def band(noise: float | None, t: Trends) -> float:
    """The half-width of the series' noise band, in log value (~ a fraction):
    noise_factor sigmas, at least min_change; min_change alone without a noise."""
    floor = math.log1p(t.min_change)
    return max(t.noise_factor * noise, floor) if noise is not None else floor


def watched(values: Sequence[float], t: Trends) -> tuple[float, float] | None:
    """For a Watch series: (level, relative) — the level before the newest two
    points (value's unit) and how far their median sits from it (a fraction,
    in the value's unit: after/before - 1). None with too few points."""
    if len(values) < 3:
        return None
    level, _ = noise_of([math.log(v) for v in values[-(BASELINE + 2):-2]])
    newest = median(math.log(v) for v in values[-2:])
    return math.exp(level), math.exp(newest - level) - 1
