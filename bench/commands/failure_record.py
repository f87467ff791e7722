"""Write the record of a benchmark job that ended without one: every benchmark failed.

  python -m bench failure-record --kind install              # scripts/run-bench.sh
  python -m bench failure-record --kind timeout --unless-recorded   # the workflow's fallback

--kind install: the job's set-up failed, so bench itself cannot run (the
install log's error is the message). --kind timeout: the Benchmark step ran
past its timeout-minutes and was killed; --unless-recorded writes nothing
when the job's record folder already holds a record. The matrix entry and the
run come from the environment (bench/ci/failure_record.py names the
variables). Standard library only: it runs with the runner's Python from the
checkout. Prints the record's path.
"""

from __future__ import annotations

import os
import sys
from datetime import datetime, timezone

from bench.ci.failure_record import KINDS, failure_record, has_record, write


def add_arguments(parser):
    parser.add_argument("--kind", required=True, choices=KINDS, help="why the job has no record")
    parser.add_argument("--unless-recorded", action="store_true",
                        help="write nothing when $BENCH_OUT already holds a record")


def main(args) -> int:
    env = os.environ
    name, record = failure_record(env, args.kind, datetime.now(timezone.utc))
    out = env["BENCH_OUT"]  # failure_record has checked it is set
    if args.unless_recorded and has_record(out):
        print(f"bench failure-record: {out} already holds a record; nothing to add", file=sys.stderr)
        return 0
    path = write(out, name, record)
    print(path)
    first = record["results"][0]["error"]["message"].splitlines()[0] if record["results"] else ""
    print(f"bench failure-record: {path}: {len(record['results'])} benchmark(s) failed/{args.kind}: {first}",
          file=sys.stderr)
    return 0
