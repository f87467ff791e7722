"""How long 8 racing `python -m bench publish` processes take to land 40 records.

Eight publishers, five records each, start at the same moment against one
local bare repository (a fresh one per round). Each round checks that all 40
records are on the branch exactly once, and counts the rejected pushes that
were retried. Times are wall-clock from the first start to the last exit,
fresh processes (imports, validation, git); best and median of --rounds (the
machine is shared).

    .venv/bin/python studies/bench_publish_race.py [--rounds 5] [--publishers 8] [--records 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.records.record import write  # noqa: E402
from tests.helpers import T0, make_record, ok  # noqa: E402


def prepare(work: Path, publishers: int, per: int) -> tuple[Path, list[Path]]:
    bare = work / "data.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    folders = []
    for p in range(publishers):
        folder = work / f"publisher-{p}"
        for i in range(per):
            write(make_record([ok("cnn", "train", 100.0 + p + i)], backend=f"b{p}", run_id=f"run{p}-{i}",
                              started_at=T0 + timedelta(days=i)), folder)
        folders.append(folder)
    return bare, folders


def race(bare: Path, folders: list[Path]) -> tuple[float, int]:
    t0 = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-m", "bench", "publish", "--repo", str(bare), str(f)],
                              cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for f in folders]
    errs = [p.communicate()[1] for p in procs]
    elapsed = time.perf_counter() - t0
    if any(p.returncode for p in procs):
        sys.exit("a publisher failed:\n" + "\n".join(errs))
    return elapsed, sum(e.count("push rejected") for e in errs)


def check(bare: Path, expected: int) -> None:
    names = subprocess.run(["git", "--git-dir", str(bare), "log", "--format=", "--name-only", "gh-pages"],
                           capture_output=True, text=True, check=True).stdout.split()
    if len(names) != expected or len(set(names)) != expected:
        sys.exit(f"expected {expected} records each added once, found {len(names)} adds of {len(set(names))} paths")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--publishers", type=int, default=8)
    ap.add_argument("--records", type=int, default=5)
    args = ap.parse_args()
    times, retries = [], []
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="bench-race-") as tmp:
            bare, folders = prepare(Path(tmp), args.publishers, args.records)
            t, r = race(bare, folders)
            check(bare, args.publishers * args.records)
        times.append(t)
        retries.append(r)
        print(f"round: {t:.2f} s, {r} rejected push(es) retried", file=sys.stderr)
    n = args.publishers * args.records
    print(f"{args.publishers} racing publishers x {args.records} records = {n} records, all landed once: "
          f"best {min(times):.2f} s, median {statistics.median(times):.2f} s over {args.rounds} rounds "
          f"(retries per round: {', '.join(map(str, retries))})")


if __name__ == "__main__":
    main()
