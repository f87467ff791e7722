"""What this machine already checked of a data folder's summary, kept until
what those checks read changes, so that a reader need not check it again.

Two checks make most of `bench show`'s time at ten years (docs/scale.md):
- the walk (summary.read, summary.read_some): every folder under runs/ is
  listed (3,800 at ten years) for the record files' names, whose per-month
  (count, hash) is compared with coverage.json;
- a month read in part (summary.read_some): every line's path is taken
  from its text and hashed, against the month's coverage.

Both read names only, and a record is never edited. A folder's mtime moves
whenever an entry of it is added, removed or renamed; a file's (size, mtime,
inode) whenever it is written or replaced. So while every folder the walk
listed, and a month file, stat as they did, their answers stand, and
knowing that costs one stat per folder (a tenth of the walk, measured).

Timestamps are coarse (a few ms): a change in the same tick as a check would
leave its mtime as remembered. As git does for its index, nothing whose
mtime lies within RACY seconds of the check is remembered; the next reader
checks it again.

Kept at $XDG_CACHE_HOME/keras-nightly-bench/checked-<sha256 of the data
folder's real path>.json (~/.cache when the variable is unset): on this
machine, never on the data branch. A file that is missing, unreadable, of
another format or of another folder means "check again"; a failure to write
it is ignored (the reader loses the speed, nothing else).

Format history: 1 (2026-12-07): {"format", "root", "walk": {"folders":
  {relpath: mtime_ns}, "months": {"YYYY-MM": [count, hash]}}, "files":
  {"YYYY-MM": [size, mtime_ns, inode, count, hash]}}.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Mapping

from bench.records import atomic

FORMAT = 1
RACY = 2.0  # seconds: well above any filesystem's timestamp tick


def _cache_file(root: str) -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "keras-nightly-bench" / f"checked-{hashlib.sha256(root.encode()).hexdigest()[:32]}.json"


def _mtime(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


class Memo:
    """The checks remembered for one data folder; `save()` writes what was added."""

    def __init__(self, data_dir: str | Path):
        self.root = os.path.realpath(str(data_dir))
        self.started = time.time_ns()  # what changed after this is not trusted (RACY)
        self._data = self._load()
        self._dirty = False

    def _load(self) -> dict:
        try:
            data = json.loads(_cache_file(self.root).read_text(encoding="utf-8"))
            if isinstance(data, dict) and data.get("format") == FORMAT and data.get("root") == self.root:
                return data
        except (OSError, ValueError):
            pass
        return {"format": FORMAT, "root": self.root, "walk": None, "files": {}}

    def _settled(self, mtime_ns: int) -> bool:
        return mtime_ns < self.started - int(RACY * 1e9)

    # The walk: {month: (count, hash)} of runs/, while no folder it listed changed.
    def walk(self) -> dict[str, tuple[int, str]] | None:
        walk = self._data.get("walk")
        try:
            if walk and all(_mtime(os.path.join(self.root, rel)) == m for rel, m in walk["folders"].items()):
                return {month: (int(c), str(h)) for month, (c, h) in walk["months"].items()}
        except (TypeError, ValueError, AttributeError):
            pass
        return None

    def remember_walk(self, folders: list[str], months: Mapping[str, tuple[int, str]]) -> None:
        """`folders`: every folder the walk listed (absolute); `months`: its answer."""
        stamps = {}
        for path in folders:
            m = _mtime(path)
            if m is None or not self._settled(m):
                return
            stamps[os.path.relpath(path, self.root)] = m
        self._data["walk"] = {"folders": stamps, "months": {k: list(v) for k, v in months.items()}}
        self._dirty = True

    # A month file: whether it was found to hold exactly the paths (count, hash).
    def holds(self, path: str | Path, month: str, count: int, digest: str) -> bool:
        got = self._data["files"].get(month)
        return got is not None and got == [*_stat(path), count, digest]

    def remember_file(self, path: str | Path, month: str, count: int, digest: str) -> None:
        stat = _stat(path)
        if stat[1] is not None and self._settled(stat[1]):
            self._data["files"][month] = [*stat, count, digest]
            self._dirty = True

    def save(self) -> None:
        if not self._dirty:
            return
        try:
            atomic.write_text(_cache_file(self.root), json.dumps(self._data, sort_keys=True) + "\n")
        except OSError:
            pass  # only the speed is lost
        self._dirty = False


def _stat(path: str | Path) -> list:
    try:
        s = os.stat(path)
        return [s.st_size, s.st_mtime_ns, s.st_ino]
    except OSError:
        return [None, None, None]
