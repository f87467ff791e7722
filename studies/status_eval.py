"""How well does the status rule call a step, and how often does it cry wolf,
beside the known change-point methods on the same streams? (issue 52)

    .venv/bin/python studies/status_eval.py                  # quick: a few minutes here
    .venv/bin/python studies/status_eval.py --seed 4 --years 30 --streams 20 --methods "project rule"

Streams come from tests/corpus/streams.py (labels from how each is built;
nothing imported from bench.analyse there). Every method sees, each night,
the trailing WINDOW + BEFORE nights of log values (up is better) and calls a
change only when it dates one within the last WINDOW nights with at least
CONFIRM nights from it and a median shift of at least FLOOR: the project's
rule (bench.analyse.trends.find_change with benchmarks.yaml's `trends`) and
the anchors below, on the same streams with the same post-filter.

Reports:
- detection: per noise kind and level and step size, the share of step
  streams called in the right direction within 3 nights of the step (the
  nights seen at the new level, the step's night counted as 1) and within
  WINDOW, and the median nights to the call; a wrong-direction call counts
  against;
- flat: the share of flat streams of the same length with any call;
- replay: streams of a year (half flat, half with one step of 2-10 % at a
  random night), replayed night by night; a call with no true step of its
  direction from WINDOW nights before its date to 3 nights after is a false
  alarm; false alarms per series-year.
"""

from __future__ import annotations

import argparse
import importlib
import math
import sys
import time
import warnings
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.corpus.streams import KINDS, LEVELS, stream  # noqa: E402

# The evaluation's own settings, not the rule's: what a call must look like
# for any method to be scored (the project's config has its own values).
WINDOW, CONFIRM, BEFORE, FLOOR = 10, 3, 36, 0.015
SIZES = (0.01, 0.02, 0.03, 0.04, 0.05, 0.07, 0.10)
QUICK_WITHIN = 3


# -- methods: each takes the trailing log values, returns (direction, index) or None --

def _shift_ok(x, c) -> int:
    """The direction of a change at c if it passes the common post-filter, else 0."""
    n = len(x)
    if not (n - WINDOW <= c <= n - CONFIRM):
        return 0
    d = np.median(x[c:]) - np.median(x[max(0, c - BEFORE):c])
    return int(np.sign(d)) if abs(d) >= math.log1p(FLOOR) else 0


def _latest_cp(x, cps):
    for c in sorted(cps, reverse=True):
        d = _shift_ok(x, int(c))
        if d:
            return d, int(c)
    return None


def rule(x):
    from bench import config
    from bench.analyse.trends import find_change
    global _TRENDS
    if _TRENDS is None:
        _TRENDS = config.load(Path(__file__).resolve().parents[1] / "benchmarks.yaml").trends
    f = find_change(list(x), _TRENDS)
    if f is None:
        return None
    return (1 if f.after > f.before else -1), f.index


_TRENDS = None


def e_divisive(x):
    from signal_processing_algorithms.energy_statistics.energy_statistics import e_divisive as ed
    return _latest_cp(x, ed(list(x), pvalue=0.01, permutations=100))


def otava(x):
    from otava.analysis import compute_change_points
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cps, _ = compute_change_points(list(x), window_len=30, max_pvalue=0.001)
    return _latest_cp(x, [cp.index for cp in cps])


def _sigma(x):
    return 1.4826 * np.median(np.abs(x - np.median(x))) or 1e-6


def pelt(x):
    import ruptures as rpt
    s = _sigma(x[:BEFORE])
    bkps = rpt.Pelt(custom_cost=_l1_table(), min_size=CONFIRM, jump=1).fit(np.asarray(x).reshape(-1, 1)).predict(
        pen=3 * s * math.log(len(x)))
    return _latest_cp(x, bkps[:-1])


def _l1_table():
    """ruptures' CostL1 with every segment's cost computed at fit, one numpy
    call per segment length (the same sums as CostL1.error, ~15x faster)."""
    from ruptures.costs import CostL1
    from ruptures.exceptions import NotEnoughPoints

    class L1Table(CostL1):
        def fit(self, signal):
            super().fit(signal)
            col = np.ascontiguousarray(self.signal[:, 0])
            n = len(col)
            self.table = np.full((n + 1, n + 1), np.nan)
            for length in range(self.min_size, n + 1):
                w = np.lib.stride_tricks.sliding_window_view(col, length)
                self.table[np.arange(n - length + 1), np.arange(length, n + 1)] = np.abs(
                    w - np.median(w, axis=1)[:, None]).sum(axis=1)
            return self

        def error(self, start, end):
            if end - start < self.min_size:
                raise NotEnoughPoints
            return float(self.table[start, end])

    return L1Table()


def mann_whitney(x, alpha=0.01):
    """The last k nights (k = WINDOW down to CONFIRM) against the BEFORE
    nights before them, two-sided at alpha split among the k tried
    (scipy's normal approximation)."""
    from scipy.stats import mannwhitneyu
    n = len(x)
    for k in range(WINDOW, CONFIRM - 1, -1):
        before, after = x[max(0, n - k - BEFORE):n - k], x[n - k:]
        p = mannwhitneyu(after, before, alternative="two-sided", method="asymptotic").pvalue
        if p < alpha / (WINDOW - CONFIRM + 1):
            d = _shift_ok(x, n - k)
            if d:
                return d, n - k
    return None


def cusum(x, k=0.5, h=5.0):
    """Tabular CUSUM over the last WINDOW nights against the median and MAD
    sigma of the BEFORE nights before them; the change dates from the last
    night the alarming sum was zero."""
    base = x[:len(x) - WINDOW]
    m, s = np.median(base), _sigma(base)
    hi = lo = 0.0
    start_hi = start_lo = len(x) - WINDOW
    for i in range(len(x) - WINDOW, len(x)):
        z = (x[i] - m) / s
        hi, lo = max(0.0, hi + z - k), max(0.0, lo - z - k)
        if hi == 0.0:
            start_hi = i + 1
        if lo == 0.0:
            start_lo = i + 1
    for total, c in ((lo, start_lo), (hi, start_hi)):
        if total > h:
            d = _shift_ok(x, c)
            if d:
                return d, c
    return None


METHODS = {"project rule": rule, "E-Divisive": e_divisive, "otava": otava,
           "PELT (l1)": pelt, "Mann-Whitney": mann_whitney, "CUSUM": cusum}


# -- runs ---------------------------------------------------------------------

def detection(method, streams):
    """Per stream (called_within, wrong): the nights at the new level when
    first called in the right direction (None: never), or a wrong call first."""
    out = []
    for s in streams:
        logs = np.log(s.values)
        at, size = s.steps[0]
        got = None
        for night in range(at, len(logs)):
            call = method(logs[max(0, night + 1 - WINDOW - BEFORE):night + 1])
            if call is not None:
                got = (night - at + 1) if call[0] == np.sign(size) else "wrong"
                break
        out.append(got)
    return out


def any_call(method, streams):
    """Flat streams: was anything called over the last WINDOW nights replayed?"""
    n = 0
    for s in streams:
        logs = np.log(s.values)
        n += any(method(logs[max(0, night + 1 - WINDOW - BEFORE):night + 1]) is not None
                 for night in range(len(logs) - WINDOW, len(logs)))
    return n


def replay(method, streams):
    """False alarms over year streams: each call event (a night called that
    the night before was not, or called with a date more than CONFIRM nights
    off) is false unless a true step of its direction lies between WINDOW
    nights before its date and 3 nights after (a step dated late is late,
    not false)."""
    false = 0
    for s in streams:
        logs = np.log(s.values)
        prev = None
        for night in range(WINDOW + BEFORE, len(logs)):
            lo = night + 1 - WINDOW - BEFORE
            call = method(logs[lo:night + 1])
            if call is not None:
                date = lo + call[1]
                if prev is None or prev[0] != call[0] or abs(prev[1] - date) > CONFIRM:
                    if not any(date - WINDOW <= at <= date + 3 and np.sign(sz) == call[0] for at, sz in s.steps):
                        false += 1
                prev = (call[0], date)
            else:
                prev = None
    return false


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--streams", type=int, default=6, help="step streams per kind, level and size (signs alternate)")
    p.add_argument("--years", type=int, default=1, help="replayed series-years per kind and level")
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--jobs", type=int, default=2, help="processes (one per noise kind and level at a time)")
    p.add_argument("--kinds", default=",".join(KINDS),
                   help=f"noise kinds, some of {','.join(KINDS)} (each keeps its own seed whatever the others)")
    args = p.parse_args(argv)
    methods = [m for m in args.methods.split(",") if m and _installed(m)]
    kinds = [k for k in args.kinds.split(",") if k]
    if unknown := [k for k in kinds if k not in KINDS]:
        p.error(f"--kinds {','.join(unknown)}: unknown; expected some of {','.join(KINDS)}")
    if not kinds:
        p.error(f"--kinds {args.kinds!r}: none given; expected some of {','.join(KINDS)}")
    groups = [(k, lv) for k in KINDS for lv in LEVELS[k]]
    det, flat_calls, fa = {}, {}, {}
    t0 = time.time()
    # a group's seed is its place among all kinds' groups, so --kinds picks rows, never redraws them
    jobs = [(i, k, lv, args, methods) for i, (k, lv) in enumerate(groups) if k in kinds]
    with ProcessPoolExecutor(args.jobs) as pool:
        for g, d, f, r in pool.map(_group, jobs):
            det.update(d)
            flat_calls[g], fa[g] = f, r
            print(f"[{time.time() - t0:.0f} s] {g}", file=sys.stderr)
    _print(methods, det, flat_calls, fa)
    return 0


LIBRARIES = {"E-Divisive": "signal_processing_algorithms.energy_statistics.energy_statistics",
             "otava": "otava.analysis", "PELT (l1)": "ruptures"}


def _installed(method: str) -> bool:
    """Is the method known, and its library importable? Says so on stderr when not."""
    if method not in METHODS:
        print(f"status_eval: method {method!r} unknown; expected some of {', '.join(METHODS)}", file=sys.stderr)
        return False
    try:
        importlib.import_module(LIBRARIES.get(method, "scipy.stats"))
    except ImportError as e:
        print(f"status_eval: {method} left out: {e} (pip install --no-deps -r requirements/studies.txt)",
              file=sys.stderr)
        return False
    return True


def _group(job):
    """One noise kind and level: its streams (a seed of its own) through every method."""
    i, kind, level, args, methods = job
    rng = np.random.default_rng([args.seed, i])
    g = f"{kind} {level * 100:.1f} %" if level else kind
    length = BEFORE + 20
    steps = {size: [stream(kind, level, length + WINDOW, length, size * (1 if j % 2 else -1), rng)
                    for j in range(args.streams)] for size in SIZES}
    flats = [stream(kind, level, length + WINDOW, None, 0.0, rng) for _ in range(args.streams * 2)]
    years = []
    for j in range(args.years * 2):  # half-years, every other one with a step of 2-10 %
        at = int(rng.integers(WINDOW + BEFORE + 20, WINDOW + BEFORE + 182))
        size = float(rng.uniform(0.02, 0.10)) * (1 if rng.random() < 0.5 else -1) if j % 2 else 0.0
        years.append(stream(kind, level, WINDOW + BEFORE + 182, at if size else None, size, rng))
    det, flat, fa = defaultdict(dict), {}, {}
    for m in methods:
        f = METHODS[m]
        for size, ss in steps.items():
            det[(g, size)][m] = detection(f, ss)
        flat[m] = (any_call(f, flats), len(flats))
        fa[m] = (replay(f, years), len(years) * 182 / 365)
    return g, dict(det), flat, fa


def _rate(got, within):
    return sum(isinstance(v, int) and v <= within for v in got) / len(got)


def _print(methods, det, flat_calls, fa):
    print(f"Detection: share called right within {QUICK_WITHIN} nights / within {WINDOW} "
          f"(wrong-direction calls, median nights to the call)\n")
    print("| noise | step | " + " | ".join(methods) + " |")
    print("|---|---|" + "---|" * len(methods))
    for (g, size), by in det.items():
        cells = []
        for m in methods:
            got = by[m]
            nights = sorted(v for v in got if isinstance(v, int))
            wrong = sum(v == "wrong" for v in got)
            cells.append(f"{_rate(got, QUICK_WITHIN):.0%} / {_rate(got, WINDOW):.0%}"
                         + (f" ({wrong} wrong)" if wrong else "")
                         + (f" m{nights[len(nights) // 2]}" if nights else ""))
        print(f"| {g} | {size:.0%} | " + " | ".join(cells) + " |")
    print("\nFlat streams with any call over their last nights, and false alarms per series-year replayed\n")
    print("| noise | " + " | ".join(methods) + " |")
    print("|---|" + "---|" * len(methods))
    for g in flat_calls:
        print(f"| {g} | " + " | ".join(f"{flat_calls[g][m][0]}/{flat_calls[g][m][1]}; "
                                      f"{fa[g][m][0] / fa[g][m][1]:.2f}/yr" for m in methods) + " |")
    print("\nGoals\n")
    for m in methods:
        print(f"- {m}: " + _goals(m, det, flat_calls, fa))


def _level_of(g: str) -> float:
    """'dips 2.0 %' -> 0.02."""
    return float(g.split()[1]) / 100


def _goals(m, det, flat_calls, fa) -> str:
    """The issue's goals pooled as it states them; "n/a" for a kind this run did not draw."""
    def pooled(prefix, size, within):
        got = [v for (g, s), by in det.items() if g.startswith(prefix) and s == size for v in by[m]]
        return _rate(got, within)

    def drawn(prefix):
        return any(g.startswith(prefix) for g in flat_calls)
    prec_flat = sum(flat_calls[g][m][0] for g in flat_calls if g.startswith("precise"))
    dips = [(g, s) for (g, s) in det if g.startswith("dips") and s >= max(0.05, 3 * _level_of(g))]
    dip_right = sum(_rate(det[k][m], WINDOW) * len(det[k][m]) for k in dips)
    dip_n = sum(len(det[k][m]) for k in dips)
    dip_flat = sum(flat_calls[g][m][0] for g in flat_calls if g.startswith("dips"))
    dip_flat_n = sum(flat_calls[g][m][1] for g in flat_calls if g.startswith("dips"))
    dip_fa = sum(fa[g][m][0] for g in fa if g.startswith("dips"))
    years = sum(fa[g][m][1] for g in fa)
    false = sum(fa[g][m][0] for g in fa)
    precise = (f"precise 3 % within 3 nights {pooled('precise', 0.03, 3):.1%}, 2 % {pooled('precise', 0.02, 3):.1%}, "
               f"flat calls {prec_flat}" if drawn("precise") else "precise n/a")
    dipped = (f"dips right (steps >= 5 % and 3 sigmas within {WINDOW}, flat quiet) "
              f"{(dip_right + dip_flat_n - dip_flat) / (dip_n + dip_flat_n):.1%}, dip false alarms {dip_flat} flat + "
              f"{dip_fa} replayed" if drawn("dips") else "dips n/a")
    return f"{precise}; {dipped}; replayed false alarms {false} in {years:.1f} series-years ({10 * false / years:.2f} per 10)"


if __name__ == "__main__":
    sys.exit(main())
