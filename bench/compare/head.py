"""The head of a comparison: the run(s) being judged (a pull request, a ref).

Head records may come from any event and any keras_source: they are
compared, never charted. When several head records hold the same series
(a rerun), the newest result wins (newest started_at, then highest attempt),
as a rerun replaces a night's point in the history.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Sequence, TextIO

from bench.records.history import STDERR
from bench.records.record import ErrorInfo, RunRecord
from bench.analyse.series import SeriesKey
from bench.compare.baseline import Target
from bench.compare.files import read_records


@dataclass(frozen=True)
class HeadEntry:
    """One series' head result: its repeat samples (unit, better) when ok,
    its error (kind, message) when failed or skipped."""

    key: SeriesKey
    status: str                   # ok | failed | skipped
    unit: str
    better: str
    samples: tuple[float, ...]
    error: ErrorInfo | None

    def __post_init__(self):
        if self.status == "ok" and not self.samples:
            raise ValueError(f"head result {'/'.join(self.key)} is ok but has no value; expected samples")
        if self.status != "ok" and self.error is None:
            raise ValueError(f"head result {'/'.join(self.key)} is {self.status} without an error (kind, message)")


@dataclass(frozen=True)
class Head:
    entries: Mapping[SeriesKey, HeadEntry]
    environments: Mapping[Target, Mapping[str, Any]]  # newest head record's environment per target


def load_head(paths: Sequence[str | Path], warn: TextIO | None = STDERR) -> Head:
    """Read --head: record files, or folders of them."""
    records = read_records(paths, "--head", warn)
    if not records:
        raise FileNotFoundError(f"--head {' '.join(map(str, paths))}: no run records found; "
                                "expected the JSON files written by `bench run`")
    return head_from_records(records)


def head_from_records(records: Iterable[RunRecord]) -> Head:
    """The newest result per series, and the newest environment per target (pure)."""
    ordered = sorted(records, key=lambda r: (r.started_at, r.attempt))
    entries, envs = {}, {}
    for rec in ordered:  # later (newer) records overwrite earlier ones
        envs[(rec.backend, rec.device)] = rec.environment
        for r in rec.results:
            key = (rec.backend, rec.device, r.model, r.mode)
            if r.status == "ok":
                entries[key] = HeadEntry(key, "ok", r.unit, r.better, tuple(r.samples or (r.value,)), None)
            else:  # a skipped result may carry no error; it was not supported
                error = r.error or ErrorInfo("unsupported", "")
                entries[key] = HeadEntry(key, r.status, r.unit, r.better, (), error)
    return Head(MappingProxyType(dict(sorted(entries.items()))), MappingProxyType(dict(sorted(envs.items()))))
