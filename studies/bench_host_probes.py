#!/usr/bin/env python3
"""Which host reading follows what slows the models? Candidate probes beside real Keras work.

    .venv/bin/python studies/bench_host_probes.py run --backend torch --minutes 20 --out .local/probes-torch.json
    .venv/bin/python studies/bench_host_probes.py report .local/probes-torch.json [...]

Why: the host note (bench/analyse/host.py) reads the host by the workers'
`reference_seconds`, the fixed numpy canary (64x64 float64 matmuls on one
core, bench/measure/harness.py). On some sets it missed the machine's slow
phases: stab-59's torch rows moved 3-13 % while its canary held within
±4 % (docs/measurements.md, "A slow host or slow Keras"). The canary stays in
L1/L2; a worker's model also streams its weights and activations through the
caches and memory a neighbouring VM shares. This measures whether another
probe follows the models better.

`run`, in one process pinned to one CPU with one compute thread (a local-cpu
worker's settings), loops for --minutes: each round times fixed work of three
Keras workloads (mlp predict, cnn train, mlp batch-1 latency p50) and of each
probe:

- canary: the harness's numpy canary, the median of 5 (what is recorded is a
  worker's fastest; the median follows the round);
- memory: copies of a 64 MiB float64 array (beyond this VM's last-level cache);
- native: the backend's own matmul at the mlp's first-layer shape, no Keras;
- native1: the same at batch 1, where the backend's dispatch costs more than
  the arithmetic (what batch-1 latency is made of);
- small: numpy's batch-1 matmul at that shape (numpy's dispatch, no backend);
- python: plain Python function calls (the interpreter alone);
- steal: the host's steal time over the round, as a fraction of its wall time
  (/proc/stat; not a time, so its slope is per unit, not per log).

`report` bins rounds by --bin seconds, takes each bin's median, and for each
(workload, probe) gives the correlation of their logs across bins and how
much of the workload's spread is left once the probe's fitted share is taken
out: the spread (the largest distance of a bin from the median, in %) raw and
after. A probe worth reading leaves little.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path

from scipy import stats

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WORKLOADS = ("mlp/predict", "cnn/train", "mlp/latency")
PROBES = ("canary", "memory", "native", "native1", "small", "python", "steal")
TARGET_SECONDS = 0.25  # each fixed piece of work, chosen once at the start
SELF_TIMED = ("mlp/latency", "canary")  # return their own figure; the rest are timed over fixed calls


def read_steal() -> tuple[int, int]:
    """(steal ticks, all ticks) of the host's cpu line in /proc/stat."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return fields[7], sum(fields)


def fixed(fn, target: float = TARGET_SECONDS) -> int:
    """How many calls of fn make about `target` seconds (after one warm call)."""
    fn()
    t0 = time.perf_counter()
    fn()
    once = max(time.perf_counter() - t0, 1e-6)
    return max(1, round(target / once))


def timed(fn, n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return time.perf_counter() - t0


def native_matmul(backend: str, rows: int = 256):
    """One (rows, 784) x (784, 256) float32 matmul in the backend itself, synced."""
    import numpy as np

    a = np.random.default_rng(0).standard_normal((rows, 784)).astype("float32")
    b = np.random.default_rng(1).standard_normal((784, 256)).astype("float32")
    if backend == "torch":
        import torch

        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        return lambda: torch.mm(ta, tb)
    import jax
    import jax.numpy as jnp

    ja, jb = jnp.asarray(a), jnp.asarray(b)
    f = jax.jit(jnp.dot)
    return lambda: f(ja, jb).block_until_ready()


def python_calls():
    """2,000 calls of a small Python function: the interpreter's own speed."""
    def step(i: int) -> int:
        return i * 3 + 1

    def calls() -> int:
        total = 0
        for i in range(2000):
            total += step(i)
        return total

    return calls


def keras_work(keras):
    """name -> (callable, reports): fixed Keras work at the nightly's batch sizes."""
    import numpy as np

    from bench.measure import latency, workloads
    from bench.measure.workloads import data

    split = data.digits()
    out = {}
    keras.utils.set_random_seed(0)
    mlp = workloads.get("mlp").build()
    workloads.compile_model(mlp)
    x_mlp = data.for_model(split.x_test, True)
    x_pred, _ = data.tiled(x_mlp, split.y_test, 256 * 4)
    out["mlp/predict"] = lambda: mlp.predict(x_pred, batch_size=256, verbose=0)
    one = x_mlp[:1]
    # the p50 in seconds of 200 batch-1 calls, timed as a latency worker times them
    out["mlp/latency"] = lambda: latency.measure(lambda: np.asarray(mlp.predict_on_batch(one)), 200, 0).p50_ms / 1000
    cnn = workloads.get("cnn").build()
    workloads.compile_model(cnn)
    x_cnn = data.for_model(split.x_train, False)
    x_fit, y_fit = data.tiled(x_cnn, split.y_train, 128 * 4)
    out["cnn/train"] = lambda: cnn.fit(x_fit, y_fit, batch_size=128, epochs=1, verbose=0, shuffle=False)
    return out


def run(backend: str, minutes: float, cpu: int, out: Path) -> None:
    os.sched_setaffinity(0, {cpu})
    os.environ["KERAS_BACKEND"] = backend
    from bench.measure import backends, harness

    settings = backends.get(backend).prepare({backends.THREADS_VAR: "1"})
    import keras
    import numpy as np

    work = keras_work(keras)
    canary = harness.numpy_canary()
    big = np.ones(64 * 2**20 // 8)
    dst = np.empty_like(big)
    one_row = np.ones((1, 784), dtype="float32")
    weights = np.ones((784, 256), dtype="float32")
    probes = {"canary": lambda: statistics.median(canary() for _ in range(5)),
              "memory": lambda: np.copyto(dst, big),
              "native": native_matmul(backend),
              "native1": native_matmul(backend, rows=1),
              "small": lambda: one_row @ weights,
              "python": python_calls()}
    timers = {**work, **probes}
    counts = {name: fixed(fn) for name, fn in timers.items() if name not in SELF_TIMED}
    print(f"{backend}, CPU {cpu}, settings {settings}; calls per round: {counts}", flush=True)
    rounds, t_end = [], time.time() + minutes * 60
    while time.time() < t_end:
        steal0, total0 = read_steal()
        t0 = time.time()
        row = {"t": t0}
        for name, fn in timers.items():
            row[name] = fn() if name in SELF_TIMED else timed(fn, counts[name])
        steal1, total1 = read_steal()
        row["steal"] = (steal1 - steal0) / max(total1 - total0, 1)
        rounds.append(row)
        if len(rounds) % 20 == 0:
            print(f"  {len(rounds)} rounds, {(time.time() - t_end) / -60:.1f} min left", flush=True)
    out.write_text(json.dumps({"backend": backend, "cpu": cpu, "calls": counts, "rounds": rounds},
                              indent=1, sort_keys=True))
    print(f"{len(rounds)} rounds -> {out}")


def bins(rounds: list[dict], seconds: float) -> list[dict]:
    """Each bin's median of every field, bins of `seconds` from the first round."""
    t0 = rounds[0]["t"]
    grouped: dict[int, list[dict]] = {}
    for r in rounds:
        grouped.setdefault(int((r["t"] - t0) // seconds), []).append(r)
    return [{k: statistics.median(r[k] for r in group) for k in group[0]} for _, group in sorted(grouped.items())]


def spread(xs: list[float]) -> float:
    """The largest distance of a log value from their median, as a % of the value."""
    m = statistics.median(xs)
    return 100 * (math.exp(max(abs(x - m) for x in xs)) - 1)


def explained(workload: list[float], probe: list[float], log_probe: bool = True) -> tuple[float, float, float, float]:
    """(r, slope, spread raw, spread left): the workload's log against the probe
    (its log, or the value itself for a fraction like steal), least squares."""
    y = [math.log(v) for v in workload]
    x = [math.log(v) if log_probe else v for v in probe]
    if len(set(x)) < 2 or len(set(y)) < 2:  # nothing moved: nothing to fit (linregress would divide by 0)
        return 0.0, 0.0, spread(y), spread(y)
    fit = stats.linregress(x, y)
    mx = statistics.fmean(x)
    left = [b - fit.slope * (a - mx) for a, b in zip(x, y)]
    return fit.rvalue, fit.slope, spread(y), spread(left)

def report(path: Path, seconds: float) -> list[str]:
    data = json.loads(path.read_text())
    binned = bins(data["rounds"], seconds)
    probes = [p for p in PROBES if p in binned[0]]  # files from before a probe was added lack it
    lines = [f"{path} ({data['backend']}, CPU {data['cpu']}): {len(data['rounds'])} rounds, "
             f"{len(binned)} bins of {seconds:g} s",
             "  probes' own spread: " + ", ".join(
                 f"{p} ±{spread([math.log(b[p]) for b in binned]):.1f}%" for p in probes if p != "steal")
             + f", steal {min(b['steal'] for b in binned):.1%}-{max(b['steal'] for b in binned):.1%}"]
    for w in WORKLOADS:
        parts = []
        for p in probes:
            r, slope, raw, left = explained([b[w] for b in binned], [b[p] for b in binned], p != "steal")
            parts.append(f"{p} r {r:+.2f} slope {slope:.2f} left ±{left:.1f}%")
        lines.append(f"  {w:<12} ±{raw:.1f}% raw; " + "; ".join(parts))
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="time the workloads and the probes, round after round")
    r.add_argument("--backend", choices=("jax", "torch"), default="torch")
    r.add_argument("--minutes", type=float, default=20)
    r.add_argument("--cpu", type=int, default=0)
    r.add_argument("--out", type=Path, required=True)
    p = sub.add_parser("report", help="how well each probe follows each workload")
    p.add_argument("files", type=Path, nargs="+")
    p.add_argument("--bin", type=float, default=60, help="seconds per bin (default 60)")
    args = ap.parse_args(argv)
    if args.cmd == "run":
        run(args.backend, args.minutes, args.cpu, args.out)
        return 0
    for f in args.files:
        print("\n".join(report(f, args.bin)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
