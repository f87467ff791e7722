"""Print the night a nightly workflow run is for: night=YYYY-MM-DD.

  python -m bench night [--night YYYY-MM-DD] [--run ID --repo OWNER/NAME | --created-at RFC3339]
                        [--github-output FILE]

nightly.yml's setup job decides the night once; every bench job of the run
records it as run.night (BENCH_NIGHT), so a device that starts hours late
records the night of its run. --night: the dispatch input (empty: the latest
night that has not passed when the run was created; bench/ci/night.py has the
rule). The run's creation time comes from GitHub (--run, through `gh api`) or
--created-at; it is the same for every attempt, so a rerun keeps its night.
Without either, the clock. A malformed or future night is refused (exit 2).
--github-output FILE also appends the line to FILE ($GITHUB_OUTPUT).
"""

from __future__ import annotations

import os
import re
from datetime import datetime, timezone

from bench.ci.github import REPO
from bench.ci.night import choose_night, run_created_at
from bench.errors import UsageError
from bench.records.record import parse_time


def add_arguments(parser):
    parser.add_argument("--night", default="", metavar="YYYY-MM-DD", help="the night asked for (empty: the latest)")
    when = parser.add_mutually_exclusive_group()
    when.add_argument("--run", metavar="ID", help="the workflow run: its created_at, from GitHub")
    when.add_argument("--created-at", metavar="RFC3339", help="the run's creation time")
    parser.add_argument("--repo", metavar="OWNER/NAME", help="the run's repository (default: $GITHUB_REPOSITORY)")
    parser.add_argument("--github-output", metavar="FILE", help="also append night=... to this file")


def main(args) -> int:
    created = _created(args)
    line = f"night={choose_night(args.night, created).isoformat()}"
    print(line)
    if args.github_output:
        with open(args.github_output, "a", encoding="utf-8") as f:
            f.write(line + "\n")
    return 0


def _created(args) -> datetime:
    if args.created_at:
        return parse_time(args.created_at, "--created-at")
    if not args.run:
        return datetime.now(timezone.utc)
    repo = args.repo or os.environ.get("GITHUB_REPOSITORY", "")
    if not re.fullmatch(r"[1-9][0-9]*", args.run) or not REPO.fullmatch(repo):
        raise UsageError(f"--run {args.run!r} --repo {repo!r}; expected a workflow run id (digits) and "
                         "OWNER/NAME (or $GITHUB_REPOSITORY)")
    return run_created_at(repo, args.run)
