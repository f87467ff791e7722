"""How long `python -m bench report` takes on 1 and 5 years of nightly history.

6 targets x 4 series, one run file per target per night (bench.records.synthetic):
about 2,190 files for a year, 10,950 for five. Goals (issue 3): five years
in <= 3 s here, and <= 6x one year (linear or better).

    .venv/bin/python studies/bench_report_perf.py [--work DIR] [--repeats 3]

The data folders are written once under --work (default: a temp folder) and
reused when already there. Each run is the whole command in a fresh process
(imports, reading, validation, status, rendering). Printed: wall-clock and
CPU time (user + sys of the child), best of --repeats and the median. On a
shared machine the wall time mostly measures the neighbours; the CPU time is
what the report itself costs, so the goals are checked on both.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.records.synthetic import write_history  # noqa: E402

YEARS = (1, 5)


def data_folder(work: Path, years: int) -> Path:
    folder = work / f"history-{years}y"
    done = folder / ".complete"
    if not done.exists():
        n = write_history(folder, 365 * years)
        done.write_text(f"{n}\n")
    return folder


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def time_report(folder: Path, repeats: int) -> tuple[list[float], list[float]]:
    """(wall times, CPU times) of `repeats` runs."""
    walls, cpus = [], []
    for _ in range(repeats):
        c0, t0 = _children_cpu(), time.perf_counter()
        subprocess.run([sys.executable, "-m", "bench", "report", "--data", str(folder)],
                       cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        walls.append(time.perf_counter() - t0)
        cpus.append(_children_cpu() - c0)
    return walls, cpus


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--work", type=Path, help="where the data folders live (kept)")
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-perf-"))
    best = {}
    for years in YEARS:
        folder = data_folder(work, years)
        files = sum(1 for _ in (folder / "runs").rglob("*.json"))
        walls, cpus = time_report(folder, args.repeats)
        best[years] = (min(walls), min(cpus))
        print(f"{years} year(s): {files} files  wall best {min(walls):.2f} s median {statistics.median(walls):.2f} s"
              f"  |  cpu best {min(cpus):.2f} s median {statistics.median(cpus):.2f} s")
    met = True
    for i, what in enumerate(("wall", "cpu")):
        five, ratio = best[5][i], best[5][i] / best[1][i]
        ok = five <= 3.0 and ratio <= 6.0
        met = met and ok
        print(f"{what}: 5y {five:.2f} s, 5y/1y = {ratio:.2f}x  (goals: <= 3.0 s, <= 6x): {'met' if ok else 'NOT met'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
