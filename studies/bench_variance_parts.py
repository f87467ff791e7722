#!/usr/bin/env python3
"""Would more workers hold the headline still? A row's move between invocations against what its workers explain.

    .venv/bin/python studies/bench_variance_parts.py .local/stab-50 .local/stab-51 ...

A headline rests on a benchmark's clean first-round workers (5 in a nightly),
each a process of its own. If invocations differed only by which processes
they drew, the headline's sd across a set's invocations would be about the
workers' sd within an invocation over sqrt(workers), and more workers would
shrink it. Per (set, backend, model, mode) row of kept sets
(`bench_stability.py --keep DIR`), this prints, per mode:

- between: the sd of the log headline across the set's invocations;
- from workers: the median over invocations of the sd of the log worker
  figures, over sqrt(the median count of them);
- their ratio's median. Near 1: the workers' own spread is the move, and more
  of them would help. Well above 1: something the whole invocation shares (the
  host's state while it ran) moves it, and more workers would not;
- from repeats: the same one level down, what the workers' own repeats
  explain: for each worker the sd of the log of its samples (its timed
  repeats; a latency worker's round p50s) over sqrt(their count); their median
  over an invocation's workers, over sqrt(workers); the median over
  invocations. Well below "from workers": a worker is a sample of its process
  or its moment, and more repeats in a row would not steady it.

sd in %: of logs, so ±1 % reads 1.0 either way.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "studies"))

from bench.records.workers import first_round, worker_values  # noqa: E402
from bench_stability import kept_sets_argument, load_records, not_folders, ok_results  # noqa: E402

MODES = ("train", "predict", "latency")
MIN_WORKERS = 3  # an invocation with fewer clean first-round workers gives no within sd


def of_samples(worker: dict) -> float | None:
    """sd of the log of a worker's samples over sqrt(their count); None under 2."""
    samples = [s for s in worker.get("samples") or () if s and s > 0]
    if len(samples) < 2:
        return None
    return statistics.stdev(math.log(s) for s in samples) / math.sqrt(len(samples))


def parts(invocations: list[dict]) -> tuple[float, float, float | None] | None:
    """(between, from workers, from repeats) for one row: `invocations` are its
    ok results, one per invocation; None with fewer than 2 invocations or none
    with MIN_WORKERS workers; from repeats None where no worker kept 2 samples."""
    if len(invocations) < 2:
        return None
    between = statistics.stdev(math.log(r["value"]) for r in invocations)
    spreads, counts, from_repeats = [], [], []
    for r in invocations:
        counted = [(w, v) for w, v in zip(first_round(r), worker_values(r)) if v]
        if len(counted) >= MIN_WORKERS:
            spreads.append(statistics.stdev(math.log(v) for _, v in counted))
            counts.append(len(counted))
            each = [x for x in map(of_samples, (w for w, _ in counted)) if x is not None]
            if each:
                from_repeats.append(statistics.median(each) / math.sqrt(len(counted)))
    if not spreads:
        return None
    return (between, statistics.median(spreads) / math.sqrt(statistics.median(counts)),
            statistics.median(from_repeats) if from_repeats else None)


def rows(folders: list[Path]) -> list[tuple[str, float, float, float | None]]:
    """(mode, between, from workers, from repeats) for every row of every kept set."""
    out = []
    for folder in folders:
        for records in load_records([folder]).values():
            results = [ok_results(d) for d in records]
            for key in sorted(set().union(*results)):
                found = parts([r[key] for r in results if key in r])
                if found:
                    out.append((key[1], *found))
    return out


def report(folders: list[Path]) -> list[str]:
    found = rows(folders)
    if not found:
        return [f"no row with {MIN_WORKERS} clean workers in 2 invocations in {', '.join(map(str, folders))}"]
    lines = [f"{len(found)} rows; sd of the log headline across invocations (between) against the "
             f"workers' sd within one over sqrt(workers) (from workers), and their repeats' (from repeats)",
             f"{'mode':<9} {'rows':<6} {'between':<9} {'from workers':<14} {'between / from workers':<24} "
             f"from repeats"]
    for mode in MODES:
        these = [(b, w, r) for m, b, w, r in found if m == mode]
        if these:
            repeats = [r for _, _, r in these if r is not None]
            lines.append(f"{mode:<9} {len(these):<6} {statistics.median(b for b, _, _ in these) * 100:<9.1f} "
                         f"{statistics.median(w for _, w, _ in these) * 100:<14.1f} "
                         f"{statistics.median(b / w for b, w, _ in these if w):<24.2f} "
                         + (f"{statistics.median(repeats) * 100:.1f}" if repeats else "-"))
    return lines


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    kept_sets_argument(p)
    a = p.parse_args()
    if not_folders("bench_variance_parts", a.folders):
        return 2
    print("\n".join(report(a.folders)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
