"""How long does this host stay slow? The reference workload, minute by minute, over kept sets.

    .venv/bin/python studies/bench_host_phases.py .local/stab-50 .local/stab-51 .local/stab-52

Every worker records `reference_seconds`, its fastest run of the fixed numpy
canary (bench/measure/pool.py), and its `window` (when it ran). Per set, this
prints the median of that reference over the workers that started in each
minute, as a multiple of the set's 10th percentile (its fast level; the very
fastest is one lucky process), and the longest stretch of minutes above
--slow times it.

Why: issue 10 suggests waiting for a quiet machine before each worker. That
only helps if the host's slow phases are short next to what a nightly can
spare: the 4-backend nightly's 15-minute goal leaves it the time it does not
use (docs/measurements.md, "Extra repeats and the nightly's cost"). Minutes with no worker starting are
skipped and do not break a stretch.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_stability import kept_sets_argument, load_records, not_folders  # noqa: E402

FAST_PERCENTILE = 10


def starts(folder: Path) -> list[tuple[float, float]]:
    """(start time, reference seconds) of every worker kept in the folder's records."""
    workers = (w for records in load_records([folder]).values() for d in records
               for r in d["results"] for w in r.get("workers", []))
    return sorted((w["window"][0], w["reference_seconds"]) for w in workers
                  if w.get("reference_seconds") and w.get("window"))


def minutes(points: list[tuple[float, float]]) -> list[float]:
    """Per minute since the first start (minutes with no start left out): the median
    reference over the set's fast level."""
    fast = float(np.percentile([ref for _, ref in points], FAST_PERCENTILE))
    t0 = points[0][0]
    by: dict[int, list[float]] = {}
    for t, ref in points:
        by.setdefault(int((t - t0) // 60), []).append(ref / fast)
    return [statistics.median(v) for _, v in sorted(by.items())]


def longest(ratios: list[float], slow: float) -> tuple[int, int]:
    """(length, first index) of the longest run of ratios over `slow`."""
    best, best_at, run = 0, 0, 0
    for i, r in enumerate(ratios):
        run = run + 1 if r > slow else 0
        if run > best:
            best, best_at = run, i - run + 1
    return best, best_at


def report(folder: Path, slow: float) -> list[str]:
    points = starts(folder)
    if not points:
        return [f"{folder}: no worker with reference_seconds and window"]
    ratios = minutes(points)
    length, at = longest(ratios, slow)
    stretch = f"minutes {at}-{at + length - 1}" if length else "none"
    return [f"{folder.name}: {len(points)} workers over {len(ratios)} minutes; "
            f"slow (over {slow:.2f}x the fast level) {sum(r > slow for r in ratios)} minutes, "
            f"longest {length} in a row ({stretch})",
            "  " + " ".join(f"{r:.2f}" for r in ratios)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    kept_sets_argument(p)
    p.add_argument("--slow", type=float, default=1.15,
                   help="a minute is slow above this multiple of the fast level (default 1.15)")
    args = p.parse_args(argv)
    if not_folders("bench_host_phases", args.folders):
        return 2
    for folder in args.folders:
        print("\n".join(report(folder, args.slow)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
