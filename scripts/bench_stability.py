"""Stability of the harness: the same quick benchmark in N separate processes.

    .venv/bin/python scripts/bench_stability.py                       # jax and torch, 5 runs each
    .venv/bin/python scripts/bench_stability.py --backends mlx --runs 3 --models mlp
    .venv/bin/python scripts/bench_stability.py --full              # the nightly protocol

Each run is a fresh `python -m bench run --backend B --quick` (its own
processes, its own compile). Prints every run's headline per (model, mode),
their median, and the spread: the largest distance of a run from that median
(goal: within +-5 %), plus each run's wall time. Not a test: the numbers
depend on the machine and on what else it is doing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def one_run(backend: str, extra: list[str]) -> tuple[dict, float]:
    with tempfile.TemporaryDirectory() as out:
        t0 = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "bench", "run", "--backend", backend,
                               "--out", out, *extra], cwd=REPO, capture_output=True, text=True)
        wall = time.monotonic() - t0
        if proc.returncode != 0:
            raise SystemExit(f"bench run --backend {backend} failed:\n{proc.stderr[-2000:]}")
        data = json.loads(Path(proc.stdout.split()[0]).read_text())
    return {(r["model"], r["mode"]): r.get("value") for r in data["results"]}, wall


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backends", default="jax,torch")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--models", default=None)
    p.add_argument("--modes", default=None)
    p.add_argument("--full", action="store_true", help="the nightly protocol instead of --quick")
    args = p.parse_args(argv)
    extra = ([] if args.full else ["--quick"]) + (["--models", args.models] if args.models else []) + (["--modes", args.modes] if args.modes else [])
    worst = 0.0
    for backend in args.backends.split(","):
        runs = []
        for i in range(args.runs):
            values, wall = one_run(backend, extra)
            runs.append(values)
            shown = "  ".join(f"{m}/{mode} {v:,.0f}" if v else f"{m}/{mode} —" for (m, mode), v in values.items())
            print(f"{backend} run {i + 1}: {shown}  (wall {wall:.0f} s)", flush=True)
        print(f"\n{backend}: {'model/mode':<14} {'median':>10} {'spread':>8}   runs (samples/s)")
        for key in runs[0]:
            vals = [r[key] for r in runs if r.get(key)]
            if len(vals) < 2:
                print(f"{backend}: {'/'.join(key):<14} not enough ok runs")
                continue
            mid = statistics.median(vals)
            spread = max(abs(v / mid - 1) for v in vals)
            worst = max(worst, spread)
            print(f"{backend}: {'/'.join(key):<14} {mid:>10,.0f} {100 * spread:>7.1f}%   "
                  + ", ".join(f"{v:,.0f}" for v in vals))
        print()
    print(f"largest spread: ±{100 * worst:.1f}% (goal ±5 %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
