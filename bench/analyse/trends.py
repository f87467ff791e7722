"""Trends: the delta to the previous point and the status of a series
(formatting lives in bench/present/format.py).

Pure functions, no I/O. Values are in the series' own unit (samples/s unless
the result says otherwise); `Series.better` gives the direction: 'bigger'
(throughput) or 'smaller' (times, latencies). The status logic works on
x = log(value), negated for 'smaller', so in x "up" is always "better": a
drop in x is a regression for both directions and one code path serves both.
Working in logs also makes a change relative (a step of -10 % is the same
distance at 9k and at 250k samples/s).

Status, first rule that applies (docs/DESIGN.md; thresholds from benchmarks.yaml
`trends`): Failed, Stale, New, Regressed / Faster, Watch, Steady, plus
Skipped for a series with only skipped (unsupported) results.

Why not the previous point: on the shared, clock-capped GPU single deep
dips (to 10-80 % of the level) come every few nights. A change must be a
new level: at least `confirm` points, tight around their own median, all
but at most one of the points since the change, starting right after a
point that is not at the new level, and far from the old level compared
with the series' own noise (a median and a Qn sigma of the nights left
after a dip clip, which the dips barely move).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from datetime import datetime
from statistics import NormalDist, median, stdev

# scipy.special, not scipy.stats: the t quantile is all we need, and importing
# scipy.stats costs ~1.3 s at every `bench report` start (measured).
from scipy.special import stdtrit
from typing import Sequence

from bench.config import Trends
from bench.analyse.series import Series, protocol_start

STATUSES = ("Failed", "Stale", "New", "Regressed", "Faster", "Watch", "Steady", "Skipped")

# Points before a candidate change that set the "before" level and the noise.
# 36 nights: enough for a stable median and sigma, recent enough to follow old
# steps. 30 was used first; its sigma, from ~27 nights once the dips are out,
# came out 10-25 % low often enough on flat series at 5-8 % noise to read
# them Regressed or Faster (held-out corpus seeds 1-240: see level_noise).
BASELINE = 36
# At most this share of the BASELINE nights before a change may already sit
# at the new level (a dip may land there by chance; a second mode lands often).
# Tried, not kept: allowing on top the share the old level's normal noise puts
# there (a 6 % step at 2 % noise has 4 of 36 old nights within its half-way
# tol in 22 % of series): 4 more steps right in held-out seeds 1-40, but at
# 5-8 % noise that share is large, and a flat series (seed 597 in
# tests/fixtures/trends_heldout.json) read Regressed again.
VISITS = 0.1
# Qn's efficiency under normal noise (Rousseeuw & Croux 1993): a Qn sigma from
# n nights is as sure as a standard deviation from QN_EFFICIENCY * n (_critical).
QN_EFFICIENCY = 0.82
# MAD / Φ⁻¹(3/4) (≈ 1.4826 MAD) estimates the standard deviation of normal noise.
MAD_TO_SIGMA = 1 / NormalDist().inv_cdf(0.75)
# Qn (Rousseeuw & Croux 1993): 1 / (√2 Φ⁻¹(5/8)) ≈ 2.2219 times the k-th
# smallest pairwise distance estimates the standard deviation of normal noise;
# for n <= 9 their finite-sample factors, from 10 on n/(n+1.4) (odd), n/(n+3.8).
QN_TO_SIGMA = 1 / (math.sqrt(2) * NormalDist().inv_cdf(5 / 8))
QN_SMALL_N = (0.399, 0.994, 0.512, 0.844, 0.611, 0.857, 0.669, 0.872)  # n = 2..9
# A night this many (upper-half) sigmas below the median is a dip, not noise
# (4 was tried: see level_noise).
DIP_SIGMAS = 3
# The noise's own dip clip is wider (_noise_kept says why).
NOISE_DIP_SIGMAS = 3.5
# Standard error of a median is ~1.2533 times that of a mean (normal noise).
MEDIAN_SE = 1.2533
# A new level may be up to this many times noisier than the old (the corpus's
# noisier-step kind is 1.5-3x, from real histories); see _candidate.
NOISIER = 4
# Candidates this many nights older than the window are tried too, and when
# one of them fits best the change is older than the window: Steady, not a
# change re-dated into the window's first nights. Held-out seed 1764: a +8 %
# step 12 nights old whose second night sat half-way (+3.6 % against +7.5 %)
# was dated 10 nights old, the first night the window allows, and read
# Faster; its true first night fits better. 2: a step 11 or 12 nights old is
# re-dated into the window when its first one or two nights sit off its level,
# as there (assess keeps BASELINE + EARLIER nights before the window).
EARLIER = 2


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
    tail_start = max(start, len(points) - t.window - BASELINE - EARLIER)
    x = [sign * math.log(p.value) for p in points[tail_start:]]
    change = find_change(x, t, sign)
    if change is not None:
        index, lb, la, noise = change
        before, after = math.exp(sign * lb), math.exp(sign * la)
        status = "Faster" if la > lb else "Regressed"
        return Assessment(status, Change(tail_start + index, before, after, after / before - 1),
                          level=after, noise=noise)
    level = dip_level(x[-t.window:])
    noise, _ = _noise_kept(x[-BASELINE:])
    status = "Watch" if is_watch(x, t) else "Steady"
    return Assessment(status, level=math.exp(sign * level), noise=noise)


def level_noise(xs: Sequence[float]) -> tuple[float, float]:
    """(level, sigma) of log values: a median and a robust sigma that skip the dips.

    Why not the plain median/MAD: dips are one-sided (always slower), may be
    a third of the nights, and drag both. The upper side of the median sees
    jitter only, so it gives a first sigma; points more than DIP_SIGMAS of
    those below the median are dips; the median of the rest is the level and
    the Qn of the nights left by a clip at least as wide (_noise_kept)
    the noise (sigma ~ a fraction of the level, since these are logs).

    Why that wider clip, BASELINE 36 and _back_up (measured together with
    studies/corpus_accuracy.py --seeds 1-200 and 201-400, 428,400 series;
    seeds 241-400 were scored only once the change was chosen): false alarms
    17 -> 2, right 427,641 -> 427,719, every kind still >= 99 %; each part
    left out, seeds 1-240 had some: BASELINE 30, 4 very noisy flat series;
    no _back_up, 4 young steps read Regressed; the old clip for the sigma, 1
    flat series. The two left, flat series at 8 % noise whose last three
    nights sat 2.6-2.7 standard errors low at the noise they were drawn
    with, went once the bar counted the sigma's own error (_critical:
    Student's t at the Qn's degrees of freedom) and the new level's sigma in
    the standard error was pooled with the old (_clears; t alone had missed
    an 8 % step in the committed corpus, whose 4 nights read their own sigma
    high): seeds 1-400, false alarms 2 -> 0, right 427,719 -> 427,834; fresh
    seeds 401-800, 4 -> 1, right 427,743 -> 427,825; every kind still
    >= 99 %. The one left (seed 731 very-noisy-flat-7), a draw at 8 % noise
    with a tight core, went once the noise was never below the SD of the
    core (core_sd).

    Why Qn, not the MAD (measured on held-out corpus seeds,
    studies/corpus_accuracy.py --seeds 1-40 and 41-80): the MAD of 30 nights
    errs by about a fifth (37 % efficient; Qn 82 %): flat series at 5-8 %
    noise with a tight core (seeds 24 and 11) got a MAD sigma of 3.9 % and
    read Regressed. With Qn (and _lead): false alarms 3 -> 1 and 5 -> 2,
    right 42,754 -> 42,762 and 42,746 -> 42,758 of 42,840. Tried, not kept:
    a 4-sigma dip clip (+6 right, but in a window crowded with dips the first
    median sits between them and the level, and 4 of its sigmas kept the dips
    in: docs/DESIGN.md's example row read its level as 303k, not 318k);
    Student's t at every n (0 false alarms for 18 right fewer, and an 8 %
    step at 2 % noise in the committed corpus read Steady; taken later with
    the pooled sigma, above).
    """
    return dip_level(xs), _noise_kept(xs)[0]


def dip_level(xs: Sequence[float]) -> float:
    """The level of log values: the median of the nights left once the dips
    are clipped at DIP_SIGMAS of the upper half's sigma, which the dips never
    reach, so a window crowded with dips (half its nights, as in a 10-night
    window) still finds its level."""
    m, s = _upper_sigma(xs)
    return median(_undipped(xs, m, s))


def _noise_kept(xs: Sequence[float]) -> tuple[float, int]:
    """The noise of log values (level_noise's sigma), and how many nights
    (dips left out) it rests on.

    Its dip clip is never tighter than the Qn of all the nights. The upper
    half's sigma, from half the nights, is itself noisy: when it came out
    low, a clip at it cut plain noise off the lower side and the Qn of what
    was left read 3.6 % on a flat series at 8 % noise (a false Regressed).
    With few dips the Qn of all is close to the noise; with many it keeps
    more nights than dip_level's clip (measured, a Watch read Steady when the
    level used this wider clip too).

    That clip is NOISE_DIP_SIGMAS (3.5) of the sigma, wider than the
    level's DIP_SIGMAS (3): the dips end 20 % below the level at the least
    (-22 % in logs), and at 8 % noise plain noise reaches there too, once in
    every few series. Held-out seed 949 (very-noisy-flat-11): at 3, a -21 %
    night of noise went out as a dip, the noise read 5.5 % (5.9 % with it),
    and four nights 11-17 % up read Faster. Measured with
    studies/corpus_accuracy.py --seeds 1-500 / 501-1000 --rule FILE (3 -> 3.5):
    right 1,069,577 -> 1,069,580, false alarms 2 -> 1 (seed 949's gone; the
    other, 883, a draw whose own nights show a step, which the corpus now
    draws again: tests/corpus/generate.py _drifted), every kind still >= 99 %
    (the lowest, young-step-Regressed, 99.38 -> 99.38 %). With that redraw too:
    seeds 1-1400 0 false alarms; fresh seeds 1401-1800 3, which _chances and
    EARLIER took to 0 (README).

    The noise is the Qn of the kept nights, or the standard deviation of
    their core (within 3 Qn of their median) where that is larger (core_sd)."""
    m, s = _upper_sigma(xs)
    keep = _undipped(xs, m, max(s, qn_sigma(xs)), NOISE_DIP_SIGMAS)
    q = qn_sigma(keep)
    return max(q, core_sd(keep, q)), len(keep)


def core_sd(xs: Sequence[float], q: float) -> float:
    """The standard deviation of the xs within 3 q (their Qn) of their median;
    0.0 with fewer than two.

    Qn reads the spacing of the closest half of the pairs, so nights with a
    tight core and wide shoulders fool it: a flat series drawn at 8 % noise
    (held-out corpus seed 731 very-noisy-flat-7) got a Qn of 4.6 % and read
    Regressed on four nights 10 % low; the SD of its core reads 5.3 %. The
    SD of every kept night instead (6.4 % there) counts the spikes of real
    histories too: it cost the noisier-step kinds 3 % of their series (seeds
    1-100, 96.6-97.3 %). Measured with studies/corpus_accuracy.py: committed
    corpus 1071/1071 either way; seeds 1-400 right 427,834 -> 427,846,
    false alarms 0 -> 0; seeds 401-800 427,825 -> 427,843, 1 -> 0; every
    kind still >= 99 %."""
    mid = median(xs) if xs else 0.0
    core = [v for v in xs if abs(v - mid) <= 3 * q]
    return stdev(core) if len(core) > 1 else 0.0


def _upper_sigma(xs: Sequence[float]) -> tuple[float, float]:
    """(median, a first sigma from the MAD of the points above it): the
    upper side sees jitter only, never a dip."""
    m = median(xs)
    up = [v - m for v in xs if v > m]
    return m, (MAD_TO_SIGMA * median(up) if up else 0.0)


def _undipped(xs: Sequence[float], m: float, s: float, sigmas: float = DIP_SIGMAS) -> list[float]:
    """The points of xs not more than `sigmas` * s below m. One pass only:
    clipping again around the clipped median would eat into plain noise and
    shrink sigma towards zero."""
    keep = [v for v in xs if v >= m - sigmas * s]
    if 2 * len(keep) < len(xs):  # never let the clip pick a minority
        keep = list(xs)
    return keep


def qn_sigma(xs: Sequence[float]) -> float:
    """Qn: the robust sigma of `xs` (a standard deviation under normal noise),
    from the h-choose-2-th smallest distance between two of them, h = n//2 + 1;
    0.0 with fewer than two. Like statsmodels.robust.scale.qn_scale times the
    finite-sample factor (it has none), written here because importing
    statsmodels costs ~1 s at every `bench report` start (measured) for ten
    lines; O(n²), and n is at most BASELINE here."""
    n = len(xs)
    if n < 2:
        return 0.0
    distances = sorted(abs(a - b) for i, a in enumerate(xs) for b in xs[i + 1:])
    h = n // 2 + 1
    small = QN_SMALL_N[n - 2] if n <= 9 else n / (n + (1.4 if n % 2 else 3.8))
    return QN_TO_SIGMA * small * distances[h * (h - 1) // 2 - 1]


def find_change(x: Sequence[float], t: Trends, sign: float = 1.0):
    """The best change point within the last `t.window` of log values `x`
    (bigger is better), as (index, level_before, level_after, noise), or None.

    `sign` is -1 for 'smaller is better' (x = -log(value)); it only turns
    `min_change` into the value's own unit. With lb, sigma = level_noise of
    the BASELINE points before a candidate c and la = median of x[c:], c
    qualifies when (see the module doc for why):
    - at least `t.confirm` points from c to the latest, and as many before;
    - |la - lb| is at least `min_change` in the value's unit and beyond
      _critical (Student's t at noise_factor's tail, split among the window's
      chances) standard errors of the
      difference of the two medians (1.2533 * sqrt(sigma²/n_before +
      pooled²/n_after), _clears), over every night since c and again over the
      new level's own nights;
    - the points from c sit at la (within tol: noise_factor sigmas or
      min_change, at most half the shift), all but at most one of them, and
      at least `t.confirm` of them (a one-off dip or bump after is fine);
      la is then the median of those nights alone, and they must still be
      at it; the new level's own sigma counts, at most NOISIER times the old;
    - the latest point is not back at the old level (a recovery: inside
      the old level's tol and outside the new level's full band), and no
      night since a slowdown is back up at it (_back_up: dips are slower);
    - the nights just before c, dips aside, are not at the new level (within
      tol, or past it within its band, as _at reads the nights since c): not the
      last one, not most of the last `confirm` (so an older change is not
      re-found at the window's edge), and they too differ from la by at
      least `min_change` (so a slow drift is not read as a step);
    - at most VISITS of the BASELINE nights were already at la (a second
      mode of a bimodal series is not a new level).
    Among qualifying candidates, from EARLIER nights before the window on,
    the one that fits best (least absolute deviation from the two levels)
    wins; its index is past any leading nights off the new level (a dip right
    at the change), and from there too at least `t.confirm` nights sit at it.
    A winner older than the window is no change now (None).
    """
    n = len(x)
    lo = max(t.confirm, n - t.window - EARLIER)
    best = None
    for c in range(lo, n - t.confirm + 1):
        found = _candidate(x, c, t, sign)
        if found is not None and (best is None or found[0] < best[0]):
            best = found
    if best is None or best[1] < n - t.window:
        return None  # best dated older than the window: the level now, not a change
    return best[1:]


def _candidate(x, c, t: Trends, sign):
    after = x[c:]
    base = x[max(0, c - BASELINE):c]
    lb = dip_level(base)
    sigma, kept = _noise_kept(base)
    if kept < t.min_points:
        return None  # an old level needs as many nights as a status does (New)
    la = median(after)
    shift = la - lb
    relative = math.exp(sign * shift) - 1  # in the value's own unit
    if abs(relative) < t.min_change:
        return None
    res_a = [abs(v - la) for v in after]
    # The new level may be noisier than the old (a 35 % step on a busier
    # code path): its own robust sigma counts too, for the standard error
    # (Welch-style, each side's own noise) and for what is "at" the new level.
    # Never less than the old sigma: 3-5 tight nights prove little. Never more
    # than NOISIER times it: nights spread wider than that are dips and a
    # level mixed, not one level (held-out corpus: two dips to 62 and 72 %
    # before a young 50 % step read Regressed, their spread making every
    # night "at" the median of the five).
    sigma_a = min(max(sigma, MAD_TO_SIGMA * median(res_a)), NOISIER * sigma)
    if not _clears(shift, sigma, len(base), sigma_a, len(after), t, kept):
        return None
    # A point is "at" a level within tol: the noise band or min_change, never
    # more than half the way to the other level.
    tol = min(max(t.noise_factor * sigma, math.log1p(t.min_change)), abs(shift) / 2)
    band_a = max(t.noise_factor * sigma_a, math.log1p(t.min_change))
    tol_a = min(band_a, abs(shift) / 2)
    # The half-way cap keeps a night from being "at" both levels; a night past
    # the new level, on the far side from the old, cannot be, so the full band
    # holds there (corpus: a +10 % step whose 3 nights read +8 %, +8 %, +12 %).
    at_new = _at(after, la, shift, tol_a, band_a)
    if not _is_level(at_new, t):
        return None
    # The new level is the median of its own nights, not of all nights since
    # c: with an even count and an off night among them, the median of all
    # sits between a dip and the level, and both look "at" it.
    la = median(v for v, at in zip(after, at_new) if at)
    at_new = _at(after, la, shift, tol_a, band_a)
    if not _is_level(at_new, t):
        return None
    # The change starts past leading off nights (a dip right at the change);
    # from there too, `confirm` nights must sit at the new level. A dip just
    # before a two-night step, beyond the new level but inside its band, is
    # not the step's first night (held-out seed 55: -82 % then +0.6, -69, -69 %).
    lead = _lead(after, at_new, la, tol, t)
    if sum(at_new[lead:]) < t.confirm:
        return None
    if _back_up(after[lead:], at_new[lead:], lb, la, min(tol, abs(shift) / 4)):
        return None
    # Measured on the new level's own nights (from `lead` on, at it), the step
    # must clear the bar too: the first test counted every night since c, and a
    # night off the level is no evidence of one (held-out seed 360: a dip to half,
    # then three nights 14, 15 and 8 % low at 8 % noise, read Regressed).
    own = [v for v, at in zip(after[lead:], at_new[lead:]) if at]
    if not _clears(median(own) - lb, sigma, len(base), sigma_a, len(own), t, kept):
        return None
    if abs(x[-1] - lb) <= tol and abs(x[-1] - la) > band(sigma_a, t):
        # Back at the old level and clear of the new one: a dip (or a blip)
        # that recovered. A latest night inside both bands (a step of 2-3
        # sigmas' noise each side) proves nothing either way, so the nights
        # before it decide (corpus: 8 % steps with 2 % noise read Steady).
        return None
    # The nights just before c, dips aside, must still be at the old level;
    # else the change started earlier (an old step) or creeps (a drift).
    # "At" it as for the nights since c (_at): a night past the new level, on
    # the far side from the old, is at it too (held-out seed 955: a +8 % step 12
    # nights old, its second night at +11 %, was dated 2 nights late and read
    # Faster, since that night sat more than half the shift from the level).
    # Measured, studies/corpus_accuracy.py --seeds 1-1000: false alarms 3 -> 2,
    # right 1,069,606 -> 1,069,577 (Faster steps once dated a night late; only a
    # Faster candidate can change, a night past a lower level is below `floor`).
    floor = min(lb, la) - tol
    undipped = [v for v in x[max(0, c - t.window):c] if v >= floor]
    near = _at(undipped[-t.confirm:], la, shift, tol, band_a)
    if near and (near[-1] or 2 * sum(near) > len(near)):
        return None
    # ... and the step from those nights is itself at least min_change (a
    # drift has them part-way, so its step is small).
    if undipped and abs(math.exp(sign * (la - median(undipped))) - 1) < t.min_change:
        return None
    # A level the series already kept visiting is a second mode (bimodal
    # timings, upward spikes), not a new level.
    if sum(abs(v - la) <= tol for v in base) > VISITS * len(base):
        return None
    cost = sum(min(abs(v - lb), 3 * tol) for v in base) + sum(abs(v - la) for v in after)
    return cost, c + lead, lb, la, sigma


def _clears(shift: float, sigma: float, n_before: int, sigma_a: float, n_after: int,
            t: Trends, kept: int) -> bool:
    """Is a shift of log levels beyond `_critical` standard errors of the
    difference of two medians, from n_before nights at noise sigma and n_after
    at sigma_a (the new level's own)?

    For the standard error, sigma_a is pooled with the old sigma, weighted by
    degrees of freedom (kept - 1 and n_after - 1): from 3-5 nights alone a
    sigma is a guess (an 8 % step at 2 % noise, committed corpus
    step-Faster-0.08-age4-2, got 2.7 % from its 4 nights and cleared 3.28
    standard errors where the noise it was drawn with gives 4.3). What is
    "at" the new level still uses sigma_a unpooled (_candidate), so a new
    level that is truly noisier keeps its nights."""
    pooled = math.sqrt(((kept - 1) * sigma ** 2 + (n_after - 1) * sigma_a ** 2) / max(1, kept + n_after - 2))
    se = MEDIAN_SE * math.sqrt(sigma ** 2 / n_before + pooled ** 2 / n_after)
    return abs(shift) > _critical(t, kept) * se


def _lead(after, at_new: list[bool], la: float, tol: float, t: Trends) -> int:
    """How many leading nights since a candidate change are off its new level
    la, leaving `confirm` after them: not at it (_at), or slower than it by
    more than tol (x is up-is-better, so a dip; a night past a Faster level
    is at it, and a dip past a Regressed one only looks so)."""
    lead = 0
    while ((not at_new[lead] or after[lead] < la - tol)
           and len(after) - (lead + 1) >= t.confirm):
        lead += 1
    return lead


def _back_up(after, at_new: list[bool], lb: float, la: float, near: float) -> bool:
    """Is a night since a slowdown, off its new level, back up at the old
    level (within `near`)? Dips are only ever slower, so such a night is no
    dip: the "new level" is dips and a return, not a level (held-out seeds
    108 and 153: a dip to 56 %, a night at the old level, then two nights at
    50 % read Regressed, one night short of confirmed). Only a slowdown has
    its old level above the new one; under a speed-up a night at the old
    level may be a dip. `near` is a quarter of the shift at most, so an off
    night part-way (a 4 % wobble after an 8 % step) still counts as off."""
    return any(not at and la < v and abs(v - lb) <= near for v, at in zip(after, at_new))


def _at(after, la: float, shift: float, tol_a: float, band_a: float) -> list[bool]:
    """Which nights since a candidate change sit at the new level la: within
    tol_a, or past la on the far side from the old level within band_a."""
    return [abs(v - la) <= tol_a or ((v - la) * shift > 0 and abs(v - la) <= band_a) for v in after]


def _is_level(at_new: list[bool], t: Trends) -> bool:
    """At least `confirm` nights at the new level, and few enough off it."""
    return sum(at_new) >= t.confirm and len(at_new) - sum(at_new) <= _offs_allowed(len(at_new))


def _offs_allowed(n_after: int) -> int:
    """Nights since a change that may be off the new level: one, or a quarter
    of them from 8 nights on (a noisier new level has its own off nights;
    two in eight is still a level, two in four is not)."""
    return max(1, n_after // 4)


@lru_cache(maxsize=256)  # a few (noise_factor, n) pairs; scipy's ppf costs ~0.1 ms a call
def _critical(t: Trends, n_base: int) -> float:
    # n_base: the nights the old sigma rests on (dips left out).
    """How many standard errors a shift must clear: Student's t at the tail
    that `noise_factor` marks for normal noise (3: 0.135 %), split among the
    window's chances (_chances), with the degrees of freedom of the old sigma
    (a Qn from n_base nights: QN_EFFICIENCY * n_base - 1): 3.71 from a full
    36 nights. A sigma is itself an estimate: from 30 nights a Qn errs by
    about 14 %, and low by that much it made two flat series at 8 % noise
    read Regressed in 428,400 held-out ones (seeds 360 and 391; their last
    nights 2.6-2.7 standard errors low at the noise they were drawn with).
    From 3-4 nights (a 10-15 night series with an early dip) the bar is
    several times higher (such a series once read Faster)."""
    return student_bar(t.noise_factor, QN_EFFICIENCY * n_base - 1, _chances(t))


def _chances(t: Trends) -> int:
    """How many tries noise gets at the bar in one series: the window holds
    window - confirm + 1 candidate nights, but candidates fewer than `confirm`
    nights apart share most of their nights, so about window // confirm (3)
    independent ones; noise_factor's tail is split among them (Bonferroni).
    With the whole tail at every candidate, held-out seeds 1498 and 1657 (flat
    series at 5-8 % noise) read Regressed and Faster, clearing the bar by 1.05
    and 1.08 times. Measured with studies/corpus_accuracy.py --seeds 1401-1800
    (428,400 series, with EARLIER): false alarms 3 -> 0, right 427,820 ->
    427,771, the lowest kind step-dip-before-Faster 99.56 -> 99.48 %; a bar
    1.1 times higher instead: 427,796 right, 0 false alarms, 99.51 %, but
    no reason for 1.1 but those two draws. Seeds 1-1400: 0 false alarms
    either way, right 1,497,400 -> 1,497,174; fresh seeds 1801-2400: 0
    either way, right 641,781 -> 641,685, every kind still >= 99.35 %; fresh
    seeds 2401-3000: 0, 641,653 right, every kind >= 99.19 %."""
    return max(1, t.window // t.confirm)


def student_bar(noise_factor: float, df: float, chances: int = 1) -> float:
    """Student's t at `df` degrees of freedom (at least 1) at the tail that
    `noise_factor` standard errors mark for normal noise (3: 0.135 %),
    divided by `chances` (a tail of 0.045 % for 3)."""
    tail = (1 - NormalDist().cdf(noise_factor)) / chances
    return float(stdtrit(max(1.0, df), 1 - tail))


def is_watch(x: Sequence[float], t: Trends) -> bool:
    """The newest two points are both off the level before them, on the same
    side, by more than the noise band and `min_change`: maybe a change, not
    yet confirmed. A single off night stays Steady (the GPU's dips). "The
    level" must hold for both the last `window` nights (so a change older
    than the window is the level now) and the last BASELINE nights (so a
    window crowded with dips does not move it)."""
    if len(x) < t.min_points:
        return False
    recent = dip_level(x[-(t.window + 2):-2])
    longer, sigma = level_noise(x[-(BASELINE + 2):-2])
    width = band(sigma, t)
    sides = set()
    for level in (recent, longer):
        for v in x[-2:]:
            if abs(v - level) <= width:
                return False
            sides.add(v > level)
    return len(sides) == 1


def band(noise: float | None, t: Trends) -> float:
    """The half-width of the series' noise band, in log value (~ a fraction):
    what the status rule treats as "at the level" — noise_factor sigmas, at
    least min_change. Without a noise estimate, min_change alone."""
    floor = math.log1p(t.min_change)
    return max(t.noise_factor * noise, floor) if noise is not None else floor


def watched(values: Sequence[float], t: Trends) -> tuple[float, float] | None:
    """For a Watch series: (level, relative) — the level before the newest two
    points (value's unit) and how far their median sits from it (a fraction,
    in the value's unit: after/before - 1). None with too few points."""
    if len(values) < 3:
        return None
    level = dip_level([math.log(v) for v in values[-(t.window + 2):-2]])
    newest = median(math.log(v) for v in values[-2:])
    return math.exp(level), math.exp(newest - level) - 1
