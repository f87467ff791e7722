#!/usr/bin/env python3
"""Does the ratio to a reference build hold still across invocations where the
samples/s do not? (issue 10; docs/measurements.md, "The reference build")

    # 5 separate `bench run --reference REF_PYTHON` invocations, jax and torch,
    # harness.ab_workers pairs (or --workers); the records are kept in --out
    .venv/bin/python studies/bench_reference.py run --runs 5 --out .local/reference [--reference REF_PYTHON] [--workers N] [--modes M]
    # the same report from kept records: one folder per invocation, each with
    # both sides' records (also takes `bench run --ab A B` folders: the ratio
    # is then computed from the two records, pair by pair, as --reference does),
    # or one folder of several invocations' records, told apart by run id
    # (studies/bench_turns.sh ... --reference REF_PYTHON writes OUT/a and OUT/b so)
    .venv/bin/python studies/bench_reference.py report .local/reference

REF_PYTHON defaults to this venv's python: both sides are then the same build,
so every ratio should read 1.00 and its spread is the noise the ratio series
has to beat. For each (backend, model, mode) it prints, over the invocations,
the spread of this build's headline and of its ratio (the largest distance of
an invocation from their median, as studies/bench_stability.py; goal ±2 %,
must-have ±3 %, issue 53) and each invocation's values. Then, per mode, how far single
pairs sit from 1.00 when the two sides' timed windows overlapped by at least
half and when they did not (a pair whose windows barely overlap compares two
moments of the host; workers v13's barrier lines each repeat up, v12's did not). Not a test: the
numbers depend on the machine and on what else it is doing.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.records.workers import first_round, worker_values  # noqa: E402
from bench.records.extensions import ab_side  # noqa: E402
from bench.measure import estimate, reference  # noqa: E402


def run(args) -> int:
    out = Path(args.out)
    for i in range(args.runs):
        folder = out / f"{i:02d}"
        if any(folder.glob("*.json")):
            print(f"run {i}: kept records in {folder}, not run again", file=sys.stderr)
            continue
        folder.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "bench", "run", "--reference", args.reference or sys.executable,
               "--backend", args.backends, "--out", str(folder)] + (
                   ["--workers", str(args.workers)] if args.workers else []) + (
                   ["--modes", args.modes] if args.modes else []) + (
                   ["--models", args.models] if args.models else [])
        started = time.monotonic()
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        (folder / "run.log").write_text(done.stderr, encoding="utf-8")
        print(f"run {i}: rc {done.returncode}, {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
        if done.returncode != 0:
            print(f"run {i}: bench run failed: {done.stderr.strip()[-400:]}", file=sys.stderr)
            return 1
    return report(argparse.Namespace(folder=out))


def _partners(sides):
    """(backend, the reference's result, this build's result) for every
    (model, mode) that both sides of one invocation's _sides measured ok."""
    for backend, a, b in sides:
        ref = {(r["model"], r["mode"]): r for r in a["results"] if r.get("status") == "ok"}
        for r in b["results"]:
            partner = ref.get((r["model"], r["mode"]))
            if r.get("status") == "ok" and partner is not None:
                yield backend, partner, r


def alternatives(sides) -> dict[str, dict[tuple[str, str, str], float]]:
    """{estimator: {(backend, model, mode): ratio}} for one invocation's _sides."""
    out: dict[str, dict] = {name: {} for name in ESTIMATORS}
    for backend, partner, r in _partners(sides):
        for name, fn in ESTIMATORS.items():
            found = fn(partner, r)
            if found is not None:
                out[name][(backend, r["model"], r["mode"])] = found[0]
    return out


def _sides(folder: Path):
    """(backend, reference record, build record) of each paired backend run."""
    return _sides_of(json.loads(path.read_text(encoding="utf-8")) for path in sorted(folder.glob("*.json")))


def _sides_of(records):
    sides: dict[tuple[str, str], dict] = {}
    for data in records:
        side = ab_side(data)
        if side is not None:
            sides[(data["target"]["backend"], side[1])] = data
    return [(backend, sides[(backend, "a")], data) for (backend, side), data in sides.items()
            if side == "b" and (backend, "a") in sides]


def invocations(top: Path) -> list[tuple[str, list]]:
    """(name, _sides) of each invocation under `top`: its sub-folders, one per
    invocation (`run`'s layout), or, when it has none, its own records grouped
    by their A/B run id (studies/bench_turns.sh writes one side's invocations
    into one folder)."""
    folders = sorted(p for p in top.iterdir() if p.is_dir() and any(p.glob("*.json")))
    if folders:
        return [(f.name, _sides(f)) for f in folders]
    by_run: dict[str, list] = {}
    for path in sorted(top.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        side = ab_side(data)
        if side is not None:
            by_run.setdefault(side[0], []).append(data)
    return [(run_id, _sides_of(records)) for run_id, records in sorted(by_run.items())]


def ratios(sides) -> dict[tuple[str, str, str], tuple[float, float]]:
    """{(backend, model, mode): (this build's headline, its ratio to the
    reference)} from one invocation's _sides (side a the reference)."""
    out = {}
    for backend, a, b in sides:
        duet = b["run"]["ab"].get("mode", "duet") == "duet"
        results = reference.attach(a["results"], b["results"], duet)
        for r in results:
            if "reference" in r:  # recomputed pair by pair: the same as the record's own block
                out[(backend, r["model"], r["mode"])] = (r["value"], r["reference"]["ratio"])
    return out


def _window(worker: dict):
    """The worker's timed repeats (unix s), else its whole benchmark (latency has no timed_window)."""
    return worker.get("timed_window") or worker.get("window")


def _overlap(a, b) -> float:
    """The share of two windows' union they have in common (0..1)."""
    union = max(a[1], b[1]) - min(a[0], b[0])
    return max(0.0, min(a[1], b[1]) - max(a[0], b[0])) / union if union > 0 else 0.0


def _pairs(a: dict, b: dict):
    """(overlap, b/a) of every first-round pair of two results that has both
    values and both windows, paired as the duet's ratio pairs them
    (extras.first_round, worker_values with the disturbed ones)."""
    for wa, wb, va, vb in zip(first_round(a), first_round(b),
                              worker_values(a, disturbed_too=True), worker_values(b, disturbed_too=True)):
        if va is not None and vb is not None and _window(wa) and _window(wb):
            yield _overlap(_window(wa), _window(wb)), vb / va


def overlapping_ratio(a: dict, b: dict) -> tuple[float, int] | None:
    """(median of b/a over the pairs whose windows overlapped by at least half,
    how many), every pair where none did; None without pairs."""
    pairs = list(_pairs(a, b))
    if not pairs:
        return None
    kept = [r for o, r in pairs if o >= 0.5] or [r for _, r in pairs]
    return statistics.median(kept), len(kept)


# Other ways to get one ratio from the two sides' workers, printed beside the
# chosen one (reference.ratio: the median over every first-round pair).
ESTIMATORS = {
    "median of clean pairs": lambda a, b: reference.ratio(a, b, duet=False),
    "ratio of the headlines": lambda a, b: (b["value"] / a["value"], 0),
    "median of pairs overlapping by half": overlapping_ratio,
}


def pair_overlaps(sides) -> list[tuple[str, float, float]]:
    """(mode, overlap, |log ratio|) of every pair (`_pairs`) of one invocation's _sides."""
    return [(r["mode"], overlap, abs(math.log(ratio)))
            for _backend, partner, r in _partners(sides) for overlap, ratio in _pairs(partner, r)]


def overlap_report(sides_per_run) -> None:
    rows = [row for sides in sides_per_run for row in pair_overlaps(sides)]
    print("single pairs by how much the two sides' timed windows overlapped:")
    for mode in sorted({m for m, _, _ in rows}):
        for label, keep in (("overlap >= 1/2", lambda o: o >= 0.5), ("overlap < 1/2", lambda o: o < 0.5)):
            logs = [d for m, o, d in rows if m == mode and keep(o)]
            if logs:
                beyond = sum(d > math.log(1.1) for d in logs) / len(logs)
                print(f"  {mode:8} {label:15} {len(logs):4d} pairs: median |log ratio| "
                      f"{statistics.median(logs):.3f}, {100 * beyond:.0f} % beyond 10 %")


def report(args) -> int:
    folders = invocations(Path(args.folder))
    sides = [found for _, found in folders]  # each invocation's records read once
    runs = [ratios(s) for s in sides]
    keys = sorted({k for r in runs for k in r})
    if not keys:
        print(f"no paired records under {args.folder}", file=sys.stderr)
        return 1
    print(f"{len(folders)} invocations under {args.folder}")
    print(f"{'backend/model/mode':28} {'headline spread':>16} {'ratio spread':>13}  ratios")
    worst = {"headline": 0.0, "ratio": 0.0}
    for key in keys:
        pairs = [r[key] for r in runs if key in r]
        heads, rats = [p[0] for p in pairs], [p[1] for p in pairs]
        hs, rs = estimate.spread(heads), estimate.spread(rats)
        worst = {"headline": max(worst["headline"], hs), "ratio": max(worst["ratio"], rs)}
        print(f"{'/'.join(key):28} {100 * hs:>15.1f}% {100 * rs:>12.1f}%  "
              + " ".join(f"{v:.3f}" for v in rats) + f"  ({len(pairs)} runs)")
    print(f"worst: headline ±{100 * worst['headline']:.1f} %, ratio ±{100 * worst['ratio']:.1f} % "
          f"(goal ±2 %, must-have ±3 %: issue 53)")
    others = [alternatives(s) for s in sides]
    for name in ESTIMATORS:
        spreads = {}
        for key in keys:
            values = [o[name][key] for o in others if key in o[name]]
            if values:
                spreads[key] = estimate.spread(values)
        if spreads:
            key = max(spreads, key=spreads.get)
            print(f"  {name} instead: worst ±{100 * spreads[key]:.1f} % ({'/'.join(key)})")
    overlap_report(sides)
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="verb", required=True)
    r = sub.add_parser("run", help="N invocations of bench run --reference, then the report")
    r.add_argument("--runs", type=int, default=5)
    r.add_argument("--out", default=".local/reference")
    r.add_argument("--backends", default="jax,torch")
    r.add_argument("--reference", help="the reference venv's python (default: this one: identical builds)")
    r.add_argument("--workers", type=int, help="pairs per benchmark (default: harness.ab_workers)")
    r.add_argument("--modes", help="only these modes, e.g. latency (default: benchmarks.yaml's modes)")
    r.add_argument("--models", help="only these models, e.g. mlp (default: benchmarks.yaml's models)")
    s = sub.add_parser("report", help="the report from kept invocation folders")
    s.add_argument("folder")
    args = p.parse_args()
    return run(args) if args.verb == "run" else report(args)


if __name__ == "__main__":
    sys.exit(main())
