"""Why does batch-1 latency differ per worker process? (issues 10 and 13)

    .venv/bin/python studies/bench_latency_lottery.py --backend jax --model mlp --procs 6

A duet's batch-1 latency ratio moved +-16-18 % between invocations while its
train/predict ratios held a few %, and single jax mlp workers read anywhere
in 0.12-0.25 ms. Two hypotheses, told apart here:

- a per-process lottery (memory layout, which core, what the process
  compiled): then a process keeps its figure whatever its neighbour does;
- the neighbour on the other core (both vCPUs may share one physical core or
  its caches): then a process's figure moves with what its neighbour does.

Each of `--procs` fresh processes (pinned to one CPU, alternating CPU 0 and
1) builds the model the way a worker does (bench.measure.child._build, the
committed weights), warms up, then times `--calls` batch-1 predict_on_batch
calls per round, several rounds, while the parent sets the other CPU to one
of: idle; `spin` (a pure-Python loop); `matmul` (numpy 256x256 matmuls, cache
and memory traffic); `same` (a second process timing the same calls, what a
synchronised duet partner does). Prints each round's p50 in ms per process
and condition, then the spread across processes per condition and the
spread across conditions per process.

Measured here (jax mlp, 6 processes, 3 rounds each): with the other CPU idle
the processes' p50 spread only ±6.0 % (0.296-0.334 ms), but one process's own
rounds, seconds apart, ±23.4 %; a neighbour (spin, matmul, the same calls)
added 1-22 %. So it is not a lottery per process: the figure moves with time,
the per-vCPU speed states described in bench/measure/latency.py.

Not a test: the numbers depend on the machine and on what else it is doing.

Internals it pins (a change to them must keep this study running): bench.measure.child._build and _import_keras (a worker's model and Keras import).
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
CONDITIONS = ("idle", "spin", "matmul", "same")


def child_main(backend_name: str, model_name: str, cpu: int, calls: int) -> None:
    """A latency process: pinned to `cpu`; times `calls` calls per 'round' line on stdin."""
    os.sched_setaffinity(0, {cpu})
    os.environ["KERAS_BACKEND"] = backend_name
    from bench.measure import backends, latency
    from bench.measure.child import Spec, _build, _import_keras

    spec = Spec(backend=backend_name, keras_backend=backend_name, model=model_name, mode="latency", batch_size=1,
                repeats=1, min_repeat_seconds=0.1, warmup_steps=0, result_path=os.devnull)
    backend = backends.get(backend_name)
    keras = _import_keras(backend, spec, {})
    model, data = _build(keras, spec)
    x1 = data.x_test[:1]

    def call():
        return backend.sync(model.predict_on_batch(x1))

    for _ in range(50):
        call()
    print("ready", flush=True)
    for line in sys.stdin:
        if line.strip() == "quit":
            return
        if line.strip() == "loop":  # the `same` neighbour: time rounds until killed
            while True:
                latency.measure(call, calls, 0)
        lat = latency.measure(call, calls, 0)
        print(json.dumps({"p50": lat.p50_ms, "p99": lat.percentile(99)}), flush=True)


def neighbour(kind: str, cpu: int, args) -> subprocess.Popen | None:
    """Start the other CPU's load for one round (None: idle)."""
    pin = f"import os; os.sched_setaffinity(0, {{{cpu}}})\n"
    if kind == "idle":
        return None
    if kind == "spin":
        code = pin + "x = 0\nwhile True:\n    x += 1\n"
    elif kind == "matmul":
        code = pin + "import numpy as np\na = np.random.rand(256, 256)\nwhile True:\n    a @ a\n"
    else:
        p = spawn(args, cpu)
        p.stdin.write("loop\n")
        p.stdin.flush()
        return p
    return subprocess.Popen([sys.executable, "-c", code], env=dict(os.environ, OMP_NUM_THREADS="1",
                                                                  OPENBLAS_NUM_THREADS="1"))


def spawn(args, cpu: int) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, __file__, "--child", str(cpu), "--backend", args.backend,
                          "--model", args.model, "--calls", str(args.calls)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True, cwd=REPO,
                         env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert p.stdout.readline().strip() == "ready"
    return p


def run(args) -> dict:
    table: dict[int, dict[str, list[float]]] = {}
    for i in range(args.procs):
        cpu, other = i % 2, 1 - i % 2
        p = spawn(args, cpu)
        table[i] = {c: [] for c in CONDITIONS}
        for _ in range(args.rounds):
            for cond in CONDITIONS:
                n = neighbour(cond, other, args)
                time.sleep(0.3 if cond != "same" else 0.0)  # the load is running before the round starts
                p.stdin.write("round\n")
                p.stdin.flush()
                table[i][cond].append(json.loads(p.stdout.readline())["p50"])
                if n is not None:
                    n.kill()
                    n.wait()
        p.stdin.write("quit\n")
        p.stdin.flush()
        p.wait()
        print(f"process {i} (cpu {cpu}): " + ", ".join(
            f"{c} {statistics.median(v):.4f}" for c, v in table[i].items()), file=sys.stderr, flush=True)
    return table


def report(table: dict) -> None:
    print(f"p50 ms per process (median of its rounds); spread = largest distance from the median")
    print(f"{'process':>8} " + " ".join(f"{c:>9}" for c in CONDITIONS) + "  same/idle")
    for i, row in table.items():
        med = {c: statistics.median(v) for c, v in row.items()}
        print(f"{i:>8} " + " ".join(f"{med[c]:9.4f}" for c in CONDITIONS) + f"  {med['same'] / med['idle']:9.3f}")
    for c in CONDITIONS:
        per = [statistics.median(row[c]) for row in table.values()]
        mid = statistics.median(per)
        within = [max(abs(x / statistics.median(row[c]) - 1) for x in row[c]) for row in table.values()]
        print(f"{c:>8}: across processes {min(per):.4f}-{max(per):.4f} ms (spread "
              f"±{max(abs(x / mid - 1) for x in per) * 100:.1f} %), within a process its rounds "
              f"±{statistics.median(within) * 100:.1f} % (median over processes)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", default="jax")
    ap.add_argument("--model", default="mlp")
    ap.add_argument("--procs", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--json", type=Path, help="write the per-round table here")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        child_main(args.backend, args.model, args.child, args.calls)
        return
    table = run(args)
    report(table)
    if args.json:
        args.json.write_text(json.dumps(table, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
