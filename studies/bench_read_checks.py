"""What the readers' safety checks cost: load_history on a year of made-up
history (bench.records.synthetic, 2,190 records) with the strict parse
(bench.records.record.parse_json: no NaN/Infinity/overflow, no lone
surrogates) and the optional-field type checks (bench.records.extensions),
and with both swapped for a plain json.loads. CPU time, best of --repeats.

    .venv/bin/python studies/bench_read_checks.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.records import extensions, history, record  # noqa: E402
from bench.records.synthetic import write_history  # noqa: E402


def best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return min(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        write_history(Path(tmp), 365)
        load = lambda: history.load_history(tmp, warn=None)  # noqa: E731
        n = len(load().records)
        checked = best(load, args.repeats)
        record.parse_json = lambda text, source="record", object_pairs_hook=None: json.loads(text)
        extensions.problem = lambda data: None
        plain = best(load, args.repeats)
    print(f"{n} records: load_history CPU best of {args.repeats}: with the checks {checked:.3f} s, "
          f"plain json.loads and no type checks {plain:.3f} s ({(checked - plain) / n * 1e6:+.1f} us a record)")


if __name__ == "__main__":
    main()
