"""A series' level and noise in log values, with the shared GPU's dips left out (pure).

Values are log(value) turned so that up is better (bench.analyse.trends), so
a dip (a night slowed to 10-80 % of the level on a shared, clock-capped GPU)
is always below the level. The side above the median sees plain noise only,
so it sets a first sigma (the MAD of the nights above the median); nights
more than DIP_SIGMAS of it below the median are dips. The level is the
median of the nights left, the noise their Qn: a robust standard deviation,
about a fraction of the level since these are logs.
"""

from __future__ import annotations

import math
from statistics import NormalDist, median
from typing import Sequence

# A night this many sigmas below the median is a dip, not noise (plain
# normal noise reaches there once in ~4,000 nights).
DIP_SIGMAS = 3.5
# MAD / Φ⁻¹(3/4) estimates the standard deviation of normal noise.
MAD_TO_SIGMA = 1 / NormalDist().inv_cdf(0.75)
# Qn (Rousseeuw & Croux 1993): 1 / (√2 Φ⁻¹(5/8)) times the h-choose-2-th
# smallest pairwise distance estimates the standard deviation of normal
# noise; their finite-sample factors for n = 2..9, n/(n+1.4) (odd) or
# n/(n+3.8) (even) from 10 on.
QN_TO_SIGMA = 1 / (math.sqrt(2) * NormalDist().inv_cdf(5 / 8))
QN_SMALL_N = (0.399, 0.994, 0.512, 0.844, 0.611, 0.857, 0.669, 0.872)


def undipped(xs: Sequence[float]) -> list[float]:
    """The nights of xs that are not dips (never fewer than half of them)."""
    if len(xs) < 2:
        return list(xs)
    m = median(xs)
    up = [v - m for v in xs if v > m]
    s = MAD_TO_SIGMA * median(up) if up else 0.0
    keep = [v for v in xs if v >= m - DIP_SIGMAS * s]
    return keep if 2 * len(keep) >= len(xs) else list(xs)


def level_noise(xs: Sequence[float]) -> tuple[float, float, int]:
    """(level, sigma, nights kept) of log values, dips left out."""
    keep = undipped(xs)
    return median(keep), qn_sigma(keep), len(keep)


def qn_sigma(xs: Sequence[float]) -> float:
    """Qn: a robust standard deviation of xs (82 % efficient under normal
    noise, the MAD 37 %); 0.0 with fewer than two. Like
    statsmodels.robust.scale.qn_scale with a finite-sample factor, written
    here because importing statsmodels costs ~1 s at every `bench report`."""
    n = len(xs)
    if n < 2:
        return 0.0
    distances = sorted(abs(a - b) for i, a in enumerate(xs) for b in xs[i + 1:])
    h = n // 2 + 1
    small = QN_SMALL_N[n - 2] if n <= 9 else n / (n + (1.4 if n % 2 else 3.8))
    return QN_TO_SIGMA * small * distances[h * (h - 1) // 2 - 1]
