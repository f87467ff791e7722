"""Cut tests/fixtures/realhist/ from real github-action-benchmark histories.

    .venv/bin/python studies/make_realhist_fixture.py SOURCE_DIR [--out tests/fixtures/realhist]

SOURCE_DIR holds the projects' gh-pages `dev/bench/data.js` files, named
<owner>__<repo>__<path>_data.js. For each file in PICKS: a slice of each
suite's entries and only the named benches, in their original order and
values. Nothing else is changed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

# file -> (entries kept per suite: a slice, bench names kept or None for the
# first 3 of each entry): chosen to keep the real oddities the import must
# handle (values that are not positive numbers, a MiB/s <-> GiB/s unit change).
PICKS = {
    "EnzymeAD__Reactant.jl__benchmarks_tflops_data.js": (slice(None, None, 2), (
        "jacobi_2d [512, 512, 1024]/primal/CPU/Default_manual_vectorized",
        "2mm [2048]/primal/CUDA/Default_manual_vectorized")),
    "awslabs__mountpoint-s3__dev_bench_data.merged-history.js": (slice(20, 60), (
        "fs/sequential_read_direct_io", "sequential_read", "random_read_four_threads")),
    "hyperium__hyper__dev_bench_data.js": (slice(None, None, 40), None),
}


def cut(text: str, keep: slice, names) -> str:
    data = json.loads(re.sub(r"^window\.BENCHMARK_DATA\s*=\s*", "", text).rstrip().rstrip(";"))
    for suite, entries in data["entries"].items():
        kept = entries[keep]
        for e in kept:
            e["benches"] = [b for b in e["benches"] if b["name"] in names] if names else e["benches"][:3]
        data["entries"][suite] = [e for e in kept if e["benches"]]
    return "window.BENCHMARK_DATA = " + json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("source", type=Path)
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "tests/fixtures/realhist")
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name, (keep, names) in PICKS.items():
        text = cut((args.source / name).read_text(encoding="utf-8"), keep, names)
        (args.out / name).write_text(text, encoding="utf-8")
        print(f"{args.out / name}: {len(text) / 1e3:.0f} kB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
