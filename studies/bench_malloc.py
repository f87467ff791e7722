#!/usr/bin/env python3
"""Fixed glibc malloc thresholds in every worker against glibc's own: speed, its spread, memory (issues 10, 13)

    .venv/bin/python studies/bench_malloc.py [--runs 3] [--backends torch,jax] [--keep DIR]
    .venv/bin/python studies/bench_malloc.py --from DIR [DIR ...]

Runs the nightly protocol in turns: `bench run` with a copy of benchmarks.yaml
whose harness has no malloc_* keys (glibc's own thresholds, which it raises as a
process frees big blocks, and its own tcache), then with benchmarks.yaml as
committed (harness malloc_mmap_threshold / malloc_trim_threshold, protocol
workers v4; malloc_tcache_count, workers v8), --runs times. A record's side is read from `environment.settings`
(MALLOC_MMAP_THRESHOLD_ there or not), so --from takes records made any way.
Prints per benchmark and side: the headlines across runs and their spread, the
workers' range inside each run (max/min - 1; the per-process lottery), the least
peak memory across runs, and the fixed side's mean headline against glibc's.
About 7 minutes a run of jax and torch here.

Measured with the earlier form of this script (an A/B duet, side B with only
MALLOC_MMAP_THRESHOLD_ set, 2026-12-04): at 131072 (128 KiB) torch ran 45-65 %
slower, every big buffer mapped afresh; at 32 MiB cnn/train 30 % slower and the
peaks still spread 720-880 MiB. Setting one threshold freezes the other at
glibc's start value (a 128 KiB trim threshold, which hands freed heap back), so
both are set now.

Measured with this form (2026-12-05, `--runs 2` as two hand-run pairs of
`bench run --backend torch,jax`, 00:10-00:37 UTC): torch cnn/predict's workers
within a run +112-125 % apart under glibc's own thresholds, +9-16 % fixed; every
throughput headline 1.4-5.0 % faster fixed; latency within 0.7 %; the least peak
memory within 3 % (23 MiB) of glibc's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "studies"))

from bench_stability import apart, config_variant, fmt, least_peak, ok_workers, one_run  # noqa: E402
from bench.measure.estimate import spread  # noqa: E402
from bench.config import MALLOC_VARS, TUNABLES_VAR  # noqa: E402  (bench_stability put the repository on sys.path)

SIDES = ("glibc", "fixed")


def glibc_config(folder: Path) -> Path:
    """benchmarks.yaml without the harness's malloc_* lines: glibc's own thresholds (and,
    since workers v8, its own tcache)."""
    path = None
    for n, key in enumerate(("malloc_mmap_threshold", "malloc_trim_threshold", "malloc_tcache_count")):
        path = config_variant(folder, f"glibc-{n}.yaml", rf"^  {key}: \d+[^\n]*\n", "", f"`  {key}:` line (harness)", path)
    return path


def side_of(record: dict) -> str:
    settings = record.get("environment", {}).get("settings", {})
    return "fixed" if MALLOC_VARS["malloc_mmap_threshold"] in settings else "glibc"


def collect(records: list[dict]) -> dict:
    """{(backend, model, mode): {side: [result, ...]}} in run order."""
    out: dict = {}
    for rec in sorted(records, key=lambda d: d["run"]["started_at"]):
        for r in rec["results"]:
            if r.get("status") == "ok":
                key = (rec["target"]["backend"], r["model"], r["mode"])
                out.setdefault(key, {s: [] for s in SIDES})[side_of(rec)].append(r)
    return out


def side_line(results: list[dict]) -> str:
    if not results:
        return "-"
    heads = [r["value"] for r in results]
    inside = [a for a in (apart([w["value"] for w in ok_workers(r)]) for r in results) if a is not None]
    peaks = [p for p in (least_peak(r) for r in results) if p]
    text = (f"{', '.join(fmt(v) for v in heads)} (±{100 * spread(heads):.1f}%); workers within a run "
            f"+{100 * statistics.median(inside):.0f}% (worst +{100 * max(inside):.0f}%)")
    if len(peaks) == len(results):
        text += f"; least peak {min(peaks) >> 20}-{max(peaks) >> 20} MiB (±{100 * spread(peaks):.1f}%)"
    return text


def report(records: list[dict]) -> None:
    for (backend, model, mode), sides in collect(records).items():
        print(f"{backend} {model}/{mode}")
        for side in SIDES:
            print(f"  {side:5s}: {side_line(sides[side])}")
        if sides["glibc"] and sides["fixed"]:
            g = statistics.mean(r["value"] for r in sides["glibc"])
            f = statistics.mean(r["value"] for r in sides["fixed"])
            print(f"  fixed against glibc: {100 * (f / g - 1):+.1f}% ({'ms' if mode == 'latency' else 'samples/s'})")


def load(folders: list[Path]) -> list[dict]:
    return [json.loads(p.read_text()) for folder in folders for p in sorted(folder.glob("*.json"))]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=3, help="runs of each side, in turns")
    p.add_argument("--backends", default="torch,jax")
    p.add_argument("--keep", type=Path, help="copy every record here (then --from it)")
    p.add_argument("--from", dest="source", type=Path, nargs="+", help="report on kept records instead of running")
    a = p.parse_args(argv)
    if a.source:
        report(load(a.source))
        return 0
    for var in (*MALLOC_VARS.values(), TUNABLES_VAR):
        os.environ.pop(var, None)  # the glibc side must run with glibc's own
    folder = Path(tempfile.mkdtemp(prefix="bench-malloc-"))
    keep = a.keep or folder / "records"
    glibc = glibc_config(folder)
    for i in range(a.runs):
        for side, extra in (("glibc", ["--config", str(glibc)]), ("fixed", [])):
            for backend in a.backends.split(","):
                _, wall = one_run(backend, extra, keep)
                print(f"run {i + 1} {side} {backend}: {wall:.0f} s", flush=True)
    report(load([keep]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
