"""A night's profile summary from its record file (results[i].profile, bench/measure/profiling.py).

The summary store (bench/records/summary.py) keeps no profiles: a few KB a
result, read only for a Regressed or Faster series' two window nights. So
`Reader(data)` opens those two records where they lie
(record.relpath_of: runs/YYYY/MM/DD/<backend>--<device>--<run id>-<attempt>.json),
each file once. A record that is not on disk (a sparse checkout, a summary
without its runs/), that cannot be read, or whose result has no profile
gives None: the window then names no ops, and nothing else changes.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any, Mapping

from bench.records.record import relpath_of


class Reader:
    """profile(backend, device, model, mode, run_id, attempt, started_at) -> the result's profile or None."""

    def __init__(self, data: str | Path):
        self.root = Path(data)
        self._results: dict[str, list | None] = {}

    def _read(self, rel: str) -> list | None:
        if rel not in self._results:
            try:
                data = json.loads((self.root / rel).read_text(encoding="utf-8"))
                results = data.get("results") if isinstance(data, dict) else None
                self._results[rel] = results if isinstance(results, list) else None
            except (OSError, UnicodeDecodeError, ValueError):
                self._results[rel] = None
        return self._results[rel]

    def profile(self, backend: str, device: str, model: str, mode: str, run_id: str, attempt: int,
                started_at: datetime) -> Mapping[str, Any] | None:
        """`mode` may be a derived series' ('train.vs-ref'): its benchmark's ('train') profile."""
        base = mode.split(".", 1)[0]
        for r in self._read(relpath_of(backend, device, run_id, attempt, started_at)) or ():
            if isinstance(r, dict) and r.get("model") == model and r.get("mode") == base:
                found = r.get("profile")
                return found if isinstance(found, dict) else None
        return None
