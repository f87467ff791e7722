"""Issue 13's goals, measured: latency repeatability, memory repeatability, time cost.

    .venv/bin/python scripts/bench_latency.py                      # jax and torch, both models, 5 runs
    .venv/bin/python scripts/bench_latency.py --backends mlx --runs 3
    .venv/bin/python scripts/bench_latency.py --growth             # + the nightly protocol's time cost

1. `--runs` separate `python -m bench run --modes latency` invocations (each
   benchmark in its own fresh process). Per (backend, model): every run's p50
   and p99 (ms) and host/device peak memory (bytes), and the spread: the
   largest distance of a run from the runs' median (goals: p50 within +-5 %,
   memory within 2 %; p99 is reported, no goal).
2. `--growth`: one `bench run --modes train,predict` with the nightly protocol
   (not --quick); the growth is the latency mode's child time (mean over the
   runs of step 1) over the train+predict child time (goal: at most 25 %).

Not a test: the numbers depend on the machine and on what else it is doing.
Prints a table and, with --json FILE, writes every figure.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def bench_run(backends: str, models: str, modes: str, quick: bool) -> list[dict]:
    """One `bench run` invocation; its records' results, each with its backend."""
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-m", "bench", "run", "--backend", backends, "--models", models,
               "--modes", modes, "--out", out, *(["--quick"] if quick else [])]
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
        results = []
        for path in proc.stdout.split():
            rec = json.loads(Path(path).read_text())
            results += [dict(r, backend=rec["target"]["backend"]) for r in rec["results"]]
    bad = [f"{r['backend']}/{r['model']}/{r['mode']}: {r.get('error')}" for r in results if r["status"] != "ok"]
    if bad:
        raise SystemExit("not ok: " + "; ".join(bad))
    return results


def spread(values: list[float]) -> float:
    """Largest distance of a value from the median, relative to it."""
    mid = statistics.median(values)
    return max(abs(v / mid - 1) for v in values) if mid else float("nan")


def latency_runs(backends: str, models: str, runs: int) -> dict:
    table: dict[tuple[str, str], dict[str, list]] = {}
    for i in range(runs):
        for r in bench_run(backends, models, "latency", quick=True):
            row = table.setdefault((r["backend"], r["model"]), {k: [] for k in
                                                                ("p50", "p99", "host", "device", "seconds")})
            row["p50"].append(r["latency"]["p50_ms"])
            row["p99"].append(r["latency"]["p99_ms"])
            row["host"].append(r["memory"]["host_peak_bytes"])
            row["device"].append(r["memory"]["device_peak_bytes"])
            row["seconds"].append(r["child_seconds"])
        print(f"run {i + 1}/{runs} done", file=sys.stderr, flush=True)
    return table


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backends", default="jax,torch")
    ap.add_argument("--models", default="mlp,cnn")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--growth", action="store_true", help="also time train+predict with the nightly protocol")
    ap.add_argument("--json", default=None, help="write every figure to this file")
    args = ap.parse_args(argv)

    table = latency_runs(args.backends, args.models, args.runs)
    out = {"runs": args.runs, "latency": {}}
    print(f"{'BACKEND':8} {'MODEL':5} {'P50 MS (runs)':40} {'P50 ±':>7} {'P99 ±':>7} {'HOST MEM ±':>10} {'DEVICE ±':>9}")
    for (backend, model), row in sorted(table.items()):
        dev = [d for d in row["device"] if d is not None]
        figures = {"p50_ms": row["p50"], "p99_ms": row["p99"], "host_peak_bytes": row["host"],
                   "device_peak_bytes": row["device"], "child_seconds": row["seconds"],
                   "p50_spread": spread(row["p50"]), "p99_spread": spread(row["p99"]),
                   "host_spread": spread(row["host"]), "device_spread": spread(dev) if dev else None}
        out["latency"][f"{backend}/{model}"] = figures
        p50s = " ".join(f"{v:.3g}" for v in row["p50"])
        device = f"{100 * figures['device_spread']:.2f}%" if dev else "—"
        print(f"{backend:8} {model:5} {p50s:40} {100 * figures['p50_spread']:6.1f}% "
              f"{100 * figures['p99_spread']:6.1f}% {100 * figures['host_spread']:9.2f}% {device:>9}")

    if args.growth:
        rest = bench_run(args.backends, args.models, "train,predict", quick=False)
        rest_seconds = sum(r["child_seconds"] for r in rest)
        lat_seconds = sum(statistics.mean(row["seconds"]) for row in table.values())
        out["growth"] = {"latency_child_seconds": lat_seconds, "train_predict_child_seconds": rest_seconds,
                         "fraction": lat_seconds / rest_seconds}
        print(f"\nnightly protocol: train+predict {rest_seconds:.0f} s of child time; latency adds "
              f"{lat_seconds:.0f} s = +{100 * lat_seconds / rest_seconds:.1f}% (goal <= 25 %)")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
