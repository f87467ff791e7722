"""What this machine already checked of a data folder's summary, kept until
what those checks read changes, so that a reader need not check it again.

Two checks make most of `bench show`'s time at ten years (docs/scale.md):
- the walk (summary.read, summary.read_some): every folder under runs/ is
  listed (3,800 at ten years) for the record files' names, whose per-month
  (count, hash) is compared with coverage.json;
- a month read in part (summary.read_some): every line's path is taken
  from its text and hashed, against the month's coverage.

Both read names only, and a record is never edited. A folder's mtime and
ctime move whenever an entry of it is added, removed or renamed; a file's
ctime whenever it is written, renamed or its times are set (rsync -a, cp -p,
tar and touch set mtime, nothing sets ctime), and a replaced file has another
(device, inode). So while every folder the walk listed stats with the same
(mtime, ctime), and a month file with the same (device, inode, size, mtime,
ctime), their answers stand; knowing that costs one stat per folder (a
tenth of the walk, measured). A month file is stat'ed through the open file
it is read from, so a file swapped in between is never taken for the one checked.
The walk's answer holds a month at a time: a month none of whose folders
moved keeps its (count, hash), and only the others are walked again, while
runs/, the years' folders and any folder outside the layout stat as
remembered (their entries say which months and stray files there are).

Timestamps are coarse (a few ms): a change in the same tick as a check would
leave its times as remembered. As git does for its index, nothing whose
mtime or ctime lies within RACY seconds of the check is remembered; the next
reader checks it again. A network filesystem whose clock is off by more than
that, or one whose folder times do not move, should not be trusted so:
BENCH_MEMO=off turns the memo off.

Kept at $XDG_CACHE_HOME/keras-nightly-bench/checked-<sha256 of the data
folder's real path>.json (~/.cache when the variable is unset; no memo when
neither gives an absolute path): on this machine, never on the data branch.
A file that is missing, unreadable, of another shape or format, or of
another folder means "check again"; a failure to write it is ignored (the
reader loses the speed, nothing else).

A month file's entry also keeps what `bench show` scans each month for
besides its own series, once it has been found: where the file's "skipped"
lines start and which months its lines' nights and starts fall in (Facts).
A later show then scans such a file for its series alone.

Format history: 1 (2026-12-07): {"format", "root", "walk": null or
  {"folders": {relpath: [mtime_ns, ctime_ns]} (runs/ itself as "runs"),
  "months": {"YYYY-MM": [count, hash]}}, "files": {"YYYY-MM": [device,
  inode, size, mtime_ns, ctime_ns, count, hash]}}.
2 (2026-12-07): a file's entry ends with its facts, null or [[the byte
  offset where each "skipped" line starts], ["YYYY-MM" of its lines' nights]].
3 (2026-12-07, stop 62): the second list holds the months of the lines'
  nights and starts (a line started, or of a night, from the first month read
  whole on is read wherever it lies). A format-2 memo is not read.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

from bench.records import atomic

FORMAT = 3
RACY = 2.0  # seconds: above the timestamp tick of local filesystems (FAT's is 2 s: the comparison is strict)
OFF = "BENCH_MEMO"  # "off": check everything every time


@dataclass(frozen=True)
class Facts:
    """What `bench show` scans a month file for besides its series' lines:
    where each "skipped" line starts (byte offsets) and the months ('YYYY-MM')
    its lines' nights and starts fall in (a record lies in its start's month,
    but its night may be later, and a file laid by hand anywhere: a show that
    reads the newest months whole reads the lines of a night, or started, in
    those months or later in any file)."""

    skipped: tuple[int, ...]
    dates: frozenset[str]


def _cache_file(root: str) -> Path | None:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if os.environ.get(OFF) == "off" or not os.path.isabs(base):
        return None
    try:
        name = hashlib.sha256(root.encode()).hexdigest()[:32]
    except UnicodeEncodeError:  # a path of bytes that are not UTF-8
        return None
    return Path(base) / "keras-nightly-bench" / f"checked-{name}.json"


def folder_times(path: str) -> list[int] | None:
    """[mtime_ns, ctime_ns] of `path`, None when it cannot be stat'ed: what says a folder's entries are as they were."""
    try:
        s = os.stat(path)
    except OSError:
        return None
    return [s.st_mtime_ns, s.st_ctime_ns]


def file_key(stat: os.stat_result) -> list[int]:
    """What says a month file is the one checked: [device, inode, size, mtime_ns, ctime_ns]."""
    return [stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns]


class Memo:
    """The checks remembered for one data folder; `save()` writes what was added."""

    def __init__(self, data_dir: str | Path):
        self.root = os.path.realpath(str(data_dir))  # names the memo: one per folder, however it is reached
        self.base = os.path.abspath(str(data_dir))  # what the walk's paths start with (a link not resolved)
        self.started = time.time_ns()  # what changed after RACY before this is not trusted
        self._file = _cache_file(self.root)
        self._data = self._load()
        self._dirty = False

    def _load(self) -> dict:
        empty = {"format": FORMAT, "root": self.root, "walk": None, "files": {}}
        if self._file is None:
            return empty
        try:
            data = json.loads(self._file.read_text(encoding="utf-8"))
        except Exception:  # noqa: BLE001 - unreadable, not JSON, nested past the recursion limit: check again
            return empty
        return data if _well_formed(data, self.root) else empty

    def _settled(self, times: list[int]) -> bool:
        return max(times) < self.started - int(RACY * 1e9)

    # The walk: {month: (count, hash)} of runs/, a month at a time, while no folder of it changed.
    def walk(self, is_month: Callable[[str], bool]) -> tuple[dict[str, tuple[int, str]], list[str]] | None:
        """(held, stale) of the remembered walk: the months none of whose
        folders (runs/YYYY/MM and below) changed, with their (count, hash), and
        the months with one that did, which the reader walks again (a night
        added to the newest month: 30 folders, not 3,800). None when nothing
        is remembered, or runs/, a year's folder or a folder outside the
        layout (runs/YYYY/X, X no month by `is_month('YYYY-X')`) changed:
        months may have come or gone, or a record may lie outside a month, so all is walked."""
        walk = self._data["walk"]
        if not walk:
            return None
        same: dict[str, bool] = {}
        for rel, t in walk["folders"].items():
            month = _month_of(rel)
            held = folder_times(os.path.join(self.base, rel)) == t
            if month is None or not is_month(month):
                if not held:
                    return None
                continue
            same[month] = same.get(month, True) and held
        stale = sorted(m for m, held in same.items() if not held)
        return {m: (c, h) for m, (c, h) in walk["months"].items() if m not in stale}, stale

    def remember_walk(self, folders: Mapping[str, list[int] | None], months: Mapping[str, tuple[int, str]],
                      root: str, again: list[str] | None = None) -> None:
        """`folders`: every folder whose entries the walk read, with its [mtime_ns,
        ctime_ns] as stat'ed before they were read (so a change while it ran
        leaves other times than remembered), None when it could not be stat'ed;
        each path starts with `root` (the data folder as the walk was given it,
        with a trailing separator); `months`: the walk's answer. `again`: the
        stale months walk() gave, when only they were walked: the remembered
        folders of every other month, and of runs/ and the years, are kept."""
        stamps = {} if again is None else {
            rel: t for rel, t in self._data["walk"]["folders"].items() if _month_of(rel) not in again}
        for path, t in folders.items():
            if t is None or not self._settled(t):
                return
            rel = path[len(root):] if path.startswith(root) else os.path.relpath(path, self.base)
            stamps[rel] = t
        if "runs" in stamps:
            self._data["walk"] = {"folders": stamps, "months": {k: list(v) for k, v in months.items()}}
            self._dirty = True

    # A month file: whether the open file `stat` is one found to hold exactly the paths (count, hash).
    def holds(self, stat: os.stat_result, month: str, count: int, digest: str) -> bool:
        entry = self._data["files"].get(month)
        return entry is not None and entry[:-1] == [*file_key(stat), count, digest]

    def facts(self, stat: os.stat_result, month: str, count: int, digest: str) -> Facts | None:
        """The facts remembered of the file `stat` when it holds (count, hash) and they were found."""
        if not self.holds(stat, month, count, digest):
            return None
        found = self._data["files"][month][-1]
        return Facts(tuple(found[0]), frozenset(found[1])) if found is not None else None

    def remember_file(self, stat: os.stat_result, month: str, count: int, digest: str,
                      facts: Facts | None = None) -> None:
        """`stat`: os.fstat of the open file that was read and found to hold (count, hash);
        `facts`: what was found of it, when it was (facts found before of the same file are kept)."""
        if self._settled([stat.st_mtime_ns, stat.st_ctime_ns]):
            if facts is None and self.holds(stat, month, count, digest):
                return
            entry = [*file_key(stat), count, digest, None if facts is None else [sorted(facts.skipped), sorted(facts.dates)]]
            if self._data["files"].get(month) != entry:
                self._data["files"][month] = entry
                self._dirty = True

    def save(self) -> None:
        if not self._dirty or self._file is None:
            return
        try:
            atomic.write_text(self._file, json.dumps(self._data, sort_keys=True) + "\n")
        except OSError:
            pass  # only the speed is lost
        self._dirty = False


def _month_of(rel: str) -> str | None:
    """'YYYY-MM' of a folder runs/YYYY/MM[/...] as the memo names it; None for runs and runs/YYYY."""
    parts = rel.split("/")
    return f"{parts[1]}-{parts[2]}" if len(parts) >= 3 else None


def _well_formed(data, root: str) -> bool:
    """Whether `data` is a memo of this format for `root`, every value of the shape the module docstring gives."""
    if not (isinstance(data, dict) and data.get("format") == FORMAT and data.get("root") == root):
        return False
    files, walk = data.get("files"), data.get("walk")
    if not (isinstance(files, dict) and all(isinstance(v, list) and _is_entry(v[:-1], 5) and _is_facts(v[-1])
                                             for v in files.values())):
        return False
    if walk is None:
        return True
    if not (isinstance(walk, dict) and isinstance(walk.get("folders"), dict) and isinstance(walk.get("months"), dict)):
        return False
    folders, months = walk["folders"], walk["months"]
    return ("runs" in folders and all(isinstance(k, str) and _ints(v, 2) for k, v in folders.items())
            and all(_is_entry(v, 0) for v in months.values()))


def _is_facts(v) -> bool:
    """null or [[ints], [strs]]."""
    return v is None or (isinstance(v, list) and len(v) == 2 and isinstance(v[0], list) and isinstance(v[1], list)
                         and all(type(x) is int and x >= 0 for x in v[0]) and all(isinstance(x, str) for x in v[1]))


def _ints(v, n: int) -> bool:
    return isinstance(v, list) and len(v) == n and all(type(x) is int for x in v)


def _is_entry(v, n: int) -> bool:
    """[n ints, count, hash]."""
    return (isinstance(v, list) and len(v) == n + 2 and _ints(v[:n + 1], n + 1) and isinstance(v[-1], str))
