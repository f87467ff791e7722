#!/usr/bin/env python3
"""What the one profiled call per benchmark costs a nightly, and what it adds to a record (issue 56)

    .venv/bin/python studies/bench_profile_cost.py --out DIR                 # 1 pair, the nightly's protocol
    .venv/bin/python studies/bench_profile_cost.py --out DIR --pairs 2 -- --backend jax --models mlp
    .venv/bin/python studies/bench_profile_cost.py --read DIR                # the figures of a finished DIR

Runs the same `bench run` (default: jax and torch, mlp and cnn, train and
predict, harness.workers workers: the nightly's protocol on local-cpu) with
profiling off (`--no-profile`) and on, back to back, the order swapped each
pair (off, on; on, off; ...). Each run's cost is its records' own time inside
the machine lock (run.finished_at - run.started_at, summed over backends), so
waiting for the lock behind another job counts in neither. Prints per pair:

- the wall ratio on/off (the goal: <= 1.05). It also holds the host's drift
  between the two runs, minutes apart, which can be larger than the cost;
- the profiled calls' own share of the "on" run: the sum of every result's
  profile.seconds over that run's time, the cost without the drift (the
  profiled call runs in a worker between benchmarks, so nothing else overlaps
  it);
- the bytes profiles add to each record as written (the goal: <= 8 KB), the
  record's text against the same record with every result's profile taken out.

Not a test: timings on a host that drifts (note `uptime`).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

DEFAULT_RUN = ["--backend", "jax,torch", "--models", "mlp,cnn", "--modes", "train,predict"]


def run_once(out: Path, args: list[str], profile: bool) -> float:
    cmd = [sys.executable, "-m", "bench", "run", *args, "--out", str(out)] + ([] if profile else ["--no-profile"])
    print(f"$ {' '.join(cmd)}", file=sys.stderr, flush=True)
    t0 = time.monotonic()
    subprocess.run(cmd, check=True)
    return time.monotonic() - t0


def records(folder: Path) -> list[tuple[Path, dict]]:
    return [(p, json.loads(p.read_text())) for p in sorted(folder.glob("*.json"))]


def busy_seconds(recs) -> float:
    """Seconds the runs' backends spent inside the machine lock (started_at .. finished_at)."""
    def t(text: str) -> datetime:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    return sum((t(d["run"]["finished_at"]) - t(d["run"]["started_at"])).total_seconds() for _, d in recs)


def profile_bytes(path: Path, data: dict) -> int:
    """What the record's profiles add to its file as written (record.dumps's form)."""
    from bench.records.record import dumps

    bare = json.loads(json.dumps(data))
    for r in bare["results"]:
        r.pop("profile", None)
    return len(path.read_bytes()) - len(dumps(bare).encode())


def report(folder: Path) -> None:
    pairs = sorted({p.name.split("-")[0] for p in folder.iterdir() if p.is_dir()})
    for pair in pairs:
        off, on = records(folder / f"{pair}-off"), records(folder / f"{pair}-on")
        if not (off and on):
            print(f"pair {pair}: incomplete")
            continue
        t_off, t_on = busy_seconds(off), busy_seconds(on)
        spent = sum(r["profile"].get("seconds", 0.0) for _, d in on for r in d["results"] if "profile" in r)
        kinds = sorted({("summary" if "ops" in r["profile"] else next(iter(r["profile"])))
                        for _, d in on for r in d["results"] if "profile" in r})
        print(f"pair {pair}: off {t_off:.0f} s, on {t_on:.0f} s, ratio on/off {t_on / t_off:.3f}; "
              f"profiled calls {spent:.1f} s = {spent / t_on:.1%} of the on run; profiles: {', '.join(kinds)}")
        for path, data in on:
            profiled = sum("profile" in r for r in data["results"])
            print(f"  {path.name}: {profiled} profiles, {profile_bytes(path, data)} bytes of {path.stat().st_size}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="folder for the pairs' records (DIR/<pair>-on, DIR/<pair>-off)")
    ap.add_argument("--pairs", type=int, default=1)
    ap.add_argument("--read", help="print the figures of a finished --out folder")
    ap.add_argument("run_args", nargs="*", help=f"after --: bench run's arguments (default: {' '.join(DEFAULT_RUN)})")
    args = ap.parse_args(argv)
    if args.read:
        report(Path(args.read))
        return 0
    if not args.out:
        ap.error("--out DIR or --read DIR")
    out = Path(args.out)
    run_args = args.run_args or DEFAULT_RUN
    for i in range(args.pairs):
        order = (False, True) if i % 2 == 0 else (True, False)
        for profile in order:
            wall = run_once(out / f"{i:02d}-{'on' if profile else 'off'}", run_args, profile)
            print(f"pair {i:02d} {'on' if profile else 'off'}: {wall:.0f} s wall (lock waits included)",
                  file=sys.stderr, flush=True)
    report(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
