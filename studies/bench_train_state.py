#!/usr/bin/env python3
"""Does a train benchmark slow down as its model trains on? (issue 10, workers v11)

    .venv/bin/python studies/bench_train_state.py                      # torch mlp/train, 150 steps a call
    .venv/bin/python studies/bench_train_state.py --model cnn --steps 66 --calls 16
    .venv/bin/python studies/bench_train_state.py --backend jax

Before workers v11 every timed call of a train benchmark trained on from where
the last one stopped, so a worker's seventh repeat timed a model seven calls
further along than its first. This times `--calls` calls of `--steps` steps in
a row after the quality gate, twice in one process set up as a worker is (the
local-cpu device's threads and glibc settings, pinned to one CPU): trained on,
then each call from the committed start (child._start_state: the committed
weights and Adam state, what workers v13 do; v11 and v12 reset to the state the
gate left). For each call it prints samples/s and the share of the model's and
Adam's float32 values that are denormal (non-zero and below float32's smallest
normal), which x86 computes slowly unless the backend flushes them (XLA does,
torch by default does not). Not a test: one process's timings.

Measured (2026-12-06 07:08 UTC, torch mlp/train, 150 steps, before the reset
was in the harness): trained on, calls 1-4 read 46.3-48.0k samples/s with no
denormal value; from call 5 (loss ~1e-4) 4.1-4.9 % of the values were denormal
and the calls read 34.7-40.5k. With torch.set_flush_denormal(True) all 12 calls
read 46.4-49.2k. From the gate's state every call, 45.5-47.8k over 10 calls.

Internals it pins (a change to them must keep this study running): bench.measure.child._build, _runner, _gate and _start_state (a worker's train benchmark, step by step).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "studies"))


def denormal_share(keras, model) -> float:
    """The fraction of the model's and its optimizer's float32 values that are denormal."""
    import numpy as np

    tiny = np.finfo(np.float32).tiny
    total = denormal = 0
    for v in list(model.variables) + list(model.optimizer.variables):
        a = np.asarray(keras.ops.convert_to_numpy(v.value))
        if a.dtype != np.float32:
            continue
        total += a.size
        denormal += int(np.count_nonzero((a != 0) & (np.abs(a) < tiny)))
    return denormal / total if total else 0.0


def child(model_name: str, steps: int, calls: int) -> dict:
    """In the worker-like process: the two series of calls, as JSON-ready lists."""
    from bench import config
    from bench.measure import backends
    from bench.measure import child as bench_child

    backend = backends.get(os.environ["KERAS_BACKEND"])
    backend.prepare(os.environ)
    import keras

    cfg = config.load()
    spec = bench_child.Spec(backend="x", keras_backend=os.environ["KERAS_BACKEND"], model=model_name,
                            mode="train", batch_size=cfg.models[model_name].batch_size, repeats=calls,
                            min_repeat_seconds=cfg.harness.min_repeat_seconds,
                            warmup_steps=cfg.harness.warmup_steps, result_path="")
    out = {}
    for kind in ("trained on", "from the committed start"):
        model, d = bench_child._build(keras, spec)
        run = bench_child._runner(model, d, spec, backend)
        run(1)
        bench_child._gate(model, d, spec, time.perf_counter)
        reset = bench_child._start_state(model, spec, backend) if kind != "trained on" else None
        run(spec.warmup_steps)
        rows = []
        for _ in range(calls):
            if reset:
                reset()
            t0 = time.perf_counter()
            loss = float(run(steps))
            seconds = time.perf_counter() - t0
            rows.append([steps * spec.batch_size / seconds, denormal_share(keras, model), loss])
        out[kind] = rows
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="torch")
    p.add_argument("--model", default="mlp")
    p.add_argument("--steps", type=int, default=150, help="steps per call (about what the nightly calibrates)")
    p.add_argument("--calls", type=int, default=12, help="timed calls in a row, each way")
    p.add_argument("--timeout", type=float, default=900, help="seconds the process may take")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.steps < 1 or args.calls < 1:
        raise SystemExit(f"--steps {args.steps} --calls {args.calls}: expected whole numbers >= 1")
    if args.child:
        if hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one CPU, before the backend's threads
        print(json.dumps(child(args.model, args.steps, args.calls)))
        return 0
    from bench_process_modes import worker_env

    cmd = [sys.executable, __file__, "--child", "--model", args.model, "--steps", str(args.steps),
           "--calls", str(args.calls)]
    print(f"{args.backend} {args.model}/train, {args.calls} calls of {args.steps} steps each way", flush=True)
    try:
        proc = subprocess.run(cmd, env=worker_env(args.backend), capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        raise SystemExit(f"the measuring process ran past --timeout {args.timeout:g} s") from None
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["no output"]
        raise SystemExit(f"the measuring process failed (rc {proc.returncode}): {tail[0]}")
    for kind, rows in json.loads(proc.stdout.strip().splitlines()[-1]).items():
        print(f"{kind}:")
        for i, (rate, share, loss) in enumerate(rows, 1):
            print(f"  call {i:2d}: {rate:9,.0f} samples/s  denormal {share * 100:5.2f} %  loss {loss:.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
