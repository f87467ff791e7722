"""Issue 13's goals, measured: latency repeatability, memory repeatability, time cost.

    .venv/bin/python studies/bench_latency.py                      # jax and torch, both models, 5 runs
    .venv/bin/python studies/bench_latency.py --backends mlx --runs 3
    .venv/bin/python studies/bench_latency.py --growth             # + the nightly protocol's time cost

1. `--runs` separate `python -m bench run --modes latency` invocations (fresh
   worker processes each time; the nightly protocol, or --quick's). Per
   (backend, model): every run's p50
   and p99 (ms) and host/device peak memory (bytes), and the spread: the
   largest distance of a run from the runs' median (goals: p50 within +-5 %,
   memory within 2 %; p99 is reported, no goal).
2. `--growth`: one `bench run --modes train,predict` with the same protocol;
   the growth is the latency invocations' mean run time over that run's time
   (goal: at most 25 %). Run time is each record's finished_at - started_at,
   summed over the backends: it includes every worker's start and Keras
   import (what the nightly job really pays) but not a wait for the machine
   lock held by another `bench run`.

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
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def bench_run(backends: str, models: str, modes: str, quick: bool, keep: Path | None) -> tuple[list[dict], float]:
    """One `bench run` invocation: its records' results, each with its backend, and its run seconds."""
    with tempfile.TemporaryDirectory() as tmp:
        out = keep or Path(tmp)
        cmd = [sys.executable, "-m", "bench", "run", "--backend", backends, "--models", models,
               "--modes", modes, "--out", str(out), *(["--quick"] if quick else [])]
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
        results, seconds = [], 0.0
        for path in proc.stdout.split():
            rec = json.loads(Path(path).read_text())
            results += [dict(r, backend=rec["target"]["backend"]) for r in rec["results"]]
            seconds += (_time(rec["run"]["finished_at"]) - _time(rec["run"]["started_at"])).total_seconds()
    bad = [f"{r['backend']}/{r['model']}/{r['mode']}: {r.get('error')}" for r in results if r["status"] != "ok"]
    if bad:
        raise SystemExit("not ok: " + "; ".join(bad))
    return results, seconds


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def spread(values: list[float]) -> float:
    """Largest distance of a value from the median, relative to it."""
    mid = statistics.median(values)
    return max(abs(v / mid - 1) for v in values) if mid else float("nan")


def latency_runs(backends: str, models: str, runs: int, quick: bool, keep: Path | None) -> tuple[dict, list[float]]:
    table: dict[tuple[str, str], dict[str, list]] = {}
    run_seconds = []
    for i in range(runs):
        results, seconds = bench_run(backends, models, "latency", quick, keep)
        run_seconds.append(seconds)
        for r in results:
            row = table.setdefault((r["backend"], r["model"]), {k: [] for k in ("p50", "p99", "host", "device")})
            row["p50"].append(r["latency"]["p50_ms"])
            row["p99"].append(r["latency"]["p99_ms"])
            row["host"].append(r["memory"]["host_peak_bytes"])
            row["device"].append(r["memory"]["device_peak_bytes"])
        print(f"run {i + 1}/{runs} done: {seconds:.0f} s of run time", file=sys.stderr, flush=True)
    return table, run_seconds


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backends", default="jax,torch")
    ap.add_argument("--models", default="mlp,cnn")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--growth", action="store_true", help="also time train+predict with the same protocol")
    ap.add_argument("--quick", action="store_true", help="the quick protocol (default: the nightly one)")
    ap.add_argument("--json", default=None, help="write every figure to this file")
    ap.add_argument("--keep", default=None, help="keep the run records in this folder")
    args = ap.parse_args(argv)

    keep = Path(args.keep) if args.keep else None
    if keep:
        keep.mkdir(parents=True, exist_ok=True)
    table, run_seconds = latency_runs(args.backends, args.models, args.runs, args.quick, keep)
    out = {"runs": args.runs, "quick": args.quick, "latency": {}, "latency_run_seconds": run_seconds}
    print(f"{'BACKEND':8} {'MODEL':5} {'P50 MS (runs)':40} {'P50 ±':>7} {'P99 ±':>7} {'HOST MEM ±':>10} {'DEVICE ±':>9}")
    for (backend, model), row in sorted(table.items()):
        dev = [d for d in row["device"] if d is not None]
        figures = {"p50_ms": row["p50"], "p99_ms": row["p99"], "host_peak_bytes": row["host"],
                   "device_peak_bytes": row["device"],
                   "p50_spread": spread(row["p50"]), "p99_spread": spread(row["p99"]),
                   "host_spread": spread(row["host"]), "device_spread": spread(dev) if dev else None}
        out["latency"][f"{backend}/{model}"] = figures
        p50s = " ".join(f"{v:.3g}" for v in row["p50"])
        device = f"{100 * figures['device_spread']:.2f}%" if dev else "—"
        print(f"{backend:8} {model:5} {p50s:40} {100 * figures['p50_spread']:6.1f}% "
              f"{100 * figures['p99_spread']:6.1f}% {100 * figures['host_spread']:9.2f}% {device:>9}")

    if args.growth:
        _, rest_seconds = bench_run(args.backends, args.models, "train,predict", args.quick, keep)
        lat_seconds = statistics.mean(run_seconds)
        out["growth"] = {"latency_run_seconds": lat_seconds, "train_predict_run_seconds": rest_seconds,
                         "fraction": lat_seconds / rest_seconds}
        print(f"\n{'quick' if args.quick else 'nightly'} protocol: train+predict {rest_seconds:.0f} s; "
              f"latency adds {lat_seconds:.0f} s = +{100 * lat_seconds / rest_seconds:.1f}% (goal <= 25 %)")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
