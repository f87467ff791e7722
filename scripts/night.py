#!/usr/bin/env python3
"""The night this workflow run is for, as a step output line: night=YYYY-MM-DD.

    NIGHT=2026-12-01 python scripts/night.py >> "$GITHUB_OUTPUT"

nightly.yml's setup job (GitHub-hosted, bench installed) decides the night
once; every bench job of the run gets it as BENCH_NIGHT, so a device that
starts hours late still records the night of its run (bench/ci/night.py has
the rule). NIGHT: the dispatch input (empty: the latest night that has not
passed). --now RFC3339 replaces the clock (tests). Exit 2 with one line for a
malformed or future night.
"""

from __future__ import annotations

import os
import sys
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.ci.night import choose_night  # noqa: E402  (after the path tweak)
from bench.records.record import RecordError, parse_time  # noqa: E402


def main(argv: list[str]) -> int:
    try:
        if argv[:1] == ["--now"] and len(argv) == 2:
            now = parse_time(argv[1], "--now")
        elif not argv:
            now = datetime.now(timezone.utc)
        else:
            print(f"usage: night.py [--now RFC3339] (got {argv!r})", file=sys.stderr)
            return 2
        night = choose_night(os.environ.get("NIGHT", ""), now)
    except RecordError as e:
        print(f"night: error: {e}", file=sys.stderr)
        return 2
    print(f"night={night.isoformat()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
