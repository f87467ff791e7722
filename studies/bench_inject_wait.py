#!/usr/bin/env python3
"""Does the step injection cost more than it says? (issue 56: vs-native moved
+6 to +11 % under a 3 % injection; issue 53's "step" kind is the same code)

    .venv/bin/python studies/bench_inject_wait.py [--rounds 15] [--steps 150] [--fraction 0.03]

The injection (studies/ab_injection.py, STEP_SITE) waits for each jax step
(block_until_ready) and then spins FRACTION x the step's time. jax
dispatches a step and returns before it has run, so without the wait the
next step's dispatch overlaps this one's compute; the wait takes that
overlap away. This study times that part alone, in one process pinned to
one CPU as a worker is (harness worker_cpus 1), the benchmark's MLP
compiled as the harness compiles it, batch 128, made-up data:

- "plain": the train step function as Keras makes it;
- "wait": each call waited for, nothing spun;
- "wait+spin": each call waited for, then FRACTION x plain's step spun (the injection);
- "spin": FRACTION x plain's step spun right after the call, not waited for.

Each round times one `fit` of STEPS steps under each variant, in turn (the
order rotated). Printed: per variant the median over rounds of its time
over plain's in the same round, and the spread of those ratios. The labels
come only from how each variant is built. Exit 0; the numbers are the answer.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

VARIANTS = ("plain", "wait", "wait+spin", "spin")
BATCH = 128


def _spin(seconds: float) -> None:
    until = time.perf_counter() + seconds
    while time.perf_counter() < until:
        pass


def wrapped(fn, variant: str, spin: list[float]):
    """The train step function under `variant`; spin[0]: the seconds a spin takes."""
    import jax

    if variant == "plain":
        return fn

    def call(*args, **kwargs):
        out = fn(*args, **kwargs)
        if variant != "spin":
            jax.block_until_ready(out)
        if variant != "wait":
            _spin(spin[0])
        return out
    return call


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--steps", type=int, default=150)
    p.add_argument("--fraction", type=float, default=0.03)
    a = p.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    os.environ["KERAS_BACKEND"] = "jax"
    import numpy as np

    from bench.measure import workloads

    rng = np.random.default_rng(0)
    x = rng.random((a.steps * BATCH, 784), dtype=np.float32)
    y = rng.integers(0, 10, a.steps * BATCH)
    model = workloads.get("mlp").build()
    workloads.compile_model(model)
    model.fit(x, y, batch_size=BATCH, epochs=1, verbose=0)  # compiles the step
    original = model.train_function
    spin = [0.0]
    got: dict[str, list[float]] = {v: [] for v in VARIANTS}
    for r in range(a.rounds + 1):
        order = VARIANTS[r % 4:] + VARIANTS[:r % 4]
        times = {}
        for variant in order:
            model.train_function = wrapped(original, variant, spin)
            t0 = time.perf_counter()
            model.fit(x, y, batch_size=BATCH, epochs=1, verbose=0)
            times[variant] = time.perf_counter() - t0
        spin[0] = a.fraction * times["plain"] / a.steps
        if r == 0:
            continue  # the spin was not sized yet
        for variant in VARIANTS:
            got[variant].append(times[variant] / times["plain"])
        print(f"round {r}: plain {times['plain'] * 1000 / a.steps:.2f} ms a step; "
              + ", ".join(f"{v} {times[v] / times['plain']:.3f}" for v in VARIANTS[1:]), flush=True)
    for variant in VARIANTS[1:]:
        ratios = sorted(got[variant])
        print(f"{variant}: {statistics.median(ratios):.3f}x plain's time (median of {len(ratios)} rounds; "
              f"{ratios[0]:.3f}-{ratios[-1]:.3f}); nominal {1 + (0 if variant == 'wait' else a.fraction):.3f}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
