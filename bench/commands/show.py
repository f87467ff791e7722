"""Print one series night by night: values, Keras versions, marks.

  python -m bench show BACKEND/DEVICE/MODEL/MODE --data DIR

Pipeline: load (thresholds, DIR/summary or every record under DIR/runs; bad files are
named on stderr and skipped) -> compute (the series and its status) ->
write (one line for each of the last --nights nights, default 90, or of
every night with --all: date, value, Δ to the night before, Keras
version and commit, the host's speed against the nights before, a mark:
◆ the change, ▼/▲ a night off the level beyond the noise band, ✖ a
failure), then whose change it is, its triage mark and, for a Regressed or
Faster series, which ops moved across its window (the two nights' profiles,
bench.analyse.profile). An unknown series is named with the ones the data has.
"""

from __future__ import annotations

import sys

from bench import config
from bench.commands.arguments import positive_int
from bench.errors import UsageError
from bench.commands.source import load_series, load_target

MAX_LISTED = 20  # an unknown series lists at most this many known ones
NIGHTS = 90  # the nights printed by default: the dashboard's overview holds as many


def add_arguments(parser):
    parser.add_argument("series", metavar="BACKEND/DEVICE/MODEL/MODE", help="the series to show")
    parser.add_argument("--data", required=True, metavar="DIR",
                        help="a data-branch checkout (holding runs/) or a folder of record files")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--nights", type=positive_int, default=NIGHTS, metavar="N",
                       help=f"print the last N nights (default {NIGHTS}); the status reads the nights it always reads")
    which.add_argument("--all", action="store_true", help="print every night")


def main(args) -> int:
    from bench.analyse.series import parse_key

    try:
        key = parse_key(args.series)
    except ValueError as e:
        raise UsageError(str(e)) from None
    cfg = config.load(args.config)
    last = None if args.all else args.nights
    # From a fresh summary: this target's lines of the months that hold what
    # is printed (every month with --all), the others' newest months only.
    got = load_target(args.data, key[0], key[1], verb="show", warn=sys.stderr,
                      need=None if last is None else (key, _need(last, cfg.trends)))
    if got is not None:
        series, since = got[0].series, got[1]
        if key in series:
            newest = max(x.last_seen for x in series.values())
            assessed = _assessed(series, key, newest, cfg.trends)
            origin = _origin(series, assessed, key)
            if since is None or _whole_enough(series, key, origin[0], since):
                return _write(series, assessed, key, origin, args.data, cfg.trends, last)
    series = load_series(args.data, verb="show", warn=None if got else sys.stderr).series  # metric and vs-ref series too
    if key not in series:
        known = ["/".join(k) for k in series][:MAX_LISTED]
        raise UsageError(f"series {args.series!r} is not in {args.data}; it has: "
                         f"{', '.join(known) or 'no series'}")
    newest = max(x.last_seen for x in series.values())
    assessed = _assessed(series, key, newest, cfg.trends)
    return _write(series, assessed, key, _origin(series, assessed, key), args.data, cfg.trends, last)


def _need(last: int, trends) -> int:
    """The nights of each series of the target that print the last `last`
    as every night would: the status reads the last window + BASELINE
    (trends.assess), and its change window and whose change it is the
    nights next to the change; the HOST column reads BASELINE before the
    first printed night (host.night_shifts) and Δ PREV the one before it.
    BASELINE + 1 past the larger of `last` and the status's covers them all."""
    from bench.analyse.trends import BASELINE

    return max(last, trends.window + BASELINE) + BASELINE + 1


def _assessed(series, key, newest, trends) -> dict:
    """The status of every series of the key's target. What show prints of
    the other targets is not their status but their shift across this
    series' change (triangulate._cells); of its own target, which other
    series changed the same night (the origin's siblings)."""
    from bench.analyse.trends import assess

    return {k: assess(x, newest, trends) for k, x in series.items() if k[:2] == key[:2]}


def _whole_enough(series, key, night, since) -> bool:
    """Whether the other targets' nights from `since` on (all their records
    read) give the shifts that every night gives: triangulate._shift reads a
    series' BEFORE nights before the change and every night from it, so the
    change is on or after `since` and each other series of the key's slice
    holds BEFORE nights between the two (or there is no change to tell)."""
    from bench.analyse.triangulate import BEFORE

    if night is None:
        return True
    if night < since:
        return False
    return all(sum(since <= p.day < night for p in s.points) >= BEFORE
               for k, s in series.items() if k[2:] == key[2:] and k[:2] != key[:2])


def _origin(series, assessed, key):
    """(the night of the key's change or None, whose change it is or None):
    triangulate's origin of `key`, which reads the statuses of its own
    target's series only (assessed holds those)."""
    from bench.analyse.triangulate import triangulate

    origin = triangulate(series, assessed).get(key)
    change = assessed[key].change
    return (series[key].points[change.index].day if change else None), origin


def _write(series, assessed, key, origin, data, trends, last) -> int:
    """The nights, whose change it is, its triage mark and which ops moved."""
    from bench.analyse.triage import mark_of
    from bench.present.escape import plain
    from bench.present.nights import render_nights
    from bench.present.origin import mark_text
    from bench.records import triage

    sys.stdout.write(render_nights(series[key], assessed[key], trends, last))
    origin = origin[1]
    mark = mark_of(series[key], assessed[key], triage.load(data, warn=sys.stderr))
    lines = [f"whose change: {plain(origin.text())}"] if origin is not None else []
    lines += [f"triage: {plain(mark_text(mark))}"] if mark is not None else []
    moved = _ops(series[key], assessed[key], data)
    lines += [f"which ops moved (last night before the change → first after, per step): {plain(moved)}"] \
        if moved else []
    sys.stdout.write("".join(line + "\n" for line in lines))
    return 0


def _ops(s, a, data) -> str:
    """The profile diff across a Regressed or Faster series' window (bench.analyse.profile), '' without one."""
    from bench.analyse.profile import describe, records_lookup, window_diff

    if a.status not in ("Regressed", "Faster"):
        return ""
    return describe(window_diff(s, a.change, records_lookup(data)))
