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
from typing import Any, Iterable, Iterator, Mapping, NamedTuple

from bench.analyse import host
from bench.analyse.series import (MEMORY_METRICS, METRICS, VS_NATIVE, VS_REF, Entry, Failure, Point, Points, Series,
                                  SeriesKey, _native_state, _reference_state, derived_results, env_fingerprint, group,
                                  is_headline, memory_state, metric_of, native_results, protocol_of, record_state,
                                  reference_results)
from bench.records.history import FUTURE
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
    for line in lines:
        where = f"{source.rstrip('/')}/{line['path']}" if source else line["path"]
        if "skipped" in line:
            problems.append(f"skipped {where}: {line['skipped']}")
            continue
        t = parse_time(line["started_at"])
        if t > latest or date.fromisoformat(line["night"]) > latest.date():
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
    points are made when first read (series.Points)."""
    wanted = frozenset(kinds)
    out = group(_entries(lines, wanted, speed), _points)
    return {k: s for k, s in out.items() if s.points or kind_of(k[3]) == "headline"}


class _Row(NamedTuple):
    """What group() reads of an ok row, and what makes its Point."""
    day: date
    started_at: datetime
    attempt: int
    unit: str
    value: float
    protocol: str
    fields: dict     # the record's Point fields (series.Point's names)
    state: tuple
    quartiles: list | None
    se: float | None


_new = object.__new__


def _point(row: _Row) -> Point:
    p = _new(Point)
    # Point's own __init__ sets each of its 15 frozen fields through
    # object.__setattr__; these values were checked when the record was
    # published. `protocol` is the cached property's value, worked out once a record.
    p.__dict__.update(row.fields, value=row.value, unit=row.unit, state=row.state, protocol=row.protocol,
                      quartiles=tuple(row.quartiles) if row.quartiles else None, se=row.se)
    return p


def _points(rows: list[_Row]) -> Points:
    return Points(lambda i: _point(rows[i]), [r.value for r in rows], [r.protocol for r in rows])


def _entries(lines, wanted: frozenset, speed: bool) -> Iterator[Entry]:
    days: dict[str, date] = {}
    kinds: dict[str, str] = {}
    for t, line in lines:
        if not line["nightly"]:
            continue
        night = days.get(line["night"]) or days.setdefault(line["night"], date.fromisoformat(line["night"]))
        states = [tuple(tuple(kv) for kv in s) for s in line["states"]]
        protocols = [protocol_of(s) for s in states]
        reading = line["host"] if speed else None
        attempt, run_id, version, url = line["attempt"], line["run_id"], line["keras_version"], line["url"]
        base = {"day": night, "started_at": t, "attempt": attempt, "run_id": run_id,
                "keras_version": version, "url": url, "samples": (),
                "keras_commit": line["keras_commit"], "env": tuple(tuple(kv) for kv in line["env"]),
                "host": None, "host_basis": None}
        headline = {**base, "host": reading[1], "host_basis": reading[0]} if reading else base
        backend, device = line["backend"], line["device"]
        for model, mode, status, value, unit, better, at, quartiles, kind, message, se in line["rows"]:
            which = kinds.get(mode) or kinds.setdefault(mode, kind_of(mode))
            if which not in wanted:
                continue
            if status == "ok":
                yield (backend, device, model, mode), status, _Row(
                    night, t, attempt, unit, value, protocols[at], headline if which == "headline" else base,
                    states[at], quartiles, se), unit, better
            else:
                yield (backend, device, model, mode), status, Failure(
                    t, attempt, run_id, kind or "unsupported", message or "", version, url), unit, better
