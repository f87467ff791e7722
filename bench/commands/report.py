"""Print the status table of a data folder (markdown, html or json).

  python -m bench report --data DIR [--format markdown|html|json] [--out FILE]
                         [--readme FILE] [--plots DIR]
                         [--status Regressed,Watch] [--sort status|name] [--fail-on regressed]

Rows sort by status (what needs a look first), then by name; `--sort name`
keeps the old order. `--status` keeps only rows with those statuses in the
printed table (the README always gets every row). `--fail-on regressed`
exits 1 when any series is Regressed, naming them on stderr. Where a device
runs a reference build, its '<mode>.vs-ref' row's status stands for the
samples/s row in both (bench.present.table.alerting).

Pipeline: load (benchmarks.yaml thresholds; DIR/summary when it covers
DIR/runs, else every run record under DIR/runs; bad files are skipped and
named on stderr) -> compute (series, status per
series) -> write (the table to stdout or --out; optionally the README
section between <!-- bench:table:start --> and <!-- bench:table:end -->, and
PNG plots). Nothing under --data is ever written.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bench.records import atomic

from bench import config
from bench.records import triage
from bench.records.history import paused_gc
from bench.analyse.trends import STATUSES
from bench.analyse.profile import records_lookup
from bench.commands.source import TABLE, load_series
from bench.present.table import build_rows, sort_rows
from bench.errors import UsageError

FORMATS = ("markdown", "html", "json")


def add_arguments(parser):
    parser.add_argument("--data", required=True, metavar="DIR",
                        help="a data-branch checkout (holding runs/) or a folder of record files")
    parser.add_argument("--format", choices=FORMATS, default="markdown", help="output format (default: markdown)")
    parser.add_argument("--out", metavar="FILE", help="write the table here instead of stdout")
    parser.add_argument("--readme", metavar="FILE",
                        help="also replace the markdown table between the marker comments in FILE")
    parser.add_argument("--plots", metavar="DIR", help="also write one PNG per series and overview.png here")
    parser.add_argument("--status", action="append", metavar="S[,S]",
                        help="print only rows with these statuses, e.g. Regressed,Watch")
    parser.add_argument("--sort", choices=("status", "name"), default="status",
                        help="row order: by status then name (default), or by name alone")
    parser.add_argument("--fail-on", choices=("regressed",), dest="fail_on",
                        help="exit 1 when any series is Regressed")


def main(args) -> int:
    inside = _outputs_inside_data(args)
    if inside:
        raise UsageError(f"{inside} is inside --data {args.data}; "
                         "expected a path outside it (the data folder is never written)")
    wanted, bad = _statuses(args.status)
    if bad:
        raise UsageError(f"--status {bad!r}; expected names from {', '.join(STATUSES)}, comma-separated")
    cfg = config.load(args.config)
    loaded = load_series(args.data, TABLE, verb="report", warn=sys.stderr)  # today's stderr, not import time's
    series = loaded.series
    with paused_gc():
        rows = build_rows(series, cfg.trends, triage.load(args.data, warn=sys.stderr), records_lookup(args.data))
    rows = sort_rows(rows, args.sort)
    _summary(args.data, loaded.read, len(loaded.problems))
    write(args, series, rows)
    return _fail_on(args.fail_on, rows)


def _statuses(values) -> tuple[set[str] | None, str | None]:
    """--status 'Regressed,Watch' -> ({...}, None), or (None, the bad name)."""
    from bench.commands.arguments import split_names

    if not values:
        return None, None
    names = split_names(values)
    for name in names:
        if name not in STATUSES:
            return None, name
    return set(names), None


def _fail_on(what: str | None, rows) -> int:
    if what != "regressed":
        return 0
    from bench.present.table import alerting

    bad = ["/".join(r.key) for r in alerting(rows) if r.status == "Regressed"]
    if bad:
        print(f"bench report: {len(bad)} Regressed: {', '.join(bad)}", file=sys.stderr)
        return 1
    return 0


def _outputs_inside_data(args) -> str | None:
    data = Path(args.data).resolve()
    for flag in ("out", "readme", "plots"):
        value = getattr(args, flag)
        if value and Path(value).resolve().is_relative_to(data):
            return f"--{flag} {value}"
    return None


def render(rows, fmt: str, by: str = "status") -> str:
    if fmt == "json":
        from bench.present.table import rows_to_json
        return json.dumps(rows_to_json(rows), sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    if fmt == "html":
        from bench.present.html import render_html
        return render_html(rows, by=by)
    from bench.present.markdown import render_markdown
    return render_markdown(rows, by)


def write(args, series, rows) -> None:
    wanted, _ = _statuses(getattr(args, "status", None))
    from bench.present.table import deciding_status

    shown = [r for r in rows if wanted is None or deciding_status(r) in wanted]
    text = render(shown, args.format, getattr(args, "sort", "status"))
    if args.out:
        _write_file(Path(args.out), text)
    else:
        sys.stdout.write(text)
    if args.readme:
        from bench.present.markdown import render_markdown
        from bench.present.readme import update_readme
        update_readme(args.readme, render_markdown(rows, getattr(args, "sort", "status")))
    if args.plots:
        from bench.present.plots import write_plots
        paths = write_plots(series, rows, args.plots)
        print(f"bench report: wrote {len(paths)} plots to {args.plots}", file=sys.stderr)


def _write_file(path: Path, text: str) -> None:
    atomic.write_text(path, text)  # a reader never sees half a table


def _summary(data, read: int, skipped: int) -> None:
    note = f"; {skipped} skipped (named above)" if skipped else "; none skipped"
    print(f"bench report: {read} run records read from {data}{note}", file=sys.stderr)
