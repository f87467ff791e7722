"""Where a verb's series come from: the data folder's summary (bench/records/summary.py)
when it is fresh, else its records, read one by one. Either way the same series.

A stale summary is said in one line on stderr, then the records are read; a
folder without one (a `bench run --out` folder, a test's) is read silently.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Mapping, NamedTuple, TextIO

from bench.analyse.series import Series, SeriesKey, all_series, table_series
from bench.analyse.summarised import KINDS, read_lines, series_from_lines
from bench.records import summary
from bench.records.newest import newness
from bench.records.history import FUTURE, STDERR, load_history, paused_gc

TABLE = ("headline", "reference")  # bench report's rows (series.table_series)


@dataclass(frozen=True)
class Loaded:
    series: Mapping[SeriesKey, Series]
    read: int                  # records read
    problems: tuple[str, ...]  # one line per skipped file
    via: str                   # "summary" or "records"


def load_series(data: str | Path, kinds: tuple[str, ...] = KINDS, *, verb: str,
                warn: TextIO | None = STDERR, now: datetime | None = None,  # type: ignore[assignment]
                use_summary: bool = True) -> Loaded:
    """The series of `kinds` (TABLE or all KINDS) in DATA, with the host reading on headline points."""
    if warn is STDERR:
        warn = sys.stderr
    root = Path(data)
    if not root.is_dir():
        raise FileNotFoundError(f"--data {data}: no such folder; expected a data-branch checkout holding runs/")
    if use_summary and (root / summary.FOLDER).is_dir():
        with paused_gc():
            got = _fresh_lines(root, data, verb, warn, now)
            if got is not None:
                lines, problems = got
                try:
                    series = series_from_lines(lines, kinds)
                except (KeyError, TypeError, ValueError, AttributeError) as e:
                    _stale(data, verb, warn, f"a line of the wrong shape, {type(e).__name__}: {e}")
                else:
                    for p in problems:
                        if warn is not None:
                            print(f"bench: {p}", file=warn)
                    return _kept(Loaded(series, len(lines), tuple(problems), "summary"))
    elif warn is not None and summary.is_sparse(root):
        print(f"bench {verb}: {data} is a sparse checkout without {summary.FOLDER}/; only the records "
              f"checked out are read (`bench summary` on a full checkout builds it)", file=warn)
    history = load_history(root, warn=warn, now=now)
    with paused_gc():
        series = table_series(history.records) if tuple(kinds) == TABLE else all_series(history.records)
    return _kept(Loaded(series, len(history.records), history.problems, "records"))


# `bench show`'s other targets: every night of the newest RECENT_MONTHS
# months. What show prints of them is their shift across its own series'
# change (triangulate._shift: BEFORE nights before it, every night after),
# and that change lies in the status rule's last window + BASELINE nights:
# four months hold both for a nightly series (show checks, and reads
# everything when they do not).
RECENT_MONTHS = 4
# The nights a month gives a nightly series, less a few failed ones:
# load_target's `need` nights are sought in the newest need / NIGHTS_A_MONTH
# months, rounded up, and one more (the newest may have begun last night);
# in every month when they are not there.
NIGHTS_A_MONTH = 25


def load_target(data: str | Path, backend: str, device: str, *, verb: str,
                warn: TextIO | None = STDERR, now: datetime | None = None,
                need: tuple[SeriesKey, int] | None = None) -> tuple[Loaded, date | None] | None:
    """(the series, since) from a fresh summary's lines of this target in
    every month and every line of the newest RECENT_MONTHS months, so that
    every series of (backend, device) is whole and the others hold every
    night from `since` on (None: no line was left out, all are whole; before
    `since` a night may lack records); None when the summary
    is missing or stale (said in one line, as load_series says it), or the
    folder has none: then the caller reads everything (load_series).

    `need` (key, n): only the newest months are opened where they give the
    series `key` of this target, and every other of its series with a night
    in them, their last n nights (each of them whole, none from an older
    month): those series then hold their last n nights as every month gives
    them, and may lack older ones. Else every month is read. `bench show`
    prints the last nights; for a target whose series run every night, what
    it reads does not grow with the history."""
    if warn is STDERR:
        warn = sys.stderr
    root = Path(data)
    if not (root.is_dir() and (root / summary.FOLDER).is_dir()):
        return None
    newest = None if need is None else max(RECENT_MONTHS, -(-need[1] // NIGHTS_A_MONTH) + 1)
    with paused_gc():
        got = _target_series(root, data, backend, device, newest, now)
        if got is not None and got.first is not None and not _holds(got.series, *need, got.first):
            # A series that may lack nights it needs (gaps, or new): the status could read older ones.
            got = _target_series(root, data, backend, device, None, now)  # every month
    if got is None:
        return None
    for p in got.problems:
        if warn is not None:
            print(f"bench: {p}", file=warn)
    return (_kept(Loaded(got.series, got.count, tuple(got.problems), "summary")),
            date(int(got.since[:4]), int(got.since[5:]), 1) if got.since else None)


class _Read(NamedTuple):
    """What _target_series read: the series, the lines' problems, read_some's
    `since`, Summary.first (from this month on every record was read; None:
    every month was) and the count of lines read."""
    series: dict[SeriesKey, Series]
    problems: list[str]
    since: str | None
    first: str | None
    count: int


def _target_series(root: Path, data, backend: str, device: str, newest: int | None,
                   now: datetime | None) -> _Read | None:
    """load_target's read of the newest `newest` months (None: every month);
    None when stale or a line is of the wrong shape."""
    found, _why, since = summary.read_some(root, (summary.target_needle(backend, device),), RECENT_MONTHS, newest)
    if found is None:
        return None  # load_series finds it stale again and says why, once
    try:
        lines, problems = read_lines(found.lines, str(data), (now or datetime.now(timezone.utc)) + FUTURE)
        return _Read(series_from_lines(lines, KINDS), problems, since, found.first, len(lines))
    except (KeyError, TypeError, ValueError, AttributeError):
        return None  # the same: load_series says why


def _holds(series: Mapping[SeriesKey, Series], key: SeriesKey, need: int, first: str) -> bool:
    """Whether `key`'s series, and every other series of its target that has
    a point on or after month `first`, has `need` points from then on. One
    with none there (skipped every night, or no longer run) reads as having
    no change whatever its older nights: its newest is months old."""
    start = date(int(first[:4]), int(first[5:]), 1)
    holds = lambda s: len(s.points) >= need and s.points[-need].day >= start  # noqa: E731
    return key in series and holds(series[key]) and all(
        holds(s) for k, s in series.items() if k[:2] == key[:2] and s.points and s.points[-1].day >= start)


_KEPT: list[Loaded] = []


def _kept(loaded: Loaded) -> Loaded:
    """`loaded`, held here until the next load: a reader verb run as the
    program leaves without freeing it (bench.cli.READERS), which it would
    otherwise do when its main returns."""
    _KEPT[:] = [loaded]
    return loaded


def _fresh_lines(root: Path, data, verb: str, warn: TextIO | None, now: datetime | None):
    """(lines, problems) of a summary that covers runs/; else None, with one
    line saying why the records are read instead. A line of the wrong shape
    (a hand-edited or cut summary whose paths still match) is stale too."""
    found, why = summary.read(root)
    if found is not None:
        try:
            return read_lines(found.lines, str(data), (now or datetime.now(timezone.utc)) + FUTURE)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            why = f"a line of the wrong shape, {type(e).__name__}: {e}"
    _stale(data, verb, warn, why)
    return None


def _stale(data, verb: str, warn: TextIO | None, why: str) -> None:
    if warn is not None:
        print(f"bench {verb}: {summary.FOLDER}/ is stale ({why}); reading the records "
              f"(`bench summary --data {data}` rebuilds it)", file=warn)


def baseline_records(data: str | Path, nights: int, *, warn: TextIO | None = STDERR,  # type: ignore[assignment]
                     now: datetime | None = None, keep=None) -> list | None:
    """The records `bench compare` needs of a data folder with a fresh summary:
    those that made each series' last `nights` points, and the newest nightly
    record of each target (its environment); None without a fresh summary (then
    every record is read). Read from those records, the baseline is the one
    every record gives: a night's winner beats every record of its night, so
    also those read, and no record read makes a newer point than the last
    `nights` (compare/baseline.py takes the last `nights` points). `keep(run)`:
    only records whose run's protocol and A/B mode (summarised.summary_line's
    "setting") it keeps count, as baseline_from_history keeps them."""
    from bench.records.record import load

    if warn is STDERR:
        warn = sys.stderr
    root = Path(data)
    if not (root / summary.FOLDER).is_dir():
        return None
    got = _fresh_lines(root, data, "compare", warn, now)
    if got is None:
        return None
    lines, _ = got
    if keep is not None:
        lines = [(t, x) for t, x in lines if not x["nightly"] or keep(x["setting"])]
    path_of = {(x["backend"], x["device"], x["run_id"], x["attempt"]): x["path"] for _, x in lines if x["nightly"]}
    wanted = set()
    for (backend, device, _, _), s in series_from_lines(lines, ("headline",), speed=False).items():
        wanted.update(path_of[(backend, device, p.run_id, p.attempt)] for p in s.points[-nights:])
    newest: dict[tuple[str, str], tuple] = {}
    for t, x in lines:
        if x["nightly"]:
            newest[(x["backend"], x["device"])] = max(newest.get((x["backend"], x["device"]), (t, 0, "")),
                                                      (t, x["attempt"], x["path"]))
    wanted.update(p for _, _, p in newest.values())
    with paused_gc():
        records = [load(str(root / p)) for p in wanted]
    return sorted(records, key=lambda r: (*newness(r), r.source))  # load_history's order
