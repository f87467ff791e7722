"""Made-up nightly histories, for tests, demos and the performance scripts.

Shaped like the real homelab: a few (backend, device) targets, four series
each, a shared-GPU style of noise (small jitter, an occasional deep dip) and
optional level steps. Deterministic for a given seed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Iterator

from bench.records.record import RunRecord, format_time, write

TARGETS = (
    ("jax", "rtx-5070-ti"), ("torch", "rtx-5070-ti"), ("mlx", "apple-m4"),
    ("mlx-main", "apple-m4-cpu"), ("openvino", "ryzen-5800x3d"), ("jax", "local-cpu"),
)
SERIES = (("cnn", "train", 9000.0), ("cnn", "predict", 40000.0),
          ("mlp", "train", 60000.0), ("mlp", "predict", 250000.0))


@dataclass(frozen=True)
class Step:
    """From `day` on, the series' level is multiplied by `factor`."""
    day: int
    factor: float


def history(days: int, *, targets=TARGETS, seed: int = 0, end: datetime | None = None,
            noise: float = 0.02, dip_rate: float = 0.05, steps: dict | None = None,
            fail_rate: float = 0.01) -> Iterator[RunRecord]:
    """One record per target per night for `days` nights ending at `end`.

    steps: {(backend, device, model, mode): [Step, ...]} level changes.
    """
    rng = random.Random(seed)
    end = end or datetime(2026, 12, 1, 2, 0, tzinfo=timezone.utc)
    start = end - timedelta(days=days - 1)
    steps = steps or {}
    for d in range(days):
        t = start + timedelta(days=d, minutes=rng.randrange(0, 90))
        version = f"3.16.0.dev{t:%Y%m%d}02"
        for backend, device in targets:
            results = []
            for model, mode, base in SERIES:
                key = (backend, device, model, mode)
                if rng.random() < fail_rate:
                    results.append({"model": model, "mode": mode, "status": "failed",
                                    "error": {"kind": rng.choice(["oom", "timeout", "crash"]),
                                              "message": "made-up failure"}})
                    continue
                level = base
                for s in steps.get(key, ()):
                    if d >= s.day:
                        level *= s.factor
                if rng.random() < dip_rate:
                    level *= rng.uniform(0.2, 0.8)
                samples = [level * (1 + rng.gauss(0, noise)) for _ in range(5)]
                samples = [max(s, 1e-3) for s in samples]
                results.append({"model": model, "mode": mode, "status": "ok", "unit": "samples/s",
                                "value": sorted(samples)[2], "samples": samples, "batch_size": 128})
            yield RunRecord.from_dict({
                "schema_version": 1,
                "run": {"id": f"{1000000 + d}", "attempt": 1, "event": "schedule",
                        "started_at": format_time(t),
                        "url": f"https://github.com/example/keras-nightly-bench/actions/runs/{1000000 + d}"},
                "target": {"backend": backend, "keras_backend": backend.split("-")[0], "device": device},
                "environment": {"keras_version": version, "keras_source": "nightly",
                                "python": "3.11.7", "os": "Linux"},
                "results": results,
            }, source="synthetic")


def write_history(data_dir: str | Path, days: int, **kw) -> int:
    """Write `history(days, **kw)` as a data folder; returns the file count."""
    n = 0
    for rec in history(days, **kw):
        write(rec, data_dir, rec.relpath())
        n += 1
    return n
