"""Does the work per call move the headline? Calibration's spread and the step count's effect.

    .venv/bin/python studies/bench_fixed_work.py                      # jax and torch, every model and mode
    .venv/bin/python studies/bench_fixed_work.py --backends jax --models mlp --rounds 9

Protocol 2 fixes the work per call (steps) within a run: the first worker
calibrates, every later one reuses it. Across nights each run calibrates
afresh. That matters only if (a) calibration lands on different step counts
from one run to the next and (b) the step count moves samples/s. This script
measures both, in one process per backend, with the nightly protocol's
min_repeat_seconds:

- `--calibrations` fresh calibrations (bench.measure.harness.calibrate) in a
  row: the step counts they land on;
- then `--rounds` rounds of one timed call each at N/2, N and 2N steps (N: the
  median calibration), interleaved so the host's drift hits all three alike;
  the ratio of samples/s at N/2 and 2N to N's, per round: their geometric
  mean and two standard errors.

Ratios within a percent or two of 1 over the calibrations' range say the fresh calibration each night costs no stability; a larger one says
carry the work from night to night.

Internals it pins (a change to them must keep this study running): bench.measure.child._build and _runner (a worker's model, data and timed call).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def measure(model_name: str, mode: str, calibrations: int, rounds: int) -> dict:
    import keras  # noqa: F401  (KERAS_BACKEND is set by the parent)

    from bench import config
    from bench.measure import backends, child, harness, schedule

    cfg = config.load()
    spec = child.Spec(backend="x", keras_backend=keras.backend.backend(), model=model_name, mode=mode,
                      batch_size=cfg.models[model_name].batch_size, repeats=cfg.harness.repeats,
                      min_repeat_seconds=cfg.harness.min_repeat_seconds,
                      warmup_steps=cfg.harness.warmup_steps, result_path="")
    model, d = child._build(keras, spec)
    run = child._runner(model, d, spec, backends.get(spec.keras_backend))
    run(1)  # compile
    run(max(1, spec.warmup_steps))
    protocol = spec.protocol()
    canaries = harness._Canaries(harness.numpy_canary(clock=time.perf_counter))
    found = [harness.calibrate(run, protocol, time.perf_counter, canaries)[-1][0] for _ in range(calibrations)]
    n = max(2, int(statistics.median(found)))
    counts = {"half": max(1, n // 2), "n": n, "double": 2 * n}
    per_round = {k: [] for k in counts}
    for r in range(rounds):
        for name, steps in schedule.rotated(tuple(counts.items()), r):  # no count always runs first
            seconds = harness.time_call(lambda: run(steps), time.perf_counter)
            per_round[name].append(steps * spec.batch_size / seconds)
    ratios = {k: [a / b for a, b in zip(per_round[k], per_round["n"])] for k in ("half", "double")}
    return {"calibrated": found, "steps": counts, "ratios": ratios}


def effect(ratios: list[float]) -> tuple[float, float]:
    """(mean, 2 standard errors) of the per-round log ratios, as fractions."""
    logs = [math.log(r) for r in ratios]
    se = statistics.stdev(logs) / math.sqrt(len(logs)) if len(logs) > 1 else float("nan")
    return math.expm1(statistics.fmean(logs)), 2 * se


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backends", default="jax,torch")
    p.add_argument("--models", default="cnn,mlp")
    p.add_argument("--modes", default="train,predict")
    p.add_argument("--calibrations", type=int, default=5)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:  # in the backend's own process: measure and print JSON
        out = {f"{m}/{mode}": measure(m, mode, args.calibrations, args.rounds)
               for m in args.models.split(",") for mode in args.modes.split(",")}
        print(json.dumps(out))
        return 0
    print(f"{'backend':<8} {'model/mode':<12} {'calibrated steps':<22} {'N':>5} "
          f"{'N/2 vs N':>16} {'2N vs N':>16}")
    halves, doubles = [], []
    for backend in args.backends.split(","):
        env = dict(os.environ, KERAS_BACKEND=backend)
        proc = subprocess.run([sys.executable, __file__, "--child", "1", "--models", args.models,
                               "--modes", args.modes, "--calibrations", str(args.calibrations),
                               "--rounds", str(args.rounds)], env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"{backend}: failed\n{proc.stderr[-2000:]}")
            continue
        for key, r in json.loads(proc.stdout.strip().splitlines()[-1]).items():
            cal = ",".join(map(str, r["calibrated"]))
            (h, hse), (d, dse) = effect(r["ratios"]["half"]), effect(r["ratios"]["double"])
            halves.append(h)
            doubles.append(d)
            print(f"{backend:<8} {key:<12} {cal:<22} {r['steps']['n']:>5} "
                  f"{100 * h:>+7.1f}% ±{100 * hse:>4.1f}% {100 * d:>+7.1f}% ±{100 * dse:>4.1f}%", flush=True)
    if halves:
        # a per-call overhead would make N/2 slower and 2N faster in every row
        print(f"mean over benchmarks: N/2 {100 * statistics.fmean(halves):+.1f}%, "
              f"2N {100 * statistics.fmean(doubles):+.1f}% (±: two standard errors over the rounds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
