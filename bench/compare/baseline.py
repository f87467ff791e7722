"""The baseline of a comparison: what the head is measured against.

Two kinds, chosen by what --base names:
- a data folder (one holding runs/): per series, the last N nights (points)
  of the nightly history. Their values are the nightly medians, so the test
  sees the night-to-night spread, deep shared-GPU dips included; their repeat
  samples are kept as well, for when there are too few nights for a test.
- run record files (or a folder of them without runs/): e.g. a run of the
  merge-base on the same runner. All their ok samples, pooled per series,
  whatever their event or keras_source.

Besides: per series, the one-value-per-run metrics (latency p99, peak
memory; bench.compare.extras) of the same nights or records, and for a
single base record its workers' figures and A/B side, to pair with the head;
per target, the host readings of those nights or records
(bench.compare.hostshift).

Nothing here writes; a bad file in a data folder is skipped with a warning
(bench.records.history), a bad record named explicitly stops the command.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Sequence, TextIO

from bench.records.newest import is_newer
from bench.records.history import STDERR, load_history
from bench.records.record import RunRecord
from bench.analyse.series import Series, SeriesKey, build_series
from bench.compare.extras import metric_values
from bench.records.workers import worker_values
from bench.records.extensions import ab_side
from bench.compare.files import read_records
from bench.compare.hostshift import Reading, readings

Target = tuple[str, str]  # backend, device
NIGHTS, RECORDS = "nights", "records"


@dataclass(frozen=True)
class BaseEntry:
    """One series' baseline. `run_values`: one value per night (kind NIGHTS)
    or per base record (RECORDS); `samples`: every repeat sample of those
    nights or records; both in `unit`, `better` giving the direction."""

    key: SeriesKey
    unit: str
    better: str
    kind: str                    # NIGHTS or RECORDS
    run_values: tuple[float, ...]
    samples: tuple[float, ...]
    count: int                   # nights or records it draws on
    workers: tuple[float | None, ...] = ()  # one base record's workers (None: failed or disturbed)
    ab: tuple[str, str] | None = None       # that record's (A/B id, side)

    def __post_init__(self):
        if self.kind not in (NIGHTS, RECORDS):
            raise ValueError(f"BaseEntry.kind is {self.kind!r}; expected {NIGHTS!r} or {RECORDS!r}")
        if not self.samples or not self.run_values:
            raise ValueError(f"baseline of {'/'.join(self.key)} has no values; expected at least one value per run and sample")


@dataclass(frozen=True)
class Baseline:
    entries: Mapping[SeriesKey, BaseEntry]
    environments: Mapping[Target, Mapping[str, Any]]  # newest base record's environment per target
    description: str                                 # e.g. "last 7 nights of data/" for the headline
    metrics: Mapping[tuple[SeriesKey, str], BaseEntry] = field(default_factory=lambda: MappingProxyType({}))  # extras.METRICS
    hosts: Mapping[Target, tuple[Reading, ...]] = field(default_factory=lambda: MappingProxyType({}))  # hostshift


def load_baseline(paths: Sequence[str | Path], nights: int, warn: TextIO | None = STDERR,
                  like: tuple[str, str] | None = None) -> Baseline:
    """Read --base: one data folder (holding runs/), or record files/folders.
    `like`: a data folder's nights only where measured in that setting."""
    paths = [Path(p) for p in paths]
    for p in paths:
        if not p.exists():
            raise FileNotFoundError(f"--base {p}: no such file or folder; expected a data folder "
                                    "holding runs/ or run record files")
    data_dirs = [p for p in paths if (p / "runs").is_dir()]
    if data_dirs and len(paths) > 1:
        raise ValueError(f"--base {data_dirs[0]} is a data folder (it holds runs/); expected it alone, "
                         "or run record files without a data folder")
    if data_dirs:
        records = load_history(data_dirs[0], warn=warn).records
        how = f" measured as {like[0]}, {like[1]}" if like else ""
        return baseline_from_history(records, nights, f"last {nights} nights of {data_dirs[0]}{how}", like)
    records = read_records(paths, "--base", warn)
    return baseline_from_records(records, f"{len(records)} base record{'s' * (len(records) != 1)}")


def setting(rec: RunRecord) -> tuple[str, str]:
    """How a record was measured, as far as a comparison must match it: its
    protocol (run.protocol name and version; 'single-process 1' without one)
    and whether its workers ran as a duet beside another build's (a nightly
    with its reference) or solo. A duet halves each side's CPUs, so its
    samples/s are not a solo run's: a solo head against duet nights reads
    'faster' for nothing."""
    return run_setting(rec.data.get("run", {}))


def run_setting(run: Mapping) -> tuple[str, str]:
    """setting() of a record's `run` object (the summary keeps that object)."""
    proto = run.get("protocol") if isinstance(run.get("protocol"), Mapping) else {}
    ab = run.get("ab") if isinstance(run.get("ab"), Mapping) else {}
    name = f"{proto.get('name', 'single-process')} {proto.get('version', 1)}"
    return name, "duet" if ab.get("mode") == "duet" else "solo"


def baseline_from_history(records: Iterable[RunRecord], nights: int, description: str,
                          like: tuple[str, str] | None = None) -> Baseline:
    """The last `nights` points of every nightly series (pure); with `like`
    (a setting), only the nights measured that way."""
    if nights < 1:
        raise ValueError(f"--nights is {nights!r}; expected a positive number of nights")
    records = [r for r in records if r.is_nightly and (like is None or setting(r) == like)]
    entries, metrics, used = {}, {}, {}
    by_run = {(r.backend, r.device, r.run_id, r.attempt): r for r in records}
    for key, series in build_series(records).items():
        entry = _from_series(series, nights)
        if entry is not None:
            entries[key] = entry
            metrics.update(_night_metrics(series, nights, by_run))
            for p in series.points[-nights:]:  # the records those nights came from, once each
                ref = (key[0], key[1], p.run_id, p.attempt)
                used[ref] = by_run[ref]
    return Baseline(MappingProxyType(entries), _newest_environments(records), description,
                    MappingProxyType(metrics), MappingProxyType(readings(used.values())))


def baseline_from_records(records: Iterable[RunRecord], description: str) -> Baseline:
    """Every ok sample of `records`, pooled per series (pure)."""
    records = list(records)
    pooled: dict[SeriesKey, list[float]] = {}
    values: dict[SeriesKey, list[float]] = {}
    meta: dict[SeriesKey, tuple[str, str]] = {}
    workers: dict[SeriesKey, tuple[tuple[float | None, ...], tuple[str, str] | None]] = {}
    extra: dict[tuple[SeriesKey, str], tuple[list[float], str]] = {}
    for rec in records:
        for r, raw in zip(rec.results, rec.data["results"]):
            if r.status != "ok":
                continue
            key = (rec.backend, rec.device, r.model, r.mode)
            pooled.setdefault(key, []).extend(r.samples or (r.value,))
            values.setdefault(key, []).append(r.value)
            meta[key] = (r.unit, r.better)
            workers[key] = (pair_values(raw, rec.data), ab_side(rec.data))
            for name, (value, unit) in metric_values(raw).items():
                extra.setdefault((key, name), ([], unit))[0].append(value)
    entries = {key: BaseEntry(key, *meta[key], kind=RECORDS, run_values=tuple(values[key]),
                              samples=tuple(pooled[key]), count=len(values[key]),
                              # workers pair only when one base record holds the series
                              **(dict(zip(("workers", "ab"), workers[key])) if len(values[key]) == 1 else {}))
               for key in sorted(pooled)}
    metrics = {mk: BaseEntry(mk[0], unit, "smaller", RECORDS, run_values=tuple(vs), samples=tuple(vs), count=len(vs))
               for mk, (vs, unit) in sorted(extra.items())}
    return Baseline(MappingProxyType(entries), _newest_environments(records), description,
                    MappingProxyType(metrics), MappingProxyType(readings(records)))


def pair_values(result: Mapping[str, Any], record_data: Mapping[str, Any]) -> tuple[float | None, ...]:
    """A result's worker figures as A/B pairs see them: in a duet (run.ab.mode
    'duet') both workers of a pair ran at the same time on one host, so a
    disturbance reached both and the pair counts, disturbed or not
    (bench.measure.reference.ratio does the same, and says what it measured);
    taken in turns, the sides ran apart, so a disturbed worker pairs with nothing."""
    ab = record_data.get("run", {}).get("ab")
    duet = isinstance(ab, Mapping) and ab.get("mode") == "duet"
    return worker_values(result, disturbed_too=duet)


def _from_series(series: Series, nights: int) -> BaseEntry | None:
    points = series.points[-nights:]
    if not points:
        return None  # only failures or skips: nothing to measure a head against
    samples = tuple(s for p in points for s in (p.samples or (p.value,)))
    return BaseEntry(series.key, series.unit, series.better, NIGHTS,
                     run_values=tuple(p.value for p in points), samples=samples, count=len(points))


def _night_metrics(series: Series, nights: int, by_run: Mapping) -> dict[tuple[SeriesKey, str], BaseEntry]:
    """The metrics of the records that made the series' last `nights` points
    (so the night's choice of run is the series' own, bench.analyse.series)."""
    backend, device, model, mode = series.key
    found: dict[str, tuple[list[float], str]] = {}
    for p in series.points[-nights:]:
        rec = by_run.get((backend, device, p.run_id, p.attempt))
        raws = [raw for raw in (rec.data["results"] if rec else ())
                if raw.get("model") == model and raw.get("mode") == mode and raw.get("status") == "ok"]
        for name, (value, unit) in (metric_values(raws[-1]) if raws else {}).items():
            found.setdefault(name, ([], unit))[0].append(value)
    return {(series.key, name): BaseEntry(series.key, unit, "smaller", NIGHTS, run_values=tuple(vs),
                                          samples=tuple(vs), count=len(vs))
            for name, (vs, unit) in sorted(found.items())}


def _newest_environments(records: Iterable[RunRecord]) -> Mapping[Target, Mapping[str, Any]]:
    newest: dict[Target, RunRecord] = {}
    for rec in records:
        t = (rec.backend, rec.device)
        if t not in newest or is_newer(rec, newest[t]):
            newest[t] = rec
    return MappingProxyType({t: rec.environment for t, rec in sorted(newest.items())})
