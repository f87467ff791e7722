"""How long `python -m bench import-gab` takes on the largest real history.

Imports the biggest file of tests/fixtures/realhist/ (or --file) into a fresh
folder with a fresh process (imports, parsing, validation, writing every
record), then reads it back with `bench report --format json`. Wall-clock,
best and median of --repeats (the machine is shared).

    .venv/bin/python studies/bench_import.py [--file DATA_JS] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REALHIST = ROOT / "tests" / "fixtures" / "realhist"


def timed(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--file", type=Path, help="a data.js (default: the largest in tests/fixtures/realhist)")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    source = args.file or max(REALHIST.glob("*.js"), key=lambda f: f.stat().st_size)
    imports, reports, files = [], [], 0
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
            out = Path(tmp) / "data"
            imports.append(timed([sys.executable, "-m", "bench", "import-gab", str(source), "--out", str(out)]))
            reports.append(timed([sys.executable, "-m", "bench", "report", "--data", str(out), "--format", "json"]))
            files = sum(1 for _ in out.rglob("*.json"))
    mb = source.stat().st_size / 1e6
    print(f"import-gab {source.name} ({mb:.1f} MB -> {files} records): best {min(imports):.2f} s, "
          f"median {statistics.median(imports):.2f} s; then report --format json: best {min(reports):.2f} s, "
          f"median {statistics.median(reports):.2f} s ({args.repeats} repeats)")


if __name__ == "__main__":
    main()
