"""Build or bring up to date the data folder's summary (DATA/summary/, beside runs/).

  python -m bench summary --data DIR [--check]

report, site, show, compare and alert read the summary instead of every
record; `bench publish` appends to it. This rebuilds it from runs/: only the
months whose records differ from what it covers (all of them when it is
missing). Each record file is read as `bench report` reads it: a file that
is no record is named on stderr and covered as skipped. Records are never
written. --check writes nothing and exits 1 when the summary is missing or stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

from bench.analyse.summarised import summary_line
from bench.errors import UsageError
from bench.records import summary
from bench.records.guard import one_line
from bench.records.history import paused_gc
from bench.records.record import RecordError, load


def add_arguments(parser):
    parser.add_argument("--data", required=True, metavar="DIR", help="a data-branch checkout (holding runs/)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when missing or stale")


def main(args) -> int:
    root = Path(args.data)
    if not (root / "runs").is_dir():
        raise FileNotFoundError(f"--data {args.data}: no runs/ folder; expected a data-branch checkout")
    disk = summary.on_disk(root)
    if summary.OUTSIDE in disk:
        raise UsageError(f"{disk[summary.OUTSIDE][0]}: a record file outside runs/YYYY/MM/; expected the data "
                         "branch's layout (runs/YYYY/MM/DD/<name>.json), which the summary covers month by month")
    old = summary.existing(root)
    months = sorted(m for m in disk if old is None or old.months.get(m) != summary.month_hash(disk[m]))
    gone = [] if old is None else [m for m in old.months if m not in disk]
    if args.check:
        state = "missing" if old is None else (f"stale in {len(months) + len(gone)} month(s)" if months or gone
                                                 else f"fresh: {old.count} records, hash {old.digest[:12]}")
        print(f"bench summary: {args.data}/{summary.FOLDER} {state}", file=sys.stderr)
        return 0 if old is not None and not months and not gone else 1
    with paused_gc():
        lines = {m: [line_for(root, rel) for rel in disk[m]] for m in months}
    keep = summary.with_dates(root, {m: c for m, c in old.months.items() if m in disk and m not in months}) \
        if old else None
    cov = summary.write(root, lines, keep)
    for m in gone:  # a month no longer on disk (a hand-made folder): not covered any more
        (root / summary.FOLDER / f"{m}.jsonl").unlink(missing_ok=True)
    print(f"bench summary: {len(months)} month(s) rebuilt; covers {cov.count} records, hash {cov.digest[:12]}",
          file=sys.stderr)
    return 0


def line_for(root: Path, rel: str) -> dict:
    """A record file's summary line, or a skipped line naming why it is no record."""
    source = str(root / rel)
    try:
        return summary_line(load(source), rel)
    except RecordError as e:
        text = one_line(e)
        print(f"bench: skipped {text}", file=sys.stderr)
        return {"path": rel, "skipped": text.removeprefix(f"{source}: ")}
