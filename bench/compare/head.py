"""The head of a comparison: the run(s) being judged (a pull request, a ref).

Head records may come from any event and any keras_source: they are
compared, never charted. When several head records hold the same series
(a rerun), the newest result wins (newest started_at, then highest attempt),
as a rerun replaces a night's point in the history.

Besides each result's repeat samples: its workers' figures and the record's
A/B side (to pair with the other side, bench.compare.verdicts), the
one-value-per-run metrics (latency p99, peak memory) as entries of their own,
and per target the newest record's host reading (bench.compare.hostshift).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Sequence, TextIO

from bench.records.newest import newness
from bench.records.history import STDERR
from bench.records.record import ErrorInfo, RunRecord
from bench.analyse.series import SeriesKey
from bench.compare.baseline import Target, pair_values
from bench.compare.extras import metric_values
from bench.records.extensions import ab_side
from bench.compare.files import read_records
from bench.compare.hostshift import Reading, reading

MetricKey = tuple[SeriesKey, str]  # a series and one of extras.METRICS


@dataclass(frozen=True)
class HeadEntry:
    """One series' head result: its repeat samples (unit, better) when ok,
    its error (kind, message) when failed or skipped; `workers`: each
    worker's figure (None: failed or disturbed), `ab`: (A/B id, side)."""

    key: SeriesKey
    status: str                   # ok | failed | skipped
    unit: str
    better: str
    samples: tuple[float, ...]
    error: ErrorInfo | None
    workers: tuple[float | None, ...] = ()
    ab: tuple[str, str] | None = None

    def __post_init__(self):
        if self.status == "ok" and not self.samples:
            raise ValueError(f"head result {'/'.join(self.key)} is ok but has no value; expected samples")
        if self.status != "ok" and self.error is None:
            raise ValueError(f"head result {'/'.join(self.key)} is {self.status} without an error (kind, message)")


@dataclass(frozen=True)
class Head:
    entries: Mapping[SeriesKey, HeadEntry]
    environments: Mapping[Target, Mapping[str, Any]]  # newest head record's environment per target
    metrics: Mapping[MetricKey, HeadEntry] = field(default_factory=lambda: MappingProxyType({}))  # better: smaller
    hosts: Mapping[Target, Reading] = field(default_factory=lambda: MappingProxyType({}))  # hostshift.reading


def load_head(paths: Sequence[str | Path], warn: TextIO | None = STDERR) -> Head:
    """Read --head: record files, or folders of them."""
    records = read_records(paths, "--head", warn)
    if not records:
        raise FileNotFoundError(f"--head {' '.join(map(str, paths))}: no run records found; "
                                "expected the JSON files written by `bench run`")
    return head_from_records(records)


def head_from_records(records: Iterable[RunRecord]) -> Head:
    """The newest result per series, and the newest environment per target (pure)."""
    ordered = sorted(records, key=newness)
    entries, envs, metrics, hosts = {}, {}, {}, {}
    for rec in ordered:  # later (newer) records overwrite earlier ones
        envs[(rec.backend, rec.device)] = rec.environment
        if (now := reading(rec)) is not None:
            hosts[(rec.backend, rec.device)] = now
        ab = ab_side(rec.data)
        for r, raw in zip(rec.results, rec.data["results"]):
            key = (rec.backend, rec.device, r.model, r.mode)
            for name in [m for m in metrics if m[0] == key]:
                del metrics[name]  # the newer result replaces every figure of the older
            if r.status == "ok":
                entries[key] = HeadEntry(key, "ok", r.unit, r.better, tuple(r.samples or (r.value,)), None,
                                         workers=pair_values(raw, rec.data), ab=ab)
                for name, (value, unit) in metric_values(raw).items():
                    metrics[(key, name)] = HeadEntry(key, "ok", unit, "smaller", (value,), None)
            else:  # a skipped result may carry no error; it was not supported
                error = r.error or ErrorInfo("unsupported", "")
                entries[key] = HeadEntry(key, r.status, r.unit, r.better, (), error)
    return Head(MappingProxyType(dict(sorted(entries.items()))), MappingProxyType(dict(sorted(envs.items()))),
                MappingProxyType(dict(sorted(metrics.items()))), MappingProxyType(dict(sorted(hosts.items()))))
