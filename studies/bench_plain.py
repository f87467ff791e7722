"""The harness's headline against a plain timing of the same compiled model.

    .venv/bin/python studies/bench_plain.py                  # jax and torch, every model and mode
    .venv/bin/python studies/bench_plain.py --backends mlx --models mlp

For each (backend, model, mode), in one process per backend: build and
compile the model as the harness does, then alternate, `--rounds` times,
(a) the harness's quick protocol (bench.measure.harness.benchmark on the child's
run(steps)) and (b) a plain timing written here without the harness: plain
`model.fit(x, y, epochs=1, verbose=0)` / `model.predict(x)` calls over about
1 s of data (each call at most the harness's memory bound,
bench.measure.child.CHUNK_BYTES), between two perf_counter() reads. Prints both
medians and their difference (goal: within 5 %). Name a backend several
times (--backends jax,jax,jax,jax,jax) to see how much both figures move
from one process to the next on this machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.measure.harness import spread  # noqa: E402
PLAIN_SECONDS = 1.0


def measure(model_name: str, mode: str, rounds: int) -> dict:
    import keras  # noqa: F401  (KERAS_BACKEND is set by the parent)

    from bench.measure import backends, child, harness

    from bench import config
    from bench.measure.workloads import data

    cfg = config.load()
    bs = cfg.models[model_name].batch_size
    spec = child.Spec(backend="x", keras_backend=keras.backend.backend(), model=model_name, mode=mode,
                      batch_size=bs, repeats=cfg.harness.quick_repeats,
                      min_repeat_seconds=cfg.harness.quick_min_repeat_seconds,
                      warmup_steps=cfg.harness.warmup_steps, result_path="")
    model, d = child._build(keras, spec)
    run = child._runner(model, d, spec, backends.get(spec.keras_backend))
    run(1)  # compile
    run(4)  # warm

    # The plain timing's data: ~PLAIN_SECONDS worth, sized from a quick probe.
    t0 = time.perf_counter()
    run(8)
    per_step = (time.perf_counter() - t0) / 8
    chunk = min(d.chunk, max(8, round(PLAIN_SECONDS / per_step)))  # the harness's memory bound
    calls = max(1, round(PLAIN_SECONDS / (per_step * chunk)))
    steps = chunk * calls
    x, y = data.tiled(d.x_time, d.y_time, chunk * bs)

    def plain() -> float:
        t = time.perf_counter()
        for _ in range(calls):
            if mode == "train":
                model.fit(x, y, batch_size=bs, epochs=1, verbose=0, shuffle=False)
            else:
                model.predict(x, batch_size=bs, verbose=0)
        return steps * bs / (time.perf_counter() - t)

    harnessed, plains = [], []
    for _ in range(rounds):
        harnessed.append(harness.benchmark(run, bs, spec.protocol()).value)
        plains.append(plain())
    return {"harness": statistics.median(harnessed), "plain": statistics.median(plains),
            "harness_all": harnessed, "plain_all": plains, "plain_steps": steps}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backends", default="jax,torch")
    p.add_argument("--models", default="cnn,mlp")
    p.add_argument("--modes", default="train,predict")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:  # in the backend's own process: measure and print JSON
        out = {f"{m}/{mode}": measure(m, mode, args.rounds)
               for m in args.models.split(",") for mode in args.modes.split(",")}
        print(json.dumps(out))
        return 0
    worst = 0.0
    per_key: dict = {}  # (backend, model/mode) -> [(harness, plain)] over processes
    print(f"{'backend':<9} {'model/mode':<12} {'harness':>10} {'plain':>10} {'diff':>7}")
    for backend in args.backends.split(","):
        env = dict(os.environ, KERAS_BACKEND=backend)
        proc = subprocess.run([sys.executable, __file__, "--child", "1", "--models", args.models,
                               "--modes", args.modes, "--rounds", str(args.rounds)],
                              env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"{backend}: failed\n{proc.stderr[-2000:]}")
            continue
        for key, r in json.loads(proc.stdout.strip().splitlines()[-1]).items():
            diff = r["harness"] / r["plain"] - 1
            worst = max(worst, abs(diff))
            per_key.setdefault((backend, key), []).append((r["harness"], r["plain"]))
            print(f"{backend:<9} {key:<12} {r['harness']:>10,.0f} {r['plain']:>10,.0f} {100 * diff:>+6.1f}%",
                  flush=True)
    print(f"largest difference: {100 * worst:.1f}% (goal 5 %)")
    # A backend listed more than once (--backends jax,jax,jax): how much each
    # figure moves from one process to the next, harness and plain alike.
    for (backend, key), pairs in per_key.items():
        if len(pairs) > 1:
            h, p_ = [a for a, _ in pairs], [b for _, b in pairs]
            print(f"{backend} {key}: across {len(pairs)} processes, harness spread "
                  f"±{100 * spread(h):.1f}%, plain spread ±{100 * spread(p_):.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
