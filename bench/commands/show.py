"""Print one series night by night: values, Keras versions, marks.

  python -m bench show BACKEND/DEVICE/MODEL/MODE --data DIR

Pipeline: load (thresholds, DIR/summary or every record under DIR/runs; bad files are
named on stderr and skipped) -> compute (the series and its status) ->
write (one line per night: date, value, Δ to the night before, Keras
version and commit, the host's speed against the nights before, a mark:
◆ the change, ▼/▲ a night off the level beyond the noise band, ✖ a
failure), then whose change it is, its triage mark and, for a Regressed or
Faster series, which ops moved across its window (the two nights' profiles,
bench.analyse.profile). An unknown series is named with the ones the data has.
"""

from __future__ import annotations

import sys

from bench import config
from bench.errors import UsageError
from bench.commands.source import load_series

MAX_LISTED = 20  # an unknown series lists at most this many known ones


def add_arguments(parser):
    parser.add_argument("series", metavar="BACKEND/DEVICE/MODEL/MODE", help="the series to show")
    parser.add_argument("--data", required=True, metavar="DIR",
                        help="a data-branch checkout (holding runs/) or a folder of record files")


def main(args) -> int:
    from bench.analyse.series import parse_key
    from bench.analyse.trends import assess
    from bench.present.nights import render_nights

    try:
        key = parse_key(args.series)
    except ValueError as e:
        raise UsageError(str(e)) from None
    cfg = config.load(args.config)
    series = load_series(args.data, verb="show", warn=sys.stderr).series  # metric and vs-ref series too
    if key not in series:
        known = ["/".join(k) for k in series][:MAX_LISTED]
        raise UsageError(f"series {args.series!r} is not in {args.data}; it has: "
                         f"{', '.join(known) or 'no series'}")
    newest = max(x.last_seen for x in series.values())
    # Every series is assessed once: the same night's other cells say whose change it is.
    assessed = {k: assess(x, newest, cfg.trends) for k, x in series.items()}
    sys.stdout.write(render_nights(series[key], assessed[key], cfg.trends))
    sys.stdout.write(_origin(series, assessed, key, args.data))
    return 0


def _origin(series, assessed, key, data) -> str:
    """Whose change it is, against the same night's other cells, and its triage mark."""
    from bench.analyse.triage import mark_of
    from bench.analyse.triangulate import triangulate
    from bench.present.escape import plain
    from bench.present.origin import mark_text
    from bench.records import triage

    origin = triangulate(series, assessed).get(key)
    mark = mark_of(series[key], assessed[key], triage.load(data, warn=sys.stderr))
    lines = [f"whose change: {plain(origin.text())}"] if origin is not None else []
    lines += [f"triage: {plain(mark_text(mark))}"] if mark is not None else []
    moved = _ops(series[key], assessed[key], data)
    lines += [f"which ops moved (last night before the change → first after, per step): {plain(moved)}"] \
        if moved else []
    return "".join(line + "\n" for line in lines)


def _ops(s, a, data) -> str:
    """The profile diff across a Regressed or Faster series' window (bench.analyse.profile), '' without one."""
    from bench.analyse.profile import describe, records_lookup, window_diff

    if a.status not in ("Regressed", "Faster"):
        return ""
    return describe(window_diff(s, a.change, records_lookup(data)))
