"""Read the run records named on the command line (--base, --head)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence, TextIO

from bench.records.history import STDERR, load_history
from bench.records.record import RunRecord, load


def read_records(paths: Sequence[str | Path], flag: str, warn: TextIO | None = STDERR) -> list[RunRecord]:
    """Files are read strictly (a bad one stops the command: it was named);
    a folder means every *.json below it, bad ones skipped with a warning."""
    records = []
    for p in map(Path, paths):
        if not p.exists():
            raise FileNotFoundError(f"{flag} {p}: no such file or folder; expected run record files "
                                    "(JSON) or a folder of them")
        records.extend(load_history(p, warn=warn).records if p.is_dir() else (load(p),))
    return records
