#!/usr/bin/env python3
"""How often `bench compare` calls a change that is not there, and how small
a change it finds: simulated heads against simulated 7-night baselines.

    .venv/bin/python studies/bench_compare_sim.py [--trials 1000] [--seed 1]

The noise model is bench.records.synthetic's shared-GPU one: every repeat scatters
by `--noise` (2 %) around the night's level; a night is a deep dip (the whole
run at 20-80 % speed: another job on the GPU) with probability 5 %; a
night's value is the median of its repeats. Each trial draws a fresh
baseline of `--nights` nights and a head of `--repeats` repeats whose level
is the baseline's times (1 + shift), then runs the real verdict code
(bench.compare.verdicts.compare) with benchmarks.yaml's compare settings.

Two baselines: the last N nights of a history (--base DIR), and one base
run of `--repeats` repeats (--base RECORD, e.g. the merge-base).

Reported:
- false calls: the fraction of same-distribution heads (shift 0) called
  faster or slower (goal: at most 1 %); also with one dipped repeat in the
  head, and with an extra run-to-run jitter (each run's, each night's level
  off by that much: conditions a run's own repeats cannot show).
- detection: the fraction of heads called slower (and faster) per shift,
  and the smallest shift whose detection rate reaches 95 %.
A head that is itself a dip night is not "same distribution": it was really
slower, and no single run can tell that from a regression.

--sees instead reports what `bench compare` says it could see: the
quantiles of each same-distribution head's "sees" figure (the smallest
slowdown the rules could have called); it should sit near the shift that
the detection table calls half the time.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from statistics import median, quantiles
from types import MappingProxyType

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import config  # noqa: E402
from bench.compare.baseline import NIGHTS, RECORDS, BaseEntry, Baseline  # noqa: E402
from bench.compare.head import Head, HeadEntry  # noqa: E402
from bench.compare.verdicts import compare  # noqa: E402

KEY = ("jax", "rtx-5070-ti", "cnn", "train")
LEVEL = 9000.0


def run_samples(rng: random.Random, level: float, repeats: int, noise: float) -> list[float]:
    return [level * (1 + rng.gauss(0, noise)) for _ in range(repeats)]


def nightly_baseline(rng: random.Random, a, jitter: float) -> Baseline:
    """`a.nights` nights: each a level (jitter, sometimes a deep dip) and its repeats."""
    values, samples = [], []
    for _ in range(a.nights):
        level = LEVEL * (1 + rng.gauss(0, jitter))
        if rng.random() < a.dip_rate:
            level *= rng.uniform(0.2, 0.8)
        night = run_samples(rng, level, a.repeats, a.noise)
        values.append(median(night))
        samples += night
    entry = BaseEntry(KEY, "samples/s", "bigger", NIGHTS, tuple(values), tuple(samples), a.nights)
    return Baseline(MappingProxyType({KEY: entry}), MappingProxyType({}), "simulated")


def record_baseline(rng: random.Random, a, jitter: float) -> Baseline:
    """One base run (e.g. the merge-base on the same runner): its repeats."""
    samples = run_samples(rng, LEVEL * (1 + rng.gauss(0, jitter)), a.repeats, a.noise)
    entry = BaseEntry(KEY, "samples/s", "bigger", RECORDS, (median(samples),), tuple(samples), 1)
    return Baseline(MappingProxyType({KEY: entry}), MappingProxyType({}), "simulated")


def head(rng: random.Random, a, shift: float, jitter: float, dipped_repeat: bool) -> Head:
    samples = run_samples(rng, LEVEL * (1 + shift) * (1 + rng.gauss(0, jitter)), a.repeats, a.noise)
    if dipped_repeat:
        samples[rng.randrange(a.repeats)] *= rng.uniform(0.2, 0.8)
    entry = HeadEntry(KEY, "ok", "samples/s", "bigger", tuple(samples), None)
    return Head(MappingProxyType({KEY: entry}), MappingProxyType({}))


def rates(kind: str, shift: float, a, settings, seed: int, jitter: float = 0.0,
          dipped_repeat: bool = False) -> tuple[float, float]:
    """(fraction called slower, fraction called faster) over a.trials heads."""
    rng = random.Random(seed)
    make_base = nightly_baseline if kind == NIGHTS else record_baseline
    found = {"slower": 0, "faster": 0, "unchanged": 0}
    for _ in range(a.trials):
        base = make_base(rng, a, jitter)
        (row,) = compare(base, head(rng, a, shift, jitter, dipped_repeat), settings)
        found[row.verdict] += 1
    return found["slower"] / a.trials, found["faster"] / a.trials


def report(kind: str, a, settings) -> None:
    print(f"\n== baseline: {'the last %d nights' % a.nights if kind == NIGHTS else 'one base run'} ==")
    print("false calls (same-distribution heads, goal <= 1 %):")
    for label, kw in (("plain", {}), ("one dipped repeat in the head", {"dipped_repeat": True}),
                      ("plus 1 % run-to-run jitter", {"jitter": 0.01}),
                      ("plus 2 % run-to-run jitter", {"jitter": 0.02})):
        slower, faster = rates(kind, 0.0, a, settings, a.seed, **kw)
        print(f"  {label:32s} {slower + faster:6.1%}  (slower {slower:.1%}, faster {faster:.1%})")
    print("detection (fraction called, by true shift; plain):")
    found = {}
    for pct in (1, 2, 3, 3.5, 4, 4.5, 5, 5.5, 6, 7, 8, 10, 20):
        slower, _ = rates(kind, -pct / 100, a, settings, a.seed + 1)
        _, faster = rates(kind, pct / 100, a, settings, a.seed + 2)
        found[pct] = min(slower, faster)
        print(f"  {pct:4g} %   slower {slower:6.1%}   faster {faster:6.1%}")
    smallest = next((pct for pct in found if found[pct] >= 0.95), None)
    print(f"smallest shift called in >= 95 % of heads, both directions: "
          f"{smallest if smallest is not None else 'none'} %")


def sees(kind: str, a, settings) -> None:
    """Quantiles of the rows' `detectable` for same-distribution heads."""
    rng = random.Random(a.seed)
    make_base = nightly_baseline if kind == NIGHTS else record_baseline
    found = []
    for _ in range(a.trials):
        (row,) = compare(make_base(rng, a, 0.0), head(rng, a, 0.0, 0.0, False), settings)
        found.append(row.detectable if row.detectable is not None else float("inf"))
    q = quantiles(found, n=10)
    print(f"{kind}: 'sees' median {median(found):.1%} (10th percentile {q[0]:.1%}, 90th {q[-1]:.1%})")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trials", type=int, default=1000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--nights", type=int, default=None, help="default: compare.nights")
    p.add_argument("--repeats", type=int, default=None, help="default: harness.repeats")
    p.add_argument("--noise", type=float, default=0.02, help="per-repeat noise, a fraction")
    p.add_argument("--dip-rate", type=float, default=0.05)
    p.add_argument("--base", choices=(NIGHTS, RECORDS, "both"), default="both")
    p.add_argument("--sees", action="store_true", help="report the 'sees' figure instead (see above)")
    a = p.parse_args()
    cfg = config.load()
    settings = cfg.compare
    a.nights = a.nights or settings.nights
    a.repeats = a.repeats or cfg.harness.repeats
    t0 = time.perf_counter()
    print(f"{a.trials} trials per row; {a.repeats} repeats per run; {a.noise:.0%} noise per repeat; "
          f"{a.dip_rate:.0%} dip nights; min_change {settings.min_change:g}, alpha {settings.alpha:g}")
    for kind in (NIGHTS, RECORDS) if a.base == "both" else (a.base,):
        (sees if a.sees else report)(kind, a, settings)
    print(f"({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
