"""The labelled corpus of made-up series (series.json, from generate.py)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from bench.analyse.series import Point, Series

CORPUS = Path(__file__).with_name("series.json")
START = datetime(2026, 10, 1, 2, 0, tzinfo=timezone.utc)


@dataclass(frozen=True)
class Case:
    name: str
    label: str      # the status the series must get
    better: str
    values: tuple[float, ...]


def kind(name: str) -> str:
    """'step-Regressed-0.08-age3-0' -> 'step-Regressed': the name without its numbers."""
    return re.sub(r"-(age)?[\d.]+", "", name)


def load_cases(path: Path = CORPUS) -> list[Case]:
    return [Case(c["name"], c["label"], c["better"], tuple(c["values"]))
            for c in json.loads(path.read_text())]


def make_series(values, better: str = "bigger", key=("jax", "gpu", "cnn", "train"),
                start: datetime = START) -> Series:
    """One point per night from `start`; no failures."""
    points = tuple(Point(day=(start + timedelta(days=i)).date(), value=float(v),
                         started_at=start + timedelta(days=i), attempt=1, run_id=str(i),
                         keras_version=None, url=None)
                   for i, v in enumerate(values))
    return Series(key=key, unit="samples/s" if better == "bigger" else "ms", better=better,
                  points=points, failures=(), skipped=(), last_seen=points[-1].started_at)
