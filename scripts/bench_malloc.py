#!/usr/bin/env python3
"""Would a fixed malloc mmap threshold make peak memory repeat, and at what cost? (issue 13)

    .venv/bin/python scripts/bench_malloc.py [--threshold 131072] [--backend torch]
                                             [--modes train predict] [--keep DIR]

A worker's peak RSS moves with freed memory that glibc keeps mapped (it raises
its mmap threshold as big blocks are freed, after which they come from the
heap and stay). One same-machine A/B (`bench run --ab`, duets on this CPU):
A is this python as users run it, B the same python with
MALLOC_MMAP_THRESHOLD_ set, which fixes the threshold. Prints, per benchmark,
each side's worker peaks (MiB, least..most) and bench compare's verdict and
delta for B's samples/s against A's. About 5 minutes for torch here.

Measured 2026-12-04: at 131072 (128 KiB, glibc's starting value) every torch
cnn/predict worker peaked at 697-698 MiB (711-1002 without it) but B ran 45-65 %
slower; at 33554432 (32 MiB) torch cnn/train was 30 % slower and the peaks still
spread 720-880 MiB. So the workers keep the allocator users run with, and a
result's peak is its least worker's (bench/measure/pool.py memory_workers).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from bench_ab_sensitivity import compare_rows, sides  # noqa: E402


def wrapper(folder: Path, threshold: int) -> Path:
    """An executable that runs this python with the threshold fixed."""
    path = folder / "python"
    path.write_text(f'#!/bin/sh\nMALLOC_MMAP_THRESHOLD_={threshold} exec "{sys.executable}" "$@"\n')
    path.chmod(0o755)
    return path


def peaks(record: Path) -> dict[tuple[str, str], list[int]]:
    """(model, mode) -> every ok worker's host peak, in MiB."""
    return {(r["model"], r["mode"]): [w["host_peak_bytes"] >> 20 for w in r.get("workers", ())
                                      if w.get("status") == "ok" and isinstance(w.get("host_peak_bytes"), int)]
            for r in json.loads(record.read_text())["results"]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threshold", type=int, default=131072, help="MALLOC_MMAP_THRESHOLD_ for side B, bytes")
    p.add_argument("--backend", default="torch")
    p.add_argument("--modes", nargs="+", default=["train", "predict"])
    p.add_argument("--keep", type=Path, help="write the two records here (default: a temporary folder)")
    a = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-malloc-") as tmp:
        out = a.keep or Path(tmp) / "records"
        b_python = wrapper(Path(tmp), a.threshold)
        cmd = [sys.executable, "-m", "bench", "run", "--ab", sys.executable, str(b_python), "--backend", a.backend,
               "--modes", *a.modes, "--out", str(out)]
        print("running:", " ".join(cmd), flush=True)
        run = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        found = sides(out) if out.is_dir() else {}
        if run.returncode != 0 or set(found) != {"a", "b"}:
            print(f"bench run --ab failed ({run.returncode}): {run.stderr.strip()[-400:]}", file=sys.stderr)
            return 1
        pa, pb, v = peaks(found["a"]), peaks(found["b"]), compare_rows(found["a"], found["b"])
    print(f"B: MALLOC_MMAP_THRESHOLD_={a.threshold}")
    print(f"{'benchmark':16s} {'A peaks MiB':>14s} {'B peaks MiB':>14s}  B samples/s against A")
    for key in sorted(pa):
        row = v.get(key, {})
        delta = f"{row['delta'] * 100:+.1f}% {row['verdict']}" if row.get("delta") is not None else "-"
        print(f"{key[0] + '/' + key[1]:16s} {_range(pa[key]):>14s} {_range(pb.get(key, [])):>14s}  {delta}")
    return 0


def _range(values: list[int]) -> str:
    return f"{min(values)}..{max(values)}" if values else "-"


if __name__ == "__main__":
    sys.exit(main())
