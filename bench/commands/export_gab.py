"""Print run records as a github-action-benchmark customBiggerIsBetter array.

One bench per series, named backend/device/model/mode (the newest run wins
when several give the same name), `range` '± r' covering every sample, and
`extra` naming the device and the Keras version. Smaller-is-better results
(times) go to a separate customSmallerIsBetter array with --smaller; the two
are never mixed. Failed or skipped results have no number and are left out
(counted on stderr).
"""

from __future__ import annotations

import json
import sys

from bench.present.gab import export_benches
from bench.records.record import load
from bench.records.store import record_files


def add_arguments(parser):
    parser.add_argument("records", nargs="+", metavar="RECORD",
                        help="run record files; a folder means every *.json below it")
    parser.add_argument("--smaller", action="store_true",
                        help="print the customSmallerIsBetter array (smaller-is-better results) instead")


def main(args) -> int:
    records = [load(f) for f in record_files(args.records)]
    out = export_benches(records, "smaller" if args.smaller else "bigger")
    print(json.dumps(list(out.benches), indent=2, sort_keys=True, ensure_ascii=False))
    notes = []
    if out.other_direction:
        other = "without --smaller" if args.smaller else "with --smaller"
        notes.append(f"{out.other_direction} result(s) of the other direction left out (export them {other})")
    if out.not_ok:
        notes.append(f"{out.not_ok} failed/skipped result(s) left out (no number to show)")
    if out.superseded:
        notes.append(f"newest run kept for {len(out.superseded)} name(s) given more than once: "
                     + ", ".join(out.superseded))
    print(f"bench export-gab: {len(out.benches)} bench(es) for {out.tool}"
          + "".join(f"; {n}" for n in notes), file=sys.stderr)
    return 0
