"""Does a reference workload track this host's drift? One process, many cycles, side by side.

    .venv/bin/python studies/bench_drift.py --backend torch --minutes 10 --threads 2

Each cycle times, back to back in one process:
  * `model`: the Keras cnn predict (batch 128) for about --seconds;
  * `canary`: the harness's 4 ms single-threaded numpy canary (its median of 5);
  * `matmul`: a numpy float32 matmul on the same number of threads as the model;
  * `stream`: a 64 MiB array copy (memory bandwidth);
  * `python`: pure-Python dict and list work (the interpreter, as in Keras's dispatch).
It also prints the model per CPU second (the process's CPU time, all threads) and the
hypervisor's steal share per cycle, to tell a robbed CPU from a slower one.
Prints the model's drift over the run (min/median/max per cycle) and, for each
reference, the Pearson correlation of log(model throughput) with log(1/ref time)
across cycles, and how much of the model's spread would remain after dividing
by it. A reference that does not correlate cannot tell a slow host from slow
Keras; protocol 2 records references but never rescales a headline with them.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="torch")
    p.add_argument("--minutes", type=float, default=10.0)
    p.add_argument("--seconds", type=float, default=2.0, help="model time per cycle")
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args(argv)
    n = str(args.threads)
    os.environ["KERAS_BACKEND"] = args.backend
    from bench.measure import backends

    backends.omp_threads(args.threads)  # before numpy loads its BLAS pool
    import numpy as np

    from bench.measure import disturbance, harness
    from bench.measure.workloads import data, get

    backend = backends.get(args.backend)
    backend.prepare({backends.THREADS_VAR: n})
    import keras

    model = get("cnn").build()
    split = data.digits()
    x = data.tiled(split.x_train, split.y_train, 128)[0]
    model.predict_on_batch(x)
    canary = harness.numpy_canary()
    a = np.random.default_rng(0).random((384, 384), dtype=np.float32)
    big = np.ones(16 << 20, dtype=np.float32)

    def model_rate() -> dict:
        """The model's samples per wall second and per CPU second (the process's, all threads),
        and the share of the machine's ticks the hypervisor stole meanwhile (the harness's
        own disturbance probe)."""
        start, calls = disturbance.snapshot(), 0
        while time.perf_counter() - start.wall < args.seconds:
            backend.sync(model.predict_on_batch(x))
            calls += 1
        window = disturbance.between(start, disturbance.snapshot())
        rate = calls * len(x) / window.wall
        return {"model": rate, "model_cpu": rate / max(window.cpu_per_wall, 1e-9), "steal": window.steal or 0.0}

    def timed(fn, reps: int) -> float:
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        return (time.perf_counter() - t0) / reps

    refs = {"canary": lambda: statistics.median(canary() for _ in range(5)),
            "matmul": lambda: timed(lambda: a @ a, 20),
            "stream": lambda: timed(lambda: big.copy(), 5),
            "python": lambda: timed(lambda: sorted({i: str(i) for i in range(20000)}.items()), 5)}
    rows = []
    end = time.monotonic() + 60 * args.minutes
    while time.monotonic() < end:
        row = {**model_rate(), **{k: f() for k, f in refs.items()}}
        rows.append(row)
        print(f"cycle {len(rows):>3}: model {row['model']:>9,.0f}/s "
              f"({row['model_cpu']:>9,.0f}/cpu s, steal {100 * row['steal']:.1f}%)  "
              + "  ".join(f"{k} {1000 * row[k]:.2f} ms" for k in refs), flush=True)
    rates = [r["model"] for r in rows]
    print(f"\nkeras {keras.__version__} {args.backend} threads={n}: {len(rows)} cycles; model "
          + _range(rates, harness.spread))
    y = [math.log(v) for v in rates]
    print("  model per CPU second: " + _range([r["model_cpu"] for r in rows], harness.spread))
    if len(rows) > 2 and len({r["steal"] for r in rows}) > 1:
        print(f"  steal share {100 * min(r['steal'] for r in rows):.1f}–"
              f"{100 * max(r['steal'] for r in rows):.1f}%; correlation with log(model) "
              f"{statistics.correlation([r['steal'] for r in rows], y):+.2f}")
    for k in refs:
        xk = [-math.log(r[k]) for r in rows]
        corr = statistics.correlation(xk, y) if len(rows) > 2 else float("nan")
        adj = [v * r[k] for v, r in zip(rates, rows)]
        print(f"  {k:<7} correlation {corr:+.2f}; model x ref time: spread "
              f"±{100 * harness.spread(adj):.1f}%")
    return 0


def _range(values: list[float], spread) -> str:
    """min, median, max and spread (harness.spread, passed in: bench modules load
    only once main has set the thread pools)."""
    return (f"min {min(values):,.0f} median {statistics.median(values):,.0f} max {max(values):,.0f} "
            f"(spread ±{100 * spread(values):.1f}%)")


if __name__ == "__main__":
    raise SystemExit(main())
