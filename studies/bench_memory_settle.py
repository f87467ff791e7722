#!/usr/bin/env python3
"""Does settling each worker between benchmarks make peak memory repeat? (issue 13)

    .venv/bin/python studies/bench_memory_settle.py --base 45f24d2 [--backends jax,torch]
                        [--runs 4] [--full] [--keep DIR]
    .venv/bin/python studies/bench_memory_settle.py --from DIR    # the report from kept records
    .venv/bin/python studies/bench_memory_settle.py --cost jax,torch  # seconds one settle takes

Runs `bench run` from two revisions taking turns, invocation by invocation:
"base", a git worktree of --base (45f24d2: before usage.settle, each benchmark's
peak included what earlier benchmarks in its worker left), and "here", this
checkout. Both use this venv. Prints, per backend and benchmark and for each
side, the spread across invocations of the result's host peak memory (the least
first-round worker's: run.protocol.memory "least" / "least, settled"; goal:
within ±2 %), each invocation's workers (MiB), and the headline's median ratio
here/base (a settle that cost speed would show there; taken in turns, so the
host's drift is in it too). --quick by default: peak memory does not depend on
the repeats, and 3 workers a run keep 8 invocations near 20 minutes.

Measured 2026-12-04 (--base 45f24d2, quick; torch 8 invocations a side, jax 4):
base ±0.3-2.9 % (10 of 12 within 2 %: jax mlp/latency 2.7, torch cnn/predict
2.9 %), here ±0.1-1.8 % (12 of 12); jax mlp/latency's least peak 436-440 MiB
here against 491-523 MiB; headline ratios -5.0 to +7.0 %.

--cost times usage.settle three times in a fresh process per backend, after a
small MLP's fit and predict. Measured 2026-12-04, twice: jax 116-129 ms, torch
211-263 ms (with a second gc.collect after clear_session's own, since dropped:
250-304 and 505-580 ms).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "studies"))

from bench_stability import least_peak, load_records, ok_workers  # noqa: E402
from bench.measure.estimate import spread  # noqa: E402

SIDES = ("base", "here")
COST = """
import time, numpy as np, keras
from bench.measure import usage
m = keras.Sequential([keras.Input((64,)), keras.layers.Dense(256, activation="relu"), keras.layers.Dense(10)])
m.compile("adam", "sparse_categorical_crossentropy")
x = np.random.rand(20000, 64).astype("float32"); y = np.random.randint(0, 10, 20000)
m.fit(x, y, batch_size=256, epochs=2, verbose=0); m.predict(x, verbose=0)
del m
for _ in range(3):
    t = time.perf_counter(); steps = usage.settle(keras)
    print(keras.backend.backend(), f"{1000 * (time.perf_counter() - t):.0f} ms", *steps)
"""


def cost(backends: str) -> int:
    for backend in backends.split(","):
        subprocess.run([sys.executable, "-c", COST], cwd=REPO, check=False,
                       env={**os.environ, "KERAS_BACKEND": backend})
    return 0


def run_turns(base_tree: Path, backends: str, runs: int, full: bool, keep: Path) -> None:
    for i in range(1, runs + 1):
        for side in SIDES:
            out = keep / side / str(i)
            out.mkdir(parents=True, exist_ok=True)
            cmd = [sys.executable, "-m", "bench", "run", "--device", "local-cpu", "--backend", backends,
                   "--out", str(out)] + ([] if full else ["--quick"])
            cwd = base_tree if side == "base" else REPO
            with open(out / "log", "w") as log:
                subprocess.run(cmd, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, check=False)
            print(f"invocation {i} {side}: done", file=sys.stderr, flush=True)


def load(keep: Path) -> dict:
    """{(backend, model, mode): {side: [result, ...]}} in invocation order."""
    got: dict = defaultdict(lambda: defaultdict(list))
    for side in SIDES:
        folders = [d for d in (keep / side).iterdir() if d.is_dir()] if (keep / side).is_dir() else []
        for backend, records in load_records(folders).items():
            for record in records:
                for r in record["results"]:
                    if r.get("status") == "ok":
                        got[(backend, r["model"], r["mode"])][side].append(r)
    return got


def report(keep: Path) -> int:
    rows = load(keep)
    within = {side: 0 for side in SIDES}
    for key, sides in sorted(rows.items()):
        name = "{} {}/{}".format(*key)
        for side in SIDES:
            rs = sides.get(side, [])
            least = [least_peak(r) for r in rs]
            if not rs or not all(least):
                print(f"{name:20} {side}: no peaks")
                continue
            s = spread(least)
            within[side] += s <= 0.02
            workers = "  ".join("/".join(str(w["host_peak_bytes"] >> 20) for w in ok_workers(r)) for r in rs)
            print(f"{name:20} {side}: least ±{100 * s:.1f}%  workers (MiB) {workers}")
        if sides.get("base") and sides.get("here"):
            ratio = statistics.median(r["value"] for r in sides["here"]) / statistics.median(
                r["value"] for r in sides["base"])
            print(f"{'':20} headline here/base {ratio - 1:+.1%}")
    print(", ".join(f"{side}: {n} of {len(rows)} within ±2 %" for side, n in within.items()))
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base", help="git revision to compare against (runs from a worktree of it)")
    p.add_argument("--backends", default="jax,torch")
    p.add_argument("--runs", type=int, default=4, help="invocations per side")
    p.add_argument("--full", action="store_true", help="the nightly protocol instead of --quick")
    p.add_argument("--keep", type=Path, default=None, help="keep the records here")
    p.add_argument("--from", dest="source", type=Path, default=None, help="only report kept records")
    p.add_argument("--cost", metavar="BACKENDS", help="only time one settle, per backend (e.g. jax,torch)")
    args = p.parse_args(argv)
    if args.cost:
        return cost(args.cost)
    if args.source:
        return report(args.source)
    if not args.base:
        p.error("--base REV is needed to run (or --from DIR to report)")
    with tempfile.TemporaryDirectory(prefix="bench-settle-") as tmp:
        keep = args.keep or Path(tmp) / "records"
        tree = Path(tmp) / "base"
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(tree), args.base], check=True)
        try:
            run_turns(tree, args.backends, args.runs, args.full, keep)
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)], check=False)
        return report(keep)


if __name__ == "__main__":
    sys.exit(main())
