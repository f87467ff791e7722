"""Read a data folder's history: every run record under DATA/runs/, validated.

A file that cannot be read, is not JSON, fails the schema or carries a bad
value is skipped with one line on stderr naming it and the reason; the rest
still loads. Nothing in the data folder is ever written.
"""

from __future__ import annotations

import gc
import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, TextIO

from bench.records.newest import newness
from bench.records.guard import Limits, one_line
from bench.records.record import RecordError, format_time, RunRecord, load

# How far after now a record may be dated: the publish gate's allowance.
FUTURE = Limits.ahead


@dataclass(frozen=True)
class History:
    records: tuple[RunRecord, ...]
    problems: tuple[str, ...]  # one line per skipped file


@contextmanager
def paused_gc():
    """Pause the cyclic garbage collector while building many small objects.

    Why: parsing ~11,000 records allocates millions of dicts and lists with
    no cycles; the collector's repeated passes over them cost ~40 % of the
    load time and grow faster than linearly with the history.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        # What was built is kept (no cycles to free): move it out of the
        # collector's sight, so re-enabling does not start with a full pass.
        gc.freeze()
        if was:
            gc.enable()


STDERR = object()  # a default `warn`, resolved at call time: tests and callers may swap sys.stderr


def load_history(data_dir: str | Path, warn: TextIO | None = STDERR,  # type: ignore[assignment]
                 progress: Callable[[int, int], None] | None = None, now: datetime | None = None) -> History:
    """All valid records under `data_dir`/runs (recursively), oldest first.

    Skipped files are named on `warn` (default: the current sys.stderr; None: silent).
    A record dated (started_at or night) more than a day after `now` (default:
    the clock) is skipped too: one record from year 9999 would otherwise
    make it the newest run and every other series Stale.

    `data_dir` may also be a folder of record files without runs/ (e.g. a
    `bench run --out` folder); then every *.json below it is read.
    """
    root = Path(data_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"--data {data_dir}: no such folder; expected a data-branch checkout holding runs/")
    runs = root / "runs"
    files = [Path(f) for f in json_files(runs if runs.is_dir() else root)]
    if warn is STDERR:
        warn = sys.stderr
    with paused_gc():
        return _load(files, warn, progress, now or datetime.now(timezone.utc))


def json_files(top: str | Path) -> list[str]:
    """Every *.json file below `top`, sorted: the one walker over a folder of
    records (history, publish, compare). Leaves out ".tmp-" files (an atomic
    write in progress, never a record). os.walk with plain strings: Path.rglob
    and sorting Path objects cost a third of a second on 11,000 files."""
    out = []
    for folder, dirs, names in os.walk(top):
        dirs.sort()
        out.extend(os.path.join(folder, n) for n in names if n.endswith(".json") and not n.startswith(".tmp-"))
    out.sort()
    return out


def _load(files: list[Path], warn: TextIO | None, progress, now: datetime) -> History:
    records, problems = [], []
    latest = now + FUTURE
    for i, f in enumerate(files):
        if f.name.startswith(".tmp-"):
            continue  # an interrupted atomic write elsewhere; never a record
        try:
            rec = load(f)
            if rec.started_at > latest or rec.night > latest.date():
                raise RecordError(f"{rec.source}: dated {rec.data['run'].get('night') or rec.data['run']['started_at']}, "
                                  f"after {format_time(latest)} ({FUTURE.total_seconds() / 3600:g} h from now); expected a record of a past run")
            records.append(rec)
        except RecordError as e:
            problems.append(f"skipped {one_line(e)}")  # a file name may hold a newline (and a '::command')
            if warn is not None:
                print(f"bench: skipped {one_line(e)}", file=warn)
        if progress is not None:
            progress(i + 1, len(files))
    records.sort(key=lambda r: (*newness(r), r.source))
    return History(tuple(records), tuple(problems))
