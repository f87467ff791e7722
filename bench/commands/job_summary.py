"""Print a benchmark job's records as a markdown job summary.

  python -m bench job-summary RECORDS_DIR >> "$GITHUB_STEP_SUMMARY"

A benchmark job step (nightly.yml, pr-bench.yml, keras-ref.yml). Standard
library only (bench/ci/job_summary.py): it runs with the runner's Python
from the checkout even when the job's environment failed to install. No
record prints a notice and exits 0, so the summary never fails a job.
"""

from __future__ import annotations

from pathlib import Path

from bench.ci.job_summary import summary


def add_arguments(parser):
    parser.add_argument("records", metavar="RECORDS_DIR", help="the folder the job wrote its records to")


def main(args) -> int:
    print(summary(Path(args.records)))
    return 0
