#!/usr/bin/env python3
"""Does the step injection cost more than it says? (issue 56: vs-native moved
+6 to +11 % under a 3 % injection; issue 53's "step" kind is the same code)

    .venv/bin/python studies/bench_inject_wait.py [--rounds 15] [--steps 150] [--fraction 0.03]
    .venv/bin/python studies/bench_inject_wait.py --harness [--rounds 8]   # vs-native, as a worker takes it

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
over plain's in the same round, and the spread of those ratios.

--harness: the worker's own path instead of a plain `fit`: the benchmark
built, run and reset as bench/measure/child.py does (mlp train, batch 256,
STEPS steps a call in its chunks), and each round one vs-native block
(bench.measure.native.measure: the check, then native.PAIRS pairs of a Keras
call and a native call) under "plain", under "wait+spin" and under "site":
the injection itself (studies/ab_injection.py's step_site, which sizes its
spin from the median interval between its own calls), in turn. Printed:
each round's ratios and their quotients to plain's, and the median quotients.

The plain loop's "wait+spin" is this study's own wrapper, its spin sized
from plain's step; only --harness runs the injection's own code too. The
plain loop's `fit` shuffles (the harness's does not). --harness reaches into
bench/measure/child.py's internals: `_build` and `_runner`.

The labels come only from how each variant is built. Exit 0; the numbers are the answer.
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


def harness(a) -> None:
    """vs-native under "plain", "wait+spin" and "site", a worker's way, in one process."""
    import keras

    from bench.measure import backends, child, native

    spec = child.Spec(backend="jax", keras_backend="jax", model="mlp", mode="train", batch_size=256, repeats=1,
                      min_repeat_seconds=0.5, warmup_steps=1, result_path="")
    backend = backends.get("jax")
    model, d = child._build(keras, spec)
    run = child._runner(model, d, spec, backend)
    run(1)  # compiles the step
    original, spin = model.train_function, [0.0]
    site = _site_slowed(keras, a.fraction)(original)  # one for the whole run: its intervals carry over, as in a worker
    fns = {"plain": original, "wait+spin": wrapped(original, "wait+spin", spin), "site": site}
    side = native.Keras(model, run, a.steps, "train", d.x_test, d.x_time, d.y_time, d.chunk)
    quotients: dict[str, list[float]] = {"wait+spin": [], "site": []}
    for r in range(a.rounds + 1):
        got = {}
        for variant in tuple(fns)[r % 3:] + tuple(fns)[:r % 3]:
            model.train_function = fns[variant]
            got[variant] = native.measure(backend, side, spec.batch_size)
            if model.train_function is not fns[variant]:
                raise SystemExit("Keras made a new train function: the variant did not hold")
        spin[0] = a.fraction * statistics.median(got["plain"]["keras_seconds"]) / a.steps
        if r == 0:
            continue  # the spin was not sized yet
        for v in quotients:
            quotients[v].append(got[v]["ratio"] / got["plain"]["ratio"])
        print(f"round {r}: vs-native plain {got['plain']['ratio']:.3f}, " + ", ".join(
            f"{v} {got[v]['ratio']:.3f} ({quotients[v][-1]:.3f})" for v in quotients), flush=True)
    for v, q in quotients.items():
        q = sorted(q)
        print(f"{v}: vs-native {statistics.median(q):.3f}x plain's (median of {len(q)} rounds; "
              f"{q[0]:.3f}-{q[-1]:.3f}); nominal {1 + a.fraction:.3f}", flush=True)


def _site_slowed(keras, fraction: float):
    """The injection's own wrapper (studies/ab_injection.py's step_site, run
    as a worker's sitecustomize runs it), without its hook on keras.Model:
    the study puts it on the train function by hand."""
    sys.path.insert(0, str(ROOT / "studies"))
    from ab_injection import step_site

    hooks = keras.Model.make_train_function, keras.Model.make_predict_function
    namespace: dict = {}
    exec(step_site(fraction), namespace)
    keras.Model.make_train_function, keras.Model.make_predict_function = hooks
    return namespace["_slowed"]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--steps", type=int, default=150)
    p.add_argument("--fraction", type=float, default=0.03)
    p.add_argument("--harness", action="store_true", help="vs-native through the worker's own path")
    a = p.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    os.environ["KERAS_BACKEND"] = "jax"
    if a.harness:
        harness(a)
        return 0
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
