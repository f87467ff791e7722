"""Made-up series for the status rule's tests: make_series wraps values as a
Series; streams.py draws labelled nightly streams (studies/status_eval.py)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from bench.analyse.series import Point, Series

START = datetime(2026, 10, 1, 2, 0, tzinfo=timezone.utc)
def make_series(values, better: str = "bigger", key=("jax", "gpu", "cnn", "train"),
                start: datetime = START) -> Series:
    """One point per night from `start`; no failures."""
    points = tuple(Point(day=(start + timedelta(days=i)).date(), value=float(v),
                         started_at=start + timedelta(days=i), attempt=1, run_id=str(i),
                         keras_version=None, url=None)
                   for i, v in enumerate(values))
    return Series(key=key, unit="samples/s" if better == "bigger" else "ms", better=better,
                  points=points, failures=(), skipped=(), last_seen=points[-1].started_at)
