"""A record as its summary line, and series from those lines (bench/records/summary.py).

The line keeps what build_series reads of a record, worked out once when the
record is published: its run and target, Keras version and commit, url, the
environment fingerprint and text (envsummary), the host reading, and one
row per series the record feeds (headline, metric, vs-ref and vs-native):
  [model, mode, status, value|null, unit, better, state, quartiles|null, kind|null, message|null, se|null]
state: an index into the line's "states" (the point's environment text: the
headline's, the memory series' or the vs-ref series', which name their own
protocol); quartiles: (q1, median, q3) of the samples, what the dashboard
shows of them (samples themselves stay in the record); se: the value's own
standard error in logs where the record gives one (Point.se). Series built from the
lines are the ones build_series makes from the records (group() is shared),
but for Point.samples, which stays empty: tests/test_summary.py compares the
tables and statuses byte for byte.
"""

from __future__ import annotations

import math
import statistics
from datetime import date, datetime
from operator import add, itemgetter
from typing import Any, Iterable, Mapping

from bench.analyse import host
from bench.analyse.series import (MEMORY_METRICS, METRICS, PROTOCOL_1, VS_NATIVE, VS_REF, Columns, Failure, Point,
                                  Points, Series, SeriesKey, _native_state, _reference_state, derived_results, env_fingerprint,
                                  is_headline, memory_state, metric_of, native_results, protocol_of, record_state,
                                  reference_results)
from bench.records.history import FUTURE
from bench.records.newest import newness as newness_of
from bench.records.record import RunRecord, format_time, parse_time

KINDS = ("headline", "metric", "reference")
_OTHER = tuple(m for m in METRICS if m not in MEMORY_METRICS)


def kind_of(mode: str) -> str:
    """headline | metric | reference: which of table_series / metric_series /
    reference_series and native_series (the table's ratio rows) holds it."""
    if is_headline(mode):
        return "headline"
    return "reference" if metric_of(mode) in (VS_REF, VS_NATIVE) else "metric"


def summary_line(rec: RunRecord, path: str) -> dict[str, Any]:
    """The summary's line for `rec`, stored at `path` (runs/...)."""
    run = rec.data["run"]
    line: dict[str, Any] = {
        "path": path, "started_at": run["started_at"], "run_night": "night" in run,
        "night": rec.night.isoformat(), "attempt": rec.attempt, "run_id": rec.run_id,
        "backend": rec.backend, "device": rec.device, "nightly": rec.is_nightly, "setting": _setting(run),
    }
    if not rec.is_nightly:
        return line  # never a point; covered all the same
    env = rec.environment
    keras_commit = env.get("keras_commit")
    reading = host.reading(rec.data)
    states: list[tuple] = []

    def index(state: tuple) -> int:
        if state not in states:
            states.append(state)
        return states.index(state)

    rows = []
    groups = ((rec.results, record_state), (derived_results(rec, _OTHER), record_state),
              (derived_results(rec, MEMORY_METRICS), memory_state), (reference_results(rec), _reference_state),
              (native_results(rec), _native_state))
    for results, state in groups:
        if not results:
            continue
        at = index(state(rec))
        for r in results:
            err = r.error
            rows.append([r.model, r.mode, r.status, float(r.value) if r.status == "ok" else None, r.unit,
                         r.better, at, _quartiles(r.samples) if r.status == "ok" else None,
                         err.kind if err else None, err.message if err else None,
                         r.se if r.status == "ok" else None])
    line.update({
        "keras_version": rec.keras_version, "url": rec.url,
        "keras_commit": keras_commit if isinstance(keras_commit, str) and keras_commit else None,
        "env": [list(kv) for kv in env_fingerprint(env)], "host": list(reading) if reading else None,
        "states": [[list(kv) for kv in s] for s in states], "rows": rows,
    })
    return line


def _setting(run: Mapping[str, Any]) -> dict:
    """What `bench compare` matches a head's nights on (compare.baseline.setting
    reads it): run.protocol's name and version and run.ab's mode, as they are."""
    out: dict[str, Any] = {}
    for block, names in (("protocol", ("name", "version")), ("ab", ("mode",))):
        part = run.get(block)
        if isinstance(part, Mapping):
            out[block] = {n: part[n] for n in names if n in part}
    return out


def _quartiles(samples) -> list[float] | None:
    q = quartiles(samples)
    return list(q) if q else None


def quartiles(samples) -> tuple[float, float, float] | None:
    """(q1, median, q3) of `samples` to six significant digits (far below
    run-to-run noise; what the dashboard shows of them), None under 2 samples."""
    if len(samples) < 2:
        return None
    # Taken on samples over their largest: quantiles interpolate (a * 3 + b) / 4,
    # which overflows to inf near the float maximum, and inf is not JSON. The
    # record contract bounds samples (1e15); this keeps the summary and the site safe anyway.
    scale = max(samples)
    if not (math.isfinite(scale) and scale > 0):
        return None
    return tuple(float(f"{q * scale:.6g}")  # type: ignore[return-value]
                 for q in statistics.quantiles([x / scale for x in samples], n=4))


def read_lines(lines: Iterable[Mapping[str, Any]], source: str, latest: datetime) -> tuple[list, list[str]]:
    """(lines of the records read, oldest first, as load_history orders them; one
    problem line per file it would skip, worded as it words them). `source`:
    the data folder as given; `latest`: now plus the publish gate's allowance."""
    kept, problems = [], []
    nights: dict[str, date] = {}  # a night's 25 records parse it once
    times: dict[str, datetime] = {}  # and its run's start, mostly: one object, its hash worked out once
    folder = f"{source.rstrip('/')}/" if source else ""
    for line in lines:
        where = folder + line["path"]
        if "skipped" in line:
            problems.append(f"skipped {where}: {line['skipped']}")
            continue
        text = line["started_at"]
        t = times.get(text) if isinstance(text, str) else None
        if t is None:
            t = parse_time(text)
            times[text] = t
        night = nights.get(line["night"]) or nights.setdefault(line["night"], date.fromisoformat(line["night"]))
        if t > latest or night > latest.date():
            dated = line["night"] if line["run_night"] else line["started_at"]
            problems.append(f"skipped {where}: dated {dated}, after {format_time(latest)} "
                            f"({FUTURE.total_seconds() / 3600:g} h from now); "
                            "expected a record of a past run")
            continue
        kept.append((t, line["attempt"], where, line))
    kept.sort(key=lambda x: x[:3])
    return [(t, line) for t, _, _, line in kept], problems


def series_from_lines(lines: Iterable[tuple[datetime, Mapping[str, Any]]], kinds: Iterable[str] = KINDS,
                      speed: bool = True) -> dict[SeriesKey, Series]:
    """The series of `kinds` (KINDS), sorted by key, from read_lines' lines;
    `speed`: headline points carry the host reading (as table_series and
    all_series ask build_series). Metric and vs-ref series without points are
    left out, as metric_series and reference_series leave them out. A series'
    points are made when first read (series.Points).

    series.group's rule, written out for the lines: per night the newest row
    wins (is_newer: started_at, then attempt), failures and skips are kept
    oldest first, a series' unit and direction are its last ok row's, and
    only the newest unit's points are kept. Written out because it runs once
    per row (365,000 at ten years x 100 series): a generator of entries and
    a Point-like object per row cost twice as much."""
    wanted = frozenset(kinds)
    acc: dict[SeriesKey, list] = {}
    won: list[tuple[datetime, Mapping[str, Any]]] = []  # the lines with a row that won its night, numbered
    days: dict[str, date] = {}
    kinds_of: dict[str, str] = {}
    for t, line in lines:
        if not line["nightly"]:
            continue
        night = days.get(line["night"]) or days.setdefault(line["night"], date.fromisoformat(line["night"]))
        # What _point reads later, checked here: a line of the wrong shape is
        # found while the reader can still say so and read the records.
        for field in _POINT_FIELDS:
            line[field]
        if not (isinstance(line["env"], list) and isinstance(line["states"], list)):
            raise TypeError(f"{line['path']}: env and states are not lists")
        protocols = number = None  # the line's states' protocols and its number in `won`, when an ok row wins
        attempt, backend, device = line["attempt"], line["backend"], line["device"]
        newness = (t, attempt)
        host = speed and bool(line["host"])
        for row in line["rows"]:
            if len(row) != _ROW_FIELDS:
                raise ValueError(f"{line['path']}: a row of {len(row)} fields; expected {_ROW_FIELDS}")
            mode = row[1]
            which = kinds_of.get(mode) or kinds_of.setdefault(mode, kind_of(mode))
            if which not in wanted:
                continue
            key = (backend, device, row[0], mode)
            a = acc.get(key)
            if a is None:
                # last seen, {night: row}, failures, skips, the row giving unit and better, first ok unit, units differ
                a = acc[key] = [t, {}, [], [], None, None, False]
            elif t > a[0]:
                a[0] = t
            if row[2] == "ok":
                if a[5] is None:
                    a[5] = row[4]
                elif row[4] != a[5]:
                    a[6] = True
                old = a[1].get(night)
                if old is None or newness > (old[1], old[2]):
                    if protocols is None:
                        protocols = [_protocol(s) for s in line["states"]]
                        number = len(won)
                        won.append((t, line))
                    a[1][night] = (night, t, attempt, row[4], row[3], protocols[row[6]], line, row,
                                   host and which == "headline", number, row[6])
                a[4] = row  # its unit and direction: the last ok row's
            else:
                (a[2] if row[2] == "failed" else a[3]).append(Failure(
                    t, attempt, line["run_id"], row[8] or "unsupported", row[9] or "", line["keras_version"],
                    line["url"]))
                if a[4] is None:
                    a[4] = row
    out, tuples, table = {}, {}, _Won(won)
    for key in sorted(acc):
        seen, nights, fails, skips, last, _, mixed = acc[key]
        unit, better = last[4], last[5]
        kept = sorted(nights.values(), key=_first)
        if kept:
            # as series.group: only the newest unit's points are charted
            unit = kept[-1][3]
            if mixed:
                kept = [r for r in kept if r[3] == unit]
        elif kind_of(key[3]) != "headline":
            continue
        out[key] = Series(key=key, unit=unit, better=better, points=_points(kept, tuples, table),
                          failures=tuple(sorted(fails, key=newness_of)),
                          skipped=tuple(sorted(skips, key=newness_of)), last_seen=seen)
    return out


_POINT_FIELDS = ("run_id", "keras_version", "url", "keras_commit", "host")
_ROW_FIELDS = 11  # the module docstring's row
_first = itemgetter(0)
_new = object.__new__


def _point(r: tuple, tuples: dict[int, tuple]) -> Point:
    """The Point of series_from_lines' row tuple: (night, started_at, attempt,
    unit, value, protocol, line, row, carries the host reading, the line's
    number in _Won, the row's state index). `tuples`: the
    line's env and states as tuples, by the id of their lists (which the lines
    keep alive), so a line's series share them as build_series' points do."""
    day, started_at, attempt, unit, value, protocol, line, row, host, _, _ = r
    reading = line["host"] if host else None
    env, state = line["env"], line["states"][row[6]]
    env = tuples.get(id(env)) or tuples.setdefault(id(env), tuple(tuple(kv) for kv in env))
    state = tuples.get(id(state)) or tuples.setdefault(id(state), tuple(tuple(kv) for kv in state))
    p = _new(Point)
    # Point's own __init__ sets each of its 15 frozen fields through
    # object.__setattr__; these values were checked when the record was
    # published. `protocol` is the cached property's value, worked out once a record.
    _set(p, "__dict__", {
        "day": day, "value": value, "started_at": started_at, "attempt": attempt, "run_id": line["run_id"],
        "keras_version": line["keras_version"], "url": line["url"], "samples": (), "unit": unit,
        "keras_commit": line["keras_commit"], "env": env, "state": state,
        "host": reading[1] if reading else None, "host_basis": reading[0] if reading else None,
        "se": row[10], "quartiles": tuple(row[7]) if row[7] else None, "protocol": protocol})
    return p


_set = object.__setattr__


def _points(rows: list[tuple], tuples: dict[int, tuple], won: "_Won") -> Points:
    # The rows transposed once (zip, in C): each row tuple is read once, where
    # a pass per field reads every one of them again (cold, at 3,650 a series).
    fields = list(zip(*rows)) if rows else [()] * 11
    return Points(lambda i: _point(rows[i], tuples), list(fields[4]), list(fields[5]),
                  lambda: _columns(fields, won))


class _Won:
    """What Columns reads of each line with a winning row, worked out once for
    all of them, a line at a time in their order, and found by the line's
    number (the row tuple's): reaching into the line's dict once per point
    instead cost 5 µs a point, 1.8 s for the site at ten years x 100 series
    (its memory is spread over 76 MB of parsed lines)."""

    def __init__(self, lines: list[tuple[datetime, Mapping[str, Any]]]):
        self._lines, self._fields = lines, None

    def fields(self) -> tuple[list, list, list[int], list, list | None]:
        """(run, env, first, states, host): of each line Columns.runs' tuple,
        the env as tuples, where its states begin in `states` (every line's
        states as tuples, one flat list: a list per line cost a cache miss a
        point), and the host reading or None; host is None when no line has one."""
        if self._fields is None:
            runs, envs, first, states, hosts = [], [], [], [], []
            # Equal values as one object: a night's records share their run, most
            # nights their environment, and the site indexes them by identity.
            same: dict = {}
            one = same.setdefault
            # A line whose env (or states) equals the line before's, as lists (one
            # comparison in C), takes that line's tuples: made and hashed once a
            # run of equal lines, not once a line (a night's records follow each other).
            env_list = states_list = env = made = None
            for t, line in self._lines:
                run = (t, line["attempt"], line["run_id"], line["keras_version"] or "", line["url"] or "")
                runs.append(one(run, run))
                if line["env"] != env_list:
                    env_list = line["env"]
                    env = tuple(map(tuple, env_list))
                    env = one(env, env)
                envs.append(env)
                first.append(len(states))
                if line["states"] != states_list:
                    states_list = line["states"]
                    made = [one(x, x) for x in (tuple(map(tuple, state)) for state in states_list)]
                states += made
                hosts.append(line["host"])
            self._fields = runs, envs, first, states, hosts if any(hosts) else None
        return self._fields


def _columns(fields: list[tuple], won: _Won) -> Columns:
    """The Columns of the points _point would make of the rows whose fields
    (zip(*rows)) are `fields`, made without them, from _Won's: a record's run,
    env and states are one object shared by its series' points."""
    days, _, _, _, values, protocols, _, _, carries, numbers, which = fields
    if not days:
        return Columns([], [], [], [], [], [], [], [])
    runs, envs, first, states, hosts = won.fields()
    if hosts is not None:
        readings = [hosts[n] if c else None for n, c in zip(numbers, carries)]
        seconds, bases = [x[1] if x else None for x in readings], [x[0] if x else None for x in readings]
    else:
        seconds, bases = [None] * len(days), [None] * len(days)
    return Columns(list(days), list(values), list(map(runs.__getitem__, numbers)),
                   list(map(states.__getitem__, map(add, map(first.__getitem__, numbers), which))),
                   list(map(envs.__getitem__, numbers)), seconds, bases, list(protocols))


def _protocol(state: list) -> str:
    """protocol_of of a state as the line holds it ([name, value] pairs), the last pair named so winning as in dict()."""
    found = PROTOCOL_1
    for name, value in state:
        if name == "protocol":
            found = value
    return found
