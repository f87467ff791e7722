"""Series and points (docs/DESIGN.md 'Points').

A series is (backend, device, model, mode). It has one point per UTC night: the
ok result of the newest nightly run for that night (newest started_at, then
highest attempt), so a workflow_dispatch rerun replaces that night's point. The
night is the record's run.night when it has one (a rerun after midnight for
last night), else the UTC date of started_at (RunRecord.night). Failures
are kept per series, not as points. Runs of another Keras (environment
.keras_source other than 'nightly') never make points.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from operator import attrgetter
from datetime import date, datetime
from typing import Callable, Iterable, Iterator, NamedTuple, Sequence

from bench.analyse import envsummary, host
from bench.records.extensions import reference_side
from bench.records.newest import is_newer, newness
from bench.records.record import ErrorInfo, Result, RunRecord

SeriesKey = tuple[str, str, str, str]  # backend, device, model, mode


@dataclass(frozen=True)
class Point:
    day: date
    value: float            # in the result's unit; see Series.better for direction
    started_at: datetime
    attempt: int
    run_id: str
    keras_version: str | None
    url: str | None
    samples: tuple[float, ...] = ()
    unit: str = "samples/s"
    keras_commit: str | None = None
    # What else ran that night, as sorted (name, value) pairs: backend
    # packages, driver, runner (env_fingerprint). The change window compares
    # them so that a backend release is not blamed on Keras.
    env: tuple[tuple[str, str], ...] = ()
    # That night's machine and software as text fields (bench.analyse.envsummary):
    # the dashboard's tooltip and its "what changed from the previous point".
    state: tuple[tuple[str, str], ...] = ()
    # The host's own speed that night: the record's median reference workload
    # in seconds (bench.analyse.host.reading), None before workers recorded it.
    host: float | None = None
    host_basis: str | None = None  # which worker reading `host` is (host.reading's basis)
    # The night's own standard error of log(value), where the record carries
    # one (a reference ratio's pairs); the status takes it as a noise floor.
    se: float | None = None
    # (q1, median, q3) of `samples` to 6 significant digits where the point was read
    # from the summary (bench/analyse/summarised.quartiles), which keeps these instead.
    quartiles: tuple[float, float, float] | None = None

    @cached_property  # protocol_start asks every point of a series, twice a command
    def protocol(self) -> str:
        """The measurement protocol, 'name vN' (run.protocol; records from
        before it existed were measured by protocol 1)."""
        return protocol_of(self.state)


PROTOCOL_1 = "single-process v1"


def protocol_of(state: Iterable[tuple[str, str]]) -> str:
    """The protocol named in a point's state (envsummary's fields), protocol 1 when none."""
    return dict(state).get("protocol", PROTOCOL_1)


def record_state(rec: RunRecord) -> tuple[tuple[str, str], ...]:
    """A record's machine and software as text fields: a headline point's `state`."""
    return envsummary.summary(rec.environment, rec.data.get("run"))


class Points(Sequence):
    """A series' points, oldest first, each made when first asked for (then
    kept): a ten-year series read from the summary has 3,650, and the status
    reads a few dozen of them. `values` and `protocols` are the points' own,
    as lists, for the readers that want every one (Series.values, protocol_start);
    `columns`, when given, makes the points' Columns without a Point (columns()).
    Immutable, and equal to the tuple of the same points."""

    __slots__ = ("_make", "_made", "values", "protocols", "_columns")

    def __init__(self, make: Callable[[int], Point], values: list[float], protocols: list[str],
                 columns: Callable[[], "Columns"] | None = None):
        if len(values) != len(protocols):
            raise ValueError(f"Points: {len(values)} values, {len(protocols)} protocols; expected as many")
        self._make, self._made = make, [None] * len(values)
        self.values, self.protocols, self._columns = values, protocols, columns

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(len(self))))
        n = len(self.values)
        j = i + n if i < 0 else i
        if not 0 <= j < n:
            raise IndexError(f"point {i} of {n}")
        p = self._made[j]
        if p is None:
            p = self._made[j] = self._make(j)
        return p

    def __iter__(self) -> Iterator[Point]:
        made = self._made
        for j, p in enumerate(made):
            yield p if p is not None else self[j]

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash(tuple(self))


class Columns(NamedTuple):
    """A series' points as columns, oldest first: one list per field, for the
    readers that want a field of every point (the site writes 361,000 points
    at ten years x 100 series; making each as a Point cost it 1.8 s).
    Equal lists, whether made from the points or, for a series read from the
    summary, straight from its lines (summarised.py), with the objects shared
    where a record's points share them (a run, an environment)."""
    days: list[date]
    values: list[float]
    # Each point's run: (started_at, attempt, run_id, keras_version or "",
    # url or ""); ascending is oldest first, as newness() orders runs.
    runs: list[tuple]
    states: list[tuple]       # Point.state
    envs: list[tuple]         # Point.env
    hosts: list[float | None]  # Point.host
    bases: list[str | None]    # Point.host_basis
    protocols: list[str]       # Point.protocol


def run_of(x) -> tuple:
    """A point's or failure's run as Columns.runs holds it."""
    return (x.started_at, x.attempt, x.run_id, x.keras_version or "", x.url or "")


def columns(points: Sequence[Point]) -> Columns:
    """The points' Columns: without a Point where `points` can make them so (Points from the summary)."""
    if isinstance(points, Points) and points._columns is not None:
        return points._columns()
    return Columns([p.day for p in points], [p.value for p in points], [run_of(p) for p in points],
                   [p.state for p in points], [p.env for p in points], [p.host for p in points],
                   [p.host_basis for p in points], [p.protocol for p in points])


def protocol_start(points: Sequence[Point]) -> int:
    """Index of the first of the newest points measured under the newest
    point's protocol: a protocol change moves the numbers by itself, so the
    status never compares across it (it would read as a Keras change)."""
    if isinstance(points, Points):  # the protocols as they are, no Point made
        protocols, i = points.protocols, len(points)
        while i > 0 and protocols[i - 1] == protocols[-1]:
            i -= 1
        return i
    i = len(points)
    while i > 0 and points[i - 1].protocol == points[-1].protocol:
        i -= 1
    return i


@dataclass(frozen=True)
class Failure:
    started_at: datetime
    attempt: int
    run_id: str
    kind: str
    message: str
    keras_version: str | None
    url: str | None


@dataclass(frozen=True)
class Series:
    key: SeriesKey
    unit: str
    better: str                      # 'bigger' or 'smaller'
    points: tuple[Point, ...]        # one per UTC night (RunRecord.night), oldest first
    failures: tuple[Failure, ...]    # oldest first
    skipped: tuple[Failure, ...]     # 'skipped' results (e.g. unsupported), oldest first
    last_seen: datetime              # newest run of any status in this series

    @property
    def backend(self) -> str:
        return self.key[0]

    @property
    def device(self) -> str:
        return self.key[1]

    @property
    def model(self) -> str:
        return self.key[2]

    @property
    def mode(self) -> str:
        return self.key[3]

    def values(self) -> list[float]:
        if isinstance(self.points, Points):
            return list(self.points.values)
        return [p.value for p in self.points]

    def latest_failed(self) -> bool:
        """The newest result is a failure newer than the newest point."""
        if not self.failures:
            return False
        f = self.failures[-1]
        if not self.points:
            return True
        p = self.points[-1]
        return is_newer(f, p)


# Keras itself is the suspect, not "another change": its packages are left out.
_KERAS_PACKAGES = {"keras", "keras-nightly", "keras_nightly"}


def env_fingerprint(environment) -> tuple[tuple[str, str], ...]:
    """The parts of a record's environment that can move a timing besides
    Keras: each backend package version, the driver and the runner. Missing
    or odd-typed fields are left out (old records lack some)."""
    out = {}
    versions = environment.get("backend_versions")
    if isinstance(versions, dict):
        for pkg, v in versions.items():
            if pkg not in _KERAS_PACKAGES and _text(v):
                out[str(pkg)] = _text(v)
    for field in ("driver", "runner"):
        if _text(environment.get(field)):
            out[field] = _text(environment.get(field))
    return tuple(sorted(out.items()))


def _text(v) -> str | None:
    return v if isinstance(v, str) and v else None


def build_series(records: Iterable[RunRecord],
                 results: Callable[[RunRecord], Iterable[Result]] = lambda rec: rec.results,
                 state: Callable[[RunRecord], tuple[tuple[str, str], ...]] | None = None,
                 speed: bool = False) -> dict[SeriesKey, Series]:
    """Group nightly records into series, sorted by key.

    `results` picks a record's results: the headline ones by default,
    `derived_results` for the metric series (see `metric_series`);
    `state` a point's environment text (default envsummary.summary);
    `speed`: the points carry the host reading (host.reading, ~25 µs a
    record of 30 workers), which only the headline's status note and `bench
    show` use: `table_series` and `all_series` ask for it."""
    return group(_entries(records, results, state or record_state, speed))


_day = attrgetter("day")

# What group() takes: (key, status, a Point when ok else a Failure, unit, better),
# in the records' order (history.load_history's: oldest first).
Entry = tuple[SeriesKey, str, "Point | Failure", str, str]


def _entries(records: Iterable[RunRecord], results, state, speed: bool) -> Iterator[Entry]:
    for rec in records:
        if not rec.is_nightly:
            continue
        t, attempt = rec.started_at, rec.attempt
        point_state = state(rec)
        by, reading = (host.reading(rec.data) if speed else None) or (None, None)
        for r in results(rec):
            key = (rec.backend, rec.device, r.model, r.mode)
            if r.status == "ok":
                yield key, "ok", Point(rec.night, float(r.value), t, attempt, rec.run_id,
                                       rec.keras_version, rec.url, tuple(r.samples), r.unit,
                                       keras_commit=_text(rec.environment.get("keras_commit")),
                                       env=env_fingerprint(rec.environment), state=point_state,
                                       host=reading, host_basis=by, se=r.se), r.unit, r.better
            else:
                yield key, r.status, Failure(t, attempt, rec.run_id, r.error.kind if r.error else "unsupported",
                                             r.error.message if r.error else "", rec.keras_version,
                                             rec.url), r.unit, r.better


def group(entries: Iterable[Entry], points: Callable[[list], Sequence[Point]] = tuple) -> dict[SeriesKey, Series]:
    """Series from (key, status, point or failure, unit, better) in record
    order: per night the newest point wins (is_newer), failures and skips are
    kept oldest first, a series' unit and direction are its last ok result's.
    An ok entry's item needs only day, started_at, attempt and unit;
    `points` makes a series' points from the winning items, oldest first."""
    ok: dict[SeriesKey, dict[date, Point]] = {}
    fails: dict[SeriesKey, list[Failure]] = {}
    skips: dict[SeriesKey, list[Failure]] = {}
    meta: dict[SeriesKey, tuple[str, str]] = {}
    seen: dict[SeriesKey, datetime] = {}
    for key, status, item, unit, better in entries:
        t = item.started_at
        last = seen.get(key)
        if last is None or t > last:
            seen[key] = t
        if status == "ok":
            days = ok.setdefault(key, {})
            old = days.get(item.day)
            if old is None or is_newer(item, old):
                days[item.day] = item
            meta[key] = (unit, better)
        else:
            (fails if status == "failed" else skips).setdefault(key, []).append(item)
            meta.setdefault(key, (unit, better))
    out = {}
    for key in sorted(seen):
        unit, better = meta[key]
        kept = sorted(ok.get(key, {}).values(), key=_day)
        if kept:
            # A bench that changed its unit (MiB/s -> GiB/s in a real history)
            # would read as a huge step: chart only the newest unit's points.
            unit = kept[-1].unit
            if any(p.unit != unit for p in kept):
                kept = [p for p in kept if p.unit == unit]
        out[key] = Series(
            key=key, unit=unit, better=better,
            points=points(kept),
            failures=tuple(sorted(fails.get(key, []), key=newness)),
            skipped=tuple(sorted(skips.get(key, []), key=newness)),
            last_seen=seen[key],
        )
    return out


def parse_key(text: str) -> SeriesKey:
    """'jax/rtx-5070-ti/cnn/train' -> a SeriesKey; anything else is refused
    with the text and the expected form."""
    parts = text.split("/")
    if len(parts) != 4 or not all(parts):
        raise ValueError(f"series {text!r}; expected BACKEND/DEVICE/MODEL/MODE, e.g. jax/rtx-5070-ti/cnn/train")
    return parts[0], parts[1], parts[2], parts[3]


# -- metric series (issue 13) -------------------------------------------------
# Besides its headline (samples/s, or the p50 in ms for mode "latency"), a
# result can carry a latency tail, peak memory and energy. Each becomes a
# series of its own, keyed (backend, device, model, "<mode>.<metric>"), so the
# headline series keep their identity and every tool that takes a SeriesKey
# (table, status, plots, site) handles them unchanged. All are smaller-better.
# metric -> (unit, reads the value from a raw result; None when absent)
METRICS: dict[str, tuple[str, Callable[[dict], object]]] = {
    "p99": ("ms", lambda r: _get(r, "latency", "p99_ms")),
    "host-memory": ("bytes", lambda r: _get(r, "memory", "host_peak_bytes")),
    "device-memory": ("bytes", lambda r: _get(r, "memory", "device_peak_bytes")),
    "energy": ("J/1000 samples", lambda r: _get(r, "energy", "joules_per_1000_samples")),
}
# What the dashboard's metric filter groups series by.
GROUPS = {"p99": "latency", "host-memory": "memory", "device-memory": "memory", "energy": "energy",
          "vs-ref": "reference", "vs-native": "native"}


def _get(r: dict, block: str, name: str):
    b = r.get(block)
    return b.get(name) if isinstance(b, dict) else None


def _usable(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < float("inf")


def metric_of(mode: str) -> str:
    """The metric a series' mode names: 'throughput' (train, predict),
    'p50' (latency), or the suffix of a derived mode ('latency.p99' -> 'p99')."""
    if "." in mode:
        return mode.rsplit(".", 1)[1]
    return "p50" if mode == "latency" else "throughput"


def is_headline(mode: str) -> bool:
    """A record's own result (train, predict, latency), not a derived metric series."""
    return metric_of(mode) in ("throughput", "p50")


def metric_group(mode: str) -> str:
    """throughput | latency | memory | energy | reference: the dashboard's sections."""
    m = metric_of(mode)
    return "latency" if m == "p50" else GROUPS.get(m, "throughput")


def derived_results(rec: RunRecord, metrics: Iterable[str] = tuple(METRICS)) -> list[Result]:
    """The metric results of one record: an ok result yields one per metric it
    carries (a missing, unavailable or malformed figure yields none); a failed
    or skipped one yields the same outcome for every metric, so a metric
    series shows the failure too (series that never had a point are dropped
    by `metric_series`)."""
    out = []
    for r in rec.data["results"]:
        for metric in metrics:
            unit, read = METRICS[metric]
            if metric == "p99" and r.get("mode") != "latency":
                continue
            mode = f"{r['mode']}.{metric}"
            if r.get("status") == "ok":
                v = read(r)
                if _usable(v):
                    out.append(Result(r["model"], mode, "ok", float(v), unit, "smaller"))
            else:
                out.append(_not_ok(r, mode, unit, "smaller"))
    return out


def _not_ok(r: dict, mode: str, unit: str, better: str) -> Result:
    """A failed or skipped result, carried into a derived series as it is."""
    err = r.get("error")
    return Result(r["model"], mode, r["status"], None, unit, better,
                  error=ErrorInfo(err["kind"], err["message"]) if err else None)


# How a result's peak memory came from its workers (run.protocol.memory,
# bench/measure/schedule.py) is part of the memory series' protocol: a new way
# moves the figure by itself, so it starts a new baseline for them alone.
MEMORY_METRICS = ("host-memory", "device-memory")


def metric_series(records: Iterable[RunRecord]) -> dict[SeriesKey, Series]:
    """The derived series (latency p99, host/device peak memory, energy) that have points."""
    records = list(records)
    other = tuple(m for m in METRICS if m not in MEMORY_METRICS)
    both = {**build_series(records, lambda rec: derived_results(rec, other)),
            **build_series(records, lambda rec: derived_results(rec, MEMORY_METRICS), memory_state)}
    return {k: both[k] for k in sorted(both) if both[k].points}


def memory_state(rec: RunRecord) -> tuple[tuple[str, str], ...]:
    """The point's environment text, its protocol naming how peak memory was taken."""
    how = _get(rec.data.get("run") or {}, "protocol", "memory")
    return protocol_state(rec, lambda state: f", memory {how}" if isinstance(how, str) and how else "")


def protocol_state(rec: RunRecord, suffix: Callable[[dict], str]) -> tuple[tuple[str, str], ...]:
    """The point's environment text (envsummary.summary) with `suffix(summary)`
    after its protocol: a series whose figure a detail of how it was measured
    moves (how peak memory was taken, the reference build) starts a new
    baseline when that detail changes, since a new protocol reads New."""
    state = dict(envsummary.summary(rec.environment, rec.data.get("run")))
    extra = suffix(state)
    if extra:
        state["protocol"] = f"{state.get('protocol', PROTOCOL_1)}{extra}"
    return tuple(sorted(state.items()))


# -- ratio to the reference build (bench run --reference) ---------------------
# A nightly run beside a frozen Keras build carries, per result, the median
# ratio of its workers to the reference's, pair by pair (bench/measure/reference.py):
# a slow host slows both, so the ratio holds still where samples/s drift. Each
# becomes the series (backend, device, model, "<mode>.vs-ref"), better in the
# mode's own direction. A new reference build is a new baseline: its version
# is part of the points' protocol, so the status never reads the bump as a
# Keras change (protocol_start).
VS_REF = "vs-ref"
VS_REF_UNIT = "x reference"


def reference_results(rec: RunRecord) -> list[Result]:
    """The vs-ref results of a record run with --reference (none otherwise): an
    ok result with a usable `reference` block yields its ratio; a failed one
    its failure, so the ratio series shows it too; an ok one without a block
    (the reference failed there) yields nothing that night."""
    if reference_side(rec.data) is None:
        return []
    out = []
    for r in rec.data["results"]:
        mode, better = f"{r['mode']}.{VS_REF}", r.get("better", "bigger")
        if r.get("status") == "ok":
            ratio, se = _get(r, "reference", "ratio"), _get(r, "reference", "log_se")
            if _usable(ratio):
                out.append(Result(r["model"], mode, "ok", float(ratio), VS_REF_UNIT, better,
                                  se=float(se) if _usable(se) else None))
        elif r.get("status") == "failed":
            out.append(_not_ok(r, mode, VS_REF_UNIT, better))
    return out


def _reference_state(rec: RunRecord) -> tuple[tuple[str, str], ...]:
    """The point's environment text, its protocol naming the reference build."""
    return protocol_state(rec, lambda state: f" vs reference {state.get('reference', 'unknown')}")


def reference_series(records: Iterable[RunRecord]) -> dict[SeriesKey, Series]:
    """The "<mode>.vs-ref" series that have points (no host reading: the ratio's
    two sides share the host)."""
    return {k: s for k, s in build_series(records, reference_results, _reference_state).items() if s.points}


# -- Keras against native code (bench run with a device's `native: true`) -------
# A result timed beside the backend's native code (bench/measure/native.py)
# carries `native.ratio`: Keras seconds / native seconds for the same steps,
# pair by pair in one worker, the median over its workers. Both sides of a pair
# ran on the host in the same state, so the ratio holds still where samples/s
# drift, and a Keras change that adds work per step raises it whatever the host
# does. It becomes the series (backend, device, model, "<mode>.vs-native"),
# a ratio without unit, smaller better (1.25: Keras takes 25 % longer than
# native code). The native code's version (run.protocol.native) is part of the
# points' protocol, so a new native implementation starts a new baseline.
VS_NATIVE = "vs-native"
VS_NATIVE_UNIT = "x native time"


def native_results(rec: RunRecord) -> list[Result]:
    """The vs-native results of a record timed against native code (none
    otherwise): an ok result with a usable `native.ratio` yields it; an ok one
    whose native block holds an error (the native check disagreed with Keras:
    `quality`; native code crashed) yields a failed point of that kind, never
    a blank; a failed result its own failure. A backend without native code
    (`native.unavailable`) makes no series: its results carry the reason."""
    blocks = [r.get("native") for r in rec.data["results"]]
    if not any(isinstance(b, dict) and ("ratio" in b or "error" in b) for b in blocks):
        return []
    out = []
    for r, b in zip(rec.data["results"], blocks):
        mode = f"{r['mode']}.{VS_NATIVE}"
        if r.get("status") == "ok" and isinstance(b, dict):
            ratio, se, err = b.get("ratio"), b.get("log_se"), b.get("error")
            if _usable(ratio):
                out.append(Result(r["model"], mode, "ok", float(ratio), VS_NATIVE_UNIT, "smaller",
                                  se=float(se) if _usable(se) else None))
            elif isinstance(err, dict) and isinstance(err.get("kind"), str):
                out.append(Result(r["model"], mode, "failed", None, VS_NATIVE_UNIT, "smaller",
                                  error=ErrorInfo(err["kind"], str(err.get("message", "")))))
        elif r.get("status") == "failed" and r.get("mode") in ("train", "predict"):
            out.append(_not_ok(r, mode, VS_NATIVE_UNIT, "smaller"))
    return out


def _native_state(rec: RunRecord) -> tuple[tuple[str, str], ...]:
    """The point's environment text, its protocol naming the native code's version."""
    how = _get(rec.data.get("run") or {}, "protocol", "native")
    version = how.get("version") if isinstance(how, dict) else None
    return protocol_state(rec, lambda state: f" vs native v{version if version is not None else '?'}")


def native_series(records: Iterable[RunRecord]) -> dict[SeriesKey, Series]:
    """The "<mode>.vs-native" series that have points (no host reading: both
    sides of every pair shared the host)."""
    return {k: s for k, s in build_series(records, native_results, _native_state).items() if s.points}


def in_table(mode: str) -> bool:
    """Rows of the status table (`bench report`, the README): the headline
    series and their ratios to a reference build and to native code; the
    other metric series are on the dashboard."""
    return is_headline(mode) or metric_of(mode) in (VS_REF, VS_NATIVE)


def table_series(records: Iterable[RunRecord]) -> dict[SeriesKey, Series]:
    """The headline, vs-ref and vs-native series, sorted by key (`bench report`'s input)."""
    records = list(records)
    both = {**build_series(records, speed=True), **reference_series(records), **native_series(records)}
    return {k: both[k] for k in sorted(both)}


def all_series(records: Iterable[RunRecord]) -> dict[SeriesKey, Series]:
    """Headline, metric, vs-ref and vs-native series together, sorted by key (the dashboard's input)."""
    records = list(records)
    both = {**build_series(records, speed=True), **metric_series(records), **reference_series(records),
            **native_series(records)}
    return {k: both[k] for k in sorted(both)}
