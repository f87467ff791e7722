"""The schema fast path: the hand-written compiler (bench/records/fastschema.py,
kept) against fastjsonschema and full jsonschema.

    .venv/bin/python studies/bench_schema_check.py [--records 2000] [--rounds 5]

Prints, per checker, the CPU time per record (best of --rounds passes over
--records made-up nightly records), and for fastjsonschema how many of the
mutated records (tests/test_report_fastschema.py's mutations) it judges
differently from jsonschema: a fast "valid" that jsonschema refuses would let a
bad record in (must be 0); a fast "invalid" only costs a jsonschema call.

Internals it pins (a change to them must keep this study running): bench.records.record._validator and _fast_check (the two schema checkers it races).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import fastjsonschema  # noqa: E402

from bench.records import record, synthetic  # noqa: E402
from tests.test_report_fastschema import base_record, mutations  # noqa: E402


def per_record_us(check, docs, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        t0 = time.process_time()
        for d in docs:
            check(d)
        best = min(best, time.process_time() - t0)
    return best / len(docs) * 1e6


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--records", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    days = args.records // len(synthetic.TARGETS) + 1
    docs = [r.data for _, r in zip(range(args.records), synthetic.history(days))]
    full = record._validator()
    compiled = fastjsonschema.compile(full.schema, use_default=False)  # never fills in defaults

    def fast(doc) -> bool:
        try:
            compiled(doc)
        except fastjsonschema.JsonSchemaException:
            return False
        return True

    checkers = {"hand-written (bench.records.fastschema, in use)": record._fast_check(),
                "fastjsonschema": fast, "jsonschema (is_valid)": full.is_valid}
    assert all(fast(d) for d in docs), "fastjsonschema refuses a valid made-up record"
    for name, check in checkers.items():
        print(f"{name:<52} {per_record_us(check, docs, args.rounds):8.1f} us/record  ({len(docs)} records)")
    wrong_accept = wrong_refuse = n = 0
    for doc in mutations(base_record()):
        f, j = fast(doc), full.is_valid(doc)
        wrong_accept += f and not j
        wrong_refuse += j and not f
        n += 1
    print(f"mutated records: {n}; fastjsonschema valid but jsonschema not: {wrong_accept}; "
          f"jsonschema valid but fastjsonschema not: {wrong_refuse}")
    print(f"fastjsonschema {fastjsonschema.VERSION}")
    return 1 if wrong_accept else 0


if __name__ == "__main__":
    sys.exit(main())
