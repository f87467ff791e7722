#!/usr/bin/env python3
"""Derive tests/corpus/ref_noise.json: this harness's reference ratio (the
`<mode>.vs-ref` series, the one that alerts on a device with a reference
build) as it moved across separate invocations on this VM, for the "ref"
noise kind of the status evaluation (tests/corpus/streams.py,
studies/status_eval.py).

    .venv/bin/python studies/derive_ref_noise.py DIR [DIR ...] [--out tests/corpus/ref_noise.json]

Each DIR is a studies/bench_native.py --keep folder run with --reference.
Its clean invocations (run-NN/, in the order measured; injected and control
invocations are left out) give, per (backend, model, mode) with at least
MIN_RUNS of them, one set: the vs-ref ratio of each invocation (the
nightly's samples/s over the reference build's, bigger is better). A set
keeps its order, so the host's slide over minutes stays in it. The output
names each folder and its hours, not a path; it is deterministic.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "studies"))

from bench_native import read  # noqa: E402  (one reading of kept invocations)

MIN_RUNS = 4
ABOUT = ("This harness's reference ratio (<mode>.vs-ref: the nightly's samples/s over a frozen keras-nightly's, "
         "the same backend and numpy, timed in the same workers) across separate `bench run --reference` "
         "invocations on this repository's 2-core VM, from kept studies/bench_native.py folders "
         "(studies/derive_ref_noise.py). tests/corpus/streams.py takes each set's log residuals around its mean "
         "and resamples them in blocks of consecutive invocations.")


def hours(folders: list[Path]) -> str:
    """The UTC span of the records' runs, e.g. '2026-12-07 22:01-23:59 UTC'."""
    times = []
    for f in folders:
        for path in f.rglob("*.json"):
            run = json.loads(path.read_text()).get("run") or {}
            times += [datetime.fromisoformat(run[k].replace("Z", "+00:00")).astimezone(timezone.utc)
                      for k in ("started_at", "finished_at") if run.get(k)]
    if not times:
        return "hours not recorded"
    lo, hi = min(times), max(times)
    return f"{lo:%Y-%m-%d %H:%M}-{hi:%H:%M} UTC" if lo.date() == hi.date() else f"{lo:%Y-%m-%d %H:%M} to {hi:%Y-%m-%d %H:%M} UTC"


def sets(folder: Path) -> list[dict]:
    runs = sorted(p for p in folder.glob("run-*") if p.is_dir() and any(p.glob("*.json")))
    try:
        figures = [read(p) for p in runs]
        span = hours(runs)
    except (ValueError, KeyError, TypeError, AttributeError) as e:  # a record not as bench run writes it
        sys.exit(f"derive_ref_noise: {folder}: a record under run-NN/ is not a bench run record "
                 f"({type(e).__name__}: {e}); expected the records of studies/bench_native.py --keep")
    out = []
    for key in sorted({k for f in figures for k in f}):
        values = [f[key]["ref"] for f in figures if key in f and f[key]["ref"]]
        if len(values) < MIN_RUNS:
            continue
        backend, model, mode = key
        out.append({"source": f"{folder.name}/run-NN, {len(values)} clean invocations, {span}",
                    "what": f"{backend} {model}/{mode}.vs-ref", "unit": "ratio", "better": "bigger",
                    "values": [round(v, 5) for v in values]})
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folders", nargs="+", type=Path)
    p.add_argument("--out", type=Path, default=ROOT / "tests" / "corpus" / "ref_noise.json")
    a = p.parse_args()
    found = []
    for folder in a.folders:
        got = sets(folder)
        if not got:
            sys.exit(f"derive_ref_noise: {folder} holds no series with a vs-ref ratio in at least {MIN_RUNS} "
                     f"clean invocations (run-NN/); expected a studies/bench_native.py --reference --keep folder")
        found += got
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps({"about": ABOUT, "format": 1, "sets": found}, sort_keys=True, indent=1) + "\n")
    print(f"{a.out}: {len(found)} sets, {sum(len(s['values']) for s in found)} invocations")
    return 0


if __name__ == "__main__":
    sys.exit(main())
