"""Print the PR benchmark's claim as JSON: {"head_sha": ..., "pr": ...}.

  python -m bench pr-info PR_NUMBER HEAD_SHA > pr.json

pr-bench.yml uploads it with the records; `bench comment pr` checks it
against GitHub before trusting it. Standard library only (bench/ci/pr_info.py).
"""

from __future__ import annotations

from bench.ci.pr_info import claim


def add_arguments(parser):
    parser.add_argument("pr", metavar="PR_NUMBER")
    parser.add_argument("head_sha", metavar="HEAD_SHA", help="40 hex digits")


def main(args) -> int:
    print(claim(args.pr, args.head_sha))
    return 0
