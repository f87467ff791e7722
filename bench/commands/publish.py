"""Append run records to the data branch, exactly once, retrying push races.

Each record goes to runs/YYYY/MM/DD/<backend>--<device>--<run id>-<attempt>.json
on the branch (created as an orphan when missing). Every record is validated
first; one invalid record refuses the whole call and nothing is committed. A
record already there with the same content is a no-op; the same path with other
content is refused (records are never edited). A rejected push (another
publisher won the race) is retried: fetch, re-add on the new tip, push, with
exponential backoff and a bounded number of attempts.

Prints one line per record (added / already there) and the commit.
Exit 0 on success (also when nothing was new), 1 when refused, 2 on usage errors.
"""

from __future__ import annotations

import sys

from bench.cli import positive_int
from bench.records.record import RecordError, load
from bench.records.store import DEFAULT_BRANCH, PublishError, PublishResult, Retry, publish, record_files


def add_arguments(parser):
    parser.add_argument("--repo", required=True, metavar="PATH_OR_URL",
                        help="the git repository holding the data branch (a local path or a URL)")
    parser.add_argument("--branch", default=DEFAULT_BRANCH, help=f"the data branch (default {DEFAULT_BRANCH})")
    parser.add_argument("--attempts", type=positive_int, default=Retry.attempts,
                        help=f"pushes to try before giving up (default {Retry.attempts})")
    parser.add_argument("records", nargs="+", metavar="RECORD",
                        help="run record files; a folder means every *.json below it")


def main(args) -> int:
    files = record_files(args.records)                      # usage errors: exit 2 via cli
    try:
        records = [load(f) for f in files]                  # load: validate all first
    except RecordError as e:  # one bad record refuses the call: exit 1, like a refused push
        raise PublishError(str(e)) from None
    result = publish(records, args.repo, args.branch,      # compute + write: one commit or none
                     retry=Retry(attempts=args.attempts), log=sys.stderr)
    print(summary(result))
    return 0


def summary(result: PublishResult) -> str:
    lines = [f"{p.status:<13} {p.relpath}  ({p.source})" for p in result.placed]
    if result.commit:
        lines.append(f"commit {result.commit} on {result.branch} of {result.repo}: "
                     f"{len(result.added)} added, {len(result.placed) - len(result.added)} already there "
                     f"(push attempt {result.attempts})")
    else:
        tip = result.tip[:12] if result.tip else "?"
        lines.append(f"nothing new: all {len(result.placed)} record(s) already on {result.branch} "
                     f"of {result.repo} (tip {tip}); no commit")
    return "\n".join(lines)
