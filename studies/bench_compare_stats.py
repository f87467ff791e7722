#!/usr/bin/env python3
"""Time and peak memory of bench.compare.stats on large groups (issue 15).

    .venv/bin/python studies/bench_compare_stats.py [--n 20000] [--stats FILE]

For each size, one compare_samples(head, base) of n head against n base
values (the U test and the bootstrap interval): its wall time and the peak
of Python and numpy allocations during the call (tracemalloc: numpy reports
its buffers to it). Also the per-call cost at the sizes a comparison really
has (7 repeats against 7 nights or 49 samples).

--stats FILE measures another version of the module, e.g. the hand-written
one before the move to scipy:
    git show c5b1a0d:bench/compare/stats.py > /tmp/stats_old.py
    .venv/bin/python studies/bench_compare_stats.py --stats /tmp/stats_old.py
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import sys
import time
import timeit
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def load_stats(path: str | None):
    if path is None:
        from bench.compare import stats
        return stats
    spec = importlib.util.spec_from_file_location("stats_under_test", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def peak(stats, n: int, seed: int) -> tuple[float, int]:
    """(seconds, peak bytes) of one compare_samples of n against n values."""
    rng = random.Random(seed)
    head = [rng.gauss(0.97, 0.02) for _ in range(n)]
    base = [rng.gauss(1.00, 0.02) for _ in range(n)]
    tracemalloc.start()
    t0 = time.perf_counter()
    stats.compare_samples(head, base, 0.01)
    seconds = time.perf_counter() - t0
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return seconds, top


def per_call(stats, n: int, m: int, seed: int) -> dict[str, float]:
    """Microseconds per call of the U test, the interval and compare_samples."""
    rng = random.Random(seed)
    x = [rng.gauss(0.97, 0.02) for _ in range(n)]
    y = [rng.gauss(1.00, 0.02) for _ in range(m)]
    out = {}
    for name, fn, number in (("U test", lambda: stats.mann_whitney_p(x, y), 300),
                             ("interval", lambda: stats.ratio_interval(x, y, 0.01), 30),
                             ("compare_samples", lambda: stats.compare_samples(x, y, 0.01), 30)):
        out[name] = min(timeit.repeat(fn, number=number, repeat=3)) / number * 1e6
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, nargs="+", default=[20000])
    p.add_argument("--stats", default=None, help="another stats.py to measure (default: bench.compare.stats)")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    stats = load_stats(a.stats)
    print(f"module: {stats.__file__}")
    for n in a.n:
        seconds, top = peak(stats, n, a.seed)
        print(f"compare_samples {n} vs {n}: {seconds:.2f} s, peak {top / 2**20:.0f} MiB (tracemalloc)")
    for n, m in ((7, 7), (7, 49)):
        costs = per_call(stats, n, m, a.seed)
        print(f"{n} vs {m}: " + ", ".join(f"{k} {v:.0f} us" for k, v in costs.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
