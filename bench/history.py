"""Read a data folder's history: every run record under DATA/runs/, validated.

A file that cannot be read, is not JSON, fails the schema or carries a bad
value is skipped with one line on stderr naming it and the reason; the rest
still loads. Nothing in the data folder is ever written.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TextIO

from .record import RecordError, RunRecord, load


@dataclass(frozen=True)
class History:
    records: tuple[RunRecord, ...]
    problems: tuple[str, ...]  # one line per skipped file


def load_history(data_dir: str | Path, warn: TextIO | None = sys.stderr,
                 progress: Callable[[int, int], None] | None = None) -> History:
    """All valid records under `data_dir`/runs (recursively), oldest first.

    `data_dir` may also be a folder of record files without runs/ (e.g. a
    `bench run --out` folder); then every *.json below it is read.
    """
    root = Path(data_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"--data {data_dir}: no such folder; expected a data-branch checkout holding runs/")
    runs = root / "runs"
    files = sorted((runs if runs.is_dir() else root).rglob("*.json"))
    records, problems = [], []
    for i, f in enumerate(files):
        if f.name.startswith(".tmp-"):
            continue  # an interrupted atomic write elsewhere; never a record
        try:
            records.append(load(f))
        except RecordError as e:
            problems.append(f"skipped {e}")
            if warn is not None:
                print(f"bench: skipped {e}", file=warn)
        if progress is not None:
            progress(i + 1, len(files))
    records.sort(key=lambda r: (r.started_at, r.attempt, r.source))
    return History(tuple(records), tuple(problems))
