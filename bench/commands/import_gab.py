"""Import a github-action-benchmark history (data.js or JSON) as run records.

Each entry (one commit of one suite) becomes a run record, event 'import':
the suite is the backend label, each bench name the model, mode 'bench',
device --device; names backend/device/model/mode written by export-gab keep
their own series. Times (cargo, go, customSmallerIsBetter, ns/iter, ms, ...)
are imported as smaller-is-better. Records are written under --out at their
data-branch path (runs/YYYY/MM/DD/...), one path per line on stdout; a value
that is not a positive number is kept as a 'skipped' result, counted on stderr.
"""

from __future__ import annotations

import sys
from pathlib import Path

from bench.present.gab import import_records, read_history
from bench.records.record import already_there, write


def add_arguments(parser):
    parser.add_argument("data_js", metavar="DATA_JS", help="github-action-benchmark data.js or JSON history")
    parser.add_argument("--out", required=True, metavar="DIR", help="data folder to write runs/... into")
    parser.add_argument("--device", default="imported", help="device label for the records (default: imported)")


def main(args) -> int:
    history = read_history(args.data_js)
    imported = import_records(history, args.device)
    out = Path(args.out)
    _refuse_edits(imported.records, out)   # all targets checked before the first write
    for rec in imported.records:
        print(write(rec, out, rec.relpath()))
    suites = len({e.suite for e in history.entries})
    print(f"bench import-gab: {len(history.entries)} entries of {suites} suite(s) from {args.data_js}: "
          f"{len(imported.records)} records, {imported.results} results "
          f"({imported.not_measured} not a positive number, kept as skipped)", file=sys.stderr)
    return 0


def _refuse_edits(records, out: Path) -> None:
    for rec in records:
        already_there(out / rec.relpath(), rec.to_json(), rec.source)
