"""Build the dashboard: gh-pages-template/ plus the history's data, ready for GitHub Pages.

Reads --data (a data-branch checkout) through its summary/ when that covers
runs/, else every record (one line says so), and writes SITE/ with
index.html, data/index.json (the table and each series' newest nights; the
first download), data/series/*.js (a series' whole history, loaded when its
chart opens), data/table.md (the README table) and plots/*.png. View it with
`python -m bench serve SITE`.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from bench import config
from bench.records import triage
from bench.analyse.profile import records_lookup
from bench.records.history import paused_gc
from bench.commands.source import load_series
from bench.records.record import parse_time, utc_now
from bench.present.table import build_rows
from bench.present.site import TEMPLATE, SiteError, write_site


def add_arguments(parser):
    parser.add_argument("--data", required=True, metavar="DIR",
                        help="a data-branch checkout (or any folder holding runs/)")
    parser.add_argument("--out", required=True, metavar="SITE",
                        help="the site folder to write (new, empty, or an earlier site)")
    parser.add_argument("--plots", action=argparse.BooleanOptionalAction, default=True,
                        help="write the PNG plots too (default: yes; --no-plots is faster)")
    parser.add_argument("--template", default=str(TEMPLATE), metavar="DIR",
                        help="the static dashboard to copy (default: the repository's gh-pages-template/, which the package ships)")
    parser.add_argument("--repository", metavar="OWNER/NAME", default=os.environ.get("GITHUB_REPOSITORY") or None,
                        help="link only this repository's Actions run pages (default: $GITHUB_REPOSITORY; "
                             "unset: any github.com run page)")


def main(args) -> int:
    cfg = config.load(args.config)
    data, out = Path(args.data), Path(args.out)
    _refuse_overlap(data, out)
    loaded = load_series(data, verb="site")
    series = loaded.series  # headline and metric series (latency p99, memory, energy)
    marks = triage.load(data, warn=sys.stderr)
    # Every point of every series is written (361,000 at ten years x 100
    # series, as columns: series.columns): the collector's passes over what
    # that allocates would cost more than writing them.
    with paused_gc():
        rows = build_rows(series, cfg.trends, marks, records_lookup(data))
        index = write_site(out, series, rows, generated_at=parse_time(utc_now()), plots=args.plots,
                           template=args.template, repository=args.repository,
                           warn=lambda msg: print(f"bench site: {msg}", file=sys.stderr))
    points = sum(len(s.points) for s in series.values())
    print(f"bench site: {len(series)} series, {points} points, {len(loaded.problems)} files skipped; "
          f"data/index.json {index.stat().st_size / 1e6:.2f} MB", file=sys.stderr)
    print(out / "index.html")
    return 0


def _refuse_overlap(data: Path, out: Path) -> None:
    # The site folder is replaced wholesale; it must never hold the records.
    d, o = data.resolve(), out.resolve()
    if d == o or d.is_relative_to(o) or o.is_relative_to(d):
        raise SiteError(f"--out {out}: overlaps --data {data}; expected a site folder outside the data")
