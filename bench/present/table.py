"""The status table as rows: one per series, sorted by backend, device, model, mode.

Each Row holds values, not text (formatting is the renderer's job), so the
markdown, HTML and JSON outputs all say the same thing.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, replace
from typing import Any, Mapping

from bench.config import Trends
from bench.records.record import format_time
from bench.analyse import host
from bench.analyse.series import VS_REF, Failure, Series, SeriesKey
from bench.analyse.trends import BASELINE, STATUSES, Change, assess, band, delta_prev, watched
from bench.analyse.triage import triaged
from bench.analyse.triangulate import Origin, triangulate
from bench.analyse.window import Window, change_window
from bench.analyse.profile import Lookup, ProfileDiff, window_diff
from bench.records.triage import Mark
from bench.present.format import sparkline


@dataclass(frozen=True)
class Row:
    """One series. latest: newest point's value in `unit` (None without
    points); delta_prev: latest/previous - 1 (None with < 2 points); trend:
    the sparkline; runs: number of points (nights); better: 'bigger' or
    'smaller'; change: the detected change point (Regressed/Faster);
    last_failure: the newest failure, if any; level: the recent level;
    window: the nightlies around the change (Regressed/Faster); watch:
    (level, relative) for a Watch row, what the newest two nights are off
    from; delta_off: 'worse' | 'better' when Δ PREV is beyond the series'
    noise band (in the series' direction), None when within it; host: how
    much slower the host ran on the nights the note speaks of than before
    (bench.analyse.host.shift; None when unknown or not spoken of);
    ratio_status: on a headline row whose device runs a reference build,
    the status of its '<mode>.vs-ref' row, which alerts in its place
    (alerting); None elsewhere; origin: whose change it is
    (bench.analyse.triangulate; Regressed/Faster); mark: a maintainer's
    triage mark on the change (bench.analyse.triage); ops: which ops moved
    across the change's window (bench.analyse.profile; Regressed/Faster, where
    both nights hold a profile)."""

    backend: str
    device: str
    model: str
    mode: str
    latest: float | None
    delta_prev: float | None
    trend: str
    runs: int
    status: str
    unit: str
    better: str
    change: Change | None
    last_failure: Failure | None
    level: float | None = None
    window: Window | None = None
    watch: tuple[float, float] | None = None
    delta_off: str | None = None
    host: float | None = None
    ratio_status: str | None = None
    origin: Origin | None = None
    mark: Mark | None = None
    ops: ProfileDiff | None = None

    def __post_init__(self):
        if self.delta_off not in (None, "worse", "better"):
            raise ValueError(f"Row {self.key}: delta_off {self.delta_off!r}; expected 'worse', 'better' or None")
        if self.status not in STATUSES:
            raise ValueError(f"Row {self.key}: status {self.status!r}; expected one of {', '.join(STATUSES)}")
        if self.ratio_status not in STATUSES + (None,):
            raise ValueError(f"Row {self.key}: ratio_status {self.ratio_status!r}; "
                             f"expected one of {', '.join(STATUSES)} or None")
        if self.runs < 0:
            raise ValueError(f"Row {self.key}: runs {self.runs!r}; expected a count >= 0")
        if self.better not in ("bigger", "smaller"):
            raise ValueError(f"Row {self.key}: better {self.better!r}; expected 'bigger' or 'smaller'")

    @property
    def key(self) -> SeriesKey:
        return (self.backend, self.device, self.model, self.mode)


def build_rows(series: Mapping[SeriesKey, Series], trends: Trends, marks: tuple[Mark, ...] = (),
               profiles: Lookup | None = None) -> list[Row]:
    """Assess every series against the newest run anywhere in the data; each
    change is triangulated against the others and read with its triage mark;
    with `profiles` (bench.analyse.profile.records_lookup), a Regressed or
    Faster row's window says which ops moved."""
    if not series:
        return []
    newest_run = max(s.last_seen for s in series.values())
    assessed = {key: assess(s, newest_run, trends) for key, s in series.items()}
    origins = triangulate(series, assessed)
    rows = []
    for key in sorted(series):
        s = series[key]
        a, mark = triaged(s, assessed[key], marks)
        values = s.values()
        off = _delta_off(values, s.better, band(a.noise, trends))
        rows.append(Row(
            backend=s.backend, device=s.device, model=s.model, mode=s.mode,
            latest=values[-1] if values else None, delta_prev=delta_prev(values),
            trend=sparkline(values, trends.sparkline_points, _levels(a), band(a.noise, trends)),
            runs=len(values), status=a.status,
            unit=s.unit, better=s.better, change=a.change,
            last_failure=_last_problem(s, a.status), level=a.level,
            window=change_window(s, a.change),
            watch=watched(values, trends) if a.status == "Watch" else None,
            delta_off=off, host=_host_shift(s, a, values, off),
            origin=origins.get(key) if a.change is not None else None, mark=mark,
            ops=window_diff(s, a.change, profiles) if a.status in ("Regressed", "Faster") else None,
        ))
    return _with_ratio_status(rows)


def _with_ratio_status(rows: list[Row]) -> list[Row]:
    """Each headline row with a '<mode>.vs-ref' row beside it gets that row's
    status as ratio_status: the ratio to the reference build holds still where
    samples/s move with the host, so it is the series that alerts."""
    status = {r.key: r.status for r in rows}
    return [replace(r, ratio_status=status.get((r.backend, r.device, r.model, f"{r.mode}.{VS_REF}")))
            for r in rows]


def alerting(rows: list[Row]) -> list[Row]:
    """The rows whose status alerts (`bench alert`, the summary line,
    `report --fail-on`): every row but a headline whose ratio row alerts for it."""
    return [r for r in rows if r.ratio_status is None]


def deciding_status(r: Row) -> str:
    """The status that stands for a row (`report --status`): its ratio row's where it has one."""
    return r.ratio_status or r.status


# What needs a look first: broken, slower, maybe slower; then the rest.
STATUS_ORDER = ("Failed", "Regressed", "Watch", "Stale", "Faster", "New", "Steady", "Skipped")
SORTS = ("status", "name")


def sort_rows(rows: list[Row], by: str = "status") -> list[Row]:
    """by 'status' (STATUS_ORDER, then backend, device, model, mode) or
    'name' (the key alone, the table's old order)."""
    if by not in SORTS:
        raise ValueError(f"sort {by!r}; expected one of {', '.join(SORTS)}")
    if by == "name":
        return sorted(rows, key=lambda r: r.key)
    return sorted(rows, key=lambda r: (STATUS_ORDER.index(r.status), r.key))


def summary(rows: list[Row]) -> str:
    """'1 Regressed, 1 Watch, 22 Steady': the count per status in STATUS_ORDER
    over the rows that alert (alerting), then, as context, the samples/s rows
    whose ratio to a reference build alerts for them."""
    text = _counts(alerting(rows)) or "no series"
    context = [r for r in rows if r.ratio_status is not None]
    return f"{text} (samples/s beside a reference build: {_counts(context)})" if context else text


def _counts(rows: list[Row]) -> str:
    counts = {s: sum(r.status == s for r in rows) for s in STATUS_ORDER}
    return ", ".join(f"{n} {s}" for s, n in counts.items() if n)


def _levels(a) -> tuple[float, ...]:
    """The levels noise is drawn flat at: before and after a change, else the level."""
    if a.change is not None:
        return (a.change.before, a.change.after)
    return (a.level,) if a.level is not None else ()


def _delta_off(values, better: str, half_band: float) -> str | None:
    if len(values) < 2:
        return None
    step = math.log(values[-1] / values[-2])
    if abs(step) <= half_band:
        return None
    return "better" if (step > 0) == (better == "bigger") else "worse"


def back_at_level(latest: float | None, delta_prev: float | None, level: float | None) -> bool:
    """The newest night is nearer the level than the night before it: a
    Steady row's off night was the previous one, not the newest."""
    if latest is None or delta_prev is None or level is None:
        return False
    prev = latest / (1 + delta_prev)
    return abs(math.log(latest / level)) < abs(math.log(prev / level))


def _host_shift(s: Series, a, values: list[float], off: str | None) -> float | None:
    """What the host did on the nights the note speaks of, against the nights
    before them: since a change, a Watch row's newest two, a Steady row's off
    night. None where the points carry no host reading (series.build_series's
    `speed`: the headline series of table_series and all_series)."""
    n = len(s.points)
    if n < 2:
        return None
    if a.status in ("Regressed", "Faster") and a.change is not None:
        start, end = a.change.index, None
    elif a.status == "Watch":
        start, end = n - 2, None
    elif a.status == "Steady" and off:
        start, end = (n - 2, n - 1) if back_at_level(values[-1], delta_prev(values), a.level) else (n - 1, None)
    else:
        return None
    # shift reads the nights from `start - BASELINE` on: only their points are made
    lo = max(0, start - BASELINE)
    return host.shift(host.readings(s.points[lo:], start - lo), start - lo, None if end is None else end - lo,
                      before=BASELINE)


def _last_problem(s: Series, status: str) -> Failure | None:
    if s.failures:
        return s.failures[-1]
    return s.skipped[-1] if status == "Skipped" and s.skipped else None


def rows_to_json(rows: list[Row]) -> list[dict[str, Any]]:
    """docs/DESIGN.md's keys (backend, device, model, mode, latest, delta_prev,
    trend, runs, status), then unit, better, change, last_failure."""
    return [_row_json(r) for r in rows]


def _row_json(r: Row) -> dict[str, Any]:
    change = None
    if r.change is not None:
        change = {"index": r.change.index, "before": r.change.before, "after": r.change.after,
                  "relative": r.change.relative}
    failure = None
    if r.last_failure is not None:
        f = r.last_failure
        failure = {"kind": f.kind, "message": f.message, "started_at": format_time(f.started_at),
                   "run_id": f.run_id, "attempt": f.attempt, "url": f.url}
    return {
        "backend": r.backend, "device": r.device, "model": r.model, "mode": r.mode,
        "latest": r.latest, "delta_prev": r.delta_prev, "trend": r.trend, "runs": r.runs,
        "status": r.status,
        "unit": r.unit, "better": r.better, "level": r.level, "change": change, "last_failure": failure,
        "window": r.window.to_json() if r.window is not None else None,
        "watch": {"level": r.watch[0], "relative": r.watch[1]} if r.watch is not None else None,
        "delta_off": r.delta_off, "host": r.host, "ratio_status": r.ratio_status,
        "origin": r.origin.to_json() if r.origin is not None else None,
        "mark": dataclasses.asdict(r.mark) if r.mark is not None else None,
        "ops": r.ops.to_json() if r.ops is not None else None,
    }
