"""The derived summary beside runs/: what the readers need of every record,
one JSON line per record, one file per month (docs/scale.md).

DATA/summary/
  coverage.json   {"format": 2, "count": N, "hash": H,
                   "months": {"YYYY-MM": {"count": n, "hash": h, "dates": ["YYYY-MM", ...]}}}
                  ("dates": the months its records' nights and starts fall in, sorted;
                  absent when unknown, or when the month holds a "skipped" line)
  YYYY-MM.jsonl   one line per record file of runs/YYYY/MM/ (sorted keys):
                    "path"  the record's path under DATA (runs/YYYY/MM/DD/<name>.json)
                  and either "skipped": the one line that names why the file is not a
                  record (it is still covered, so the summary is not stale over it), or
                  the record's own fields (bench.analyse.summarised.summary_line): its run,
                  target, environment keys, host reading and one row per series it feeds.

The records stay the truth; the summary says which it covers. A month's hash
is the sha256 of its record paths, sorted, one per line ("\\n"-joined); the
whole summary's hash is the sha256 of the months' "YYYY-MM hash" lines, in
month order. A month is the folder the record lies in (runs/YYYY/MM), so one
nightly publish rewrites only the newest month's file and coverage.json: its
cost does not grow with the history.

Fresh: every month folder present under runs/ holds exactly the files its
summary month covers (count and hash), and no month is in the summary that
is not on disk, unless DATA is a sparse checkout (git's sparse-checkout on),
where months left out are trusted. Anything else is stale: the reader says
so in one line and reads the records.

Format history: 1 (2026-12): as above.
  2 (2026-12-07): a line's states (envsummary's fields) hold the record's OS
    (environment.os), so a device change can name an OS update
    (bench.analyse.triangulate). A format-1 summary reads as stale (its
    states lack the OS, so the first line written with it would read as an
    OS change); the readers use the records until `bench summary` rebuilds it.
    Extended (2026-12-07, stop 62): a month's "dates". A reader of format 2
    without them ignores them; a month without them has its dates unknown,
    and a reader opens it (`bench summary` adds them).
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from bench.records import atomic, checked
from bench.records.history import json_files

FOLDER = "summary"
COVERAGE = "coverage.json"
FORMAT = 2


@dataclass(frozen=True)
class Coverage:
    """Which record files a summary covers: per month (count, hash); and,
    where known, per month the months its records' nights and starts fall
    in (`dates`: a reader that wants only the newest nights leaves a month
    unopened when none of its records is that new). Like the counts, the
    dates are written by `bench publish` and `bench summary` (which writes
    them afresh); unlike them, no reader checks them against runs/."""

    months: Mapping[str, tuple[int, str]]
    dates: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self):
        for month, (count, digest) in self.months.items():
            if not _is_month(month) or not isinstance(count, int) or count < 0 or not isinstance(digest, str):
                raise ValueError(f"summary coverage month {month!r}: ({count!r}, {digest!r}); "
                                 "expected 'YYYY-MM': (count >= 0, sha256 hex)")
        for month, dates in self.dates.items():
            if month not in self.months or not isinstance(dates, tuple) or not all(map(_is_month, dates)):
                raise ValueError(f"summary coverage month {month!r}: dates {dates!r}; "
                                 "expected a covered month's dates as ['YYYY-MM', ...]")

    @property
    def count(self) -> int:
        return sum(c for c, _ in self.months.values())

    @property
    def digest(self) -> str:
        text = "".join(f"{m} {h}\n" for m, (_, h) in sorted(self.months.items()))
        return hashlib.sha256(text.encode()).hexdigest()

    def to_json(self) -> str:
        months = {m: {"count": c, "hash": h} for m, (c, h) in sorted(self.months.items())}
        for m, dates in self.dates.items():
            months[m]["dates"] = list(dates)
        return json.dumps({"format": FORMAT, "count": self.count, "hash": self.digest, "months": months},
                          sort_keys=True, indent=1) + "\n"

    @classmethod
    def from_text(cls, text: str, source: str) -> "Coverage":
        try:
            data = json.loads(text)
            if data.get("format") != FORMAT:
                raise ValueError(f"format {data.get('format')!r}; expected {FORMAT}")
            cov = cls({m: (v["count"], v["hash"]) for m, v in data["months"].items()},
                      {m: tuple(v["dates"]) if isinstance(v["dates"], list) else v["dates"]
                       for m, v in data["months"].items() if "dates" in v})
            if (data.get("count"), data.get("hash")) != (cov.count, cov.digest):
                raise ValueError("count and hash do not match its months")
            return cov
        except RecursionError:  # json nested past the interpreter's depth: no coverage file
            raise ValueError(f"{source}: nested too deep; expected a summary coverage file of format {FORMAT}") from None
        except (ValueError, TypeError, KeyError, AttributeError) as e:
            raise ValueError(f"{source}: {e}; expected a summary coverage file of format {FORMAT}") from None


def _is_month(text: Any) -> bool:
    return isinstance(text, str) and len(text) == 7 and text[4] == "-" and text[:4].isdigit() and text[5:].isdigit()


def month_of(relpath: str) -> str | None:
    """'runs/2026/11/01/x.json' -> '2026-11'; None for a path outside runs/YYYY/MM/."""
    parts = relpath.split("/")
    if len(parts) >= 4 and parts[0] == "runs" and _is_month(f"{parts[1]}-{parts[2]}"):
        return f"{parts[1]}-{parts[2]}"
    return None


def month_hash(paths: Iterable[str]) -> tuple[int, str]:
    paths = sorted(paths)
    return len(paths), hashlib.sha256("\n".join(paths).encode()).hexdigest()


OUTSIDE = "elsewhere"  # on_disk's key for files under runs/ but not in a runs/YYYY/MM/ folder


def on_disk(data_dir: str | Path, listed: dict[str, list[int] | None] | None = None) -> dict[str, list[str]]:
    """{month: [relpath, ...]} of every record file under DATA/runs (OUTSIDE:
    those not in a month's folder, which no summary covers). `listed`, when
    given, gets every folder whose entries the walk read, with its [mtime_ns,
    ctime_ns] as stat'ed just before they were read (None when it could not
    be): what bench.records.checked remembers, stat'ed here to save a second
    pass over 3,800 folders."""
    root = os.path.join(str(data_dir), "")
    out: dict[str, list[str]] = {}
    listed = {} if listed is None else listed
    # Walked a month folder at a time (as os.walk would: a link to a folder is
    # not followed), so that a file's month is its folder's, not worked out
    # again from each of 91,000 paths.
    outside = []
    for year in _folder(os.path.join(root, "runs"), listed):
        if not year.is_dir() or year.is_symlink():
            outside.append(year.path)
            continue
        for month in _folder(year.path, listed):
            if month.is_dir() and not month.is_symlink() and _is_month(f"{year.name}-{month.name}"):
                found = _month_records(root, f"{year.name}-{month.name}", listed)
                if found:
                    out[f"{year.name}-{month.name}"] = found
            else:
                outside.append(month.path)
    # A folder outside the layout: every folder below it, whose entries the walk reads too.
    for top in outside:
        if os.path.isdir(top) and not os.path.islink(top):
            _folders_below(top, listed)
    elsewhere = sorted(f[len(root):].replace(os.sep, "/") for top in outside for f in _records_at(top))
    if elsewhere:
        out[OUTSIDE] = elsewhere
    return out


def _month_records(root: str, month: str, listed: dict[str, list[int] | None]) -> list[str]:
    """The relative paths of the record files under root/runs/YYYY/MM, sorted."""
    year, mm = month.split("-")
    found: list[str] = []
    _json_below(os.path.join(root, "runs", year, mm), f"runs/{year}/{mm}/", found, listed)
    return sorted(found)


def _json_below(path: str, prefix: str, out: list[str], listed: dict[str, list[int] | None]) -> None:
    """Append prefix + the relative path of every record file below `path`,
    as history.json_files finds them (os.walk's rule: a link to a folder is
    not followed; ".tmp-" files left out), built as strings without os.path."""
    entries = _folder(path, listed)
    folders = [e for e in entries if e.is_dir()]
    names = [e.name for e in entries if not e.is_dir()] if folders else [e.name for e in entries]
    out += [prefix + n for n in names if n.endswith(".json") and not n.startswith(".tmp-")]
    for e in folders:
        if not e.is_symlink():
            _json_below(e.path, f"{prefix}{e.name}/", out, listed)


def _disk_months(data_dir: str | Path, memo: checked.Memo) -> tuple[dict[str, tuple[int, str]], str | None]:
    """({month: (count, hash)} of the record files under DATA/runs, the first
    file outside a month's folder or None): the walk's answer, remembered on
    this machine a month at a time while no folder of that month changes
    (bench.records.checked); the months with one that did are walked again."""
    root = os.path.join(str(data_dir), "")
    listed: dict[str, list[int] | None] = {}
    known = memo.walk(_is_month)
    if known is not None:
        months, stale = known
        for month in stale:  # runs/ and the years' folders as remembered: only these months changed
            found = _month_records(root, month, listed)
            if found:
                months[month] = month_hash(found)
        if stale:
            memo.remember_walk(listed, months, root, again=stale)
        return months, None
    disk = on_disk(data_dir, listed)
    outside = disk.pop(OUTSIDE, None)
    months = {m: month_hash(paths) for m, paths in disk.items()}
    if outside is None:
        memo.remember_walk(listed, months, root)
    return months, outside[0] if outside else None


def _folder(path: str, listed: dict[str, list[int] | None]) -> list[os.DirEntry]:
    """The entries of `path` ([] when it is no folder), its times first put in `listed`."""
    listed[path] = checked.folder_times(path)
    try:
        with os.scandir(path) as it:
            return list(it)
    except (FileNotFoundError, NotADirectoryError):
        return []


def _folders_below(path: str, listed: dict[str, list[int] | None]) -> None:
    """Every folder at and below `path` into `listed` (os.walk's rule: a link to a folder is not followed)."""
    for e in _folder(path, listed):
        if e.is_dir() and not e.is_symlink():
            _folders_below(e.path, listed)


def _records_at(path: str) -> list[str]:
    """json_files(path) for a folder (not a link to one); [path] for a record file; else []."""
    if os.path.isdir(path):
        return [] if os.path.islink(path) else json_files(path)
    name = os.path.basename(path)
    return [path] if name.endswith(".json") and not name.startswith(".tmp-") else []


def is_sparse(data_dir: str | Path) -> bool:
    """A git checkout with sparse-checkout on (scripts/checkout-data.sh): months left out are not on disk."""
    return (Path(data_dir) / ".git" / "info" / "sparse-checkout").is_file()


@dataclass(frozen=True)
class Summary:
    """A fresh summary's lines (one dict per record file), in no order."""

    coverage: Coverage
    lines: tuple[Mapping[str, Any], ...]
    first: str | None = None  # read_some: from this month on ('YYYY-MM') every record was read; None: every one


def read(data_dir: str | Path) -> tuple[Summary | None, str]:
    """(the summary, '') when DATA's summary is fresh; (None, why not) when it
    is missing or stale (the reader then says why in one line and reads the records)."""
    memo = checked.Memo(data_dir)
    cov, why = _fresh_coverage(data_dir, memo)
    if cov is None:
        return None, why
    folder = Path(data_dir) / FOLDER
    lines: list[Mapping[str, Any]] = []
    for month, (count, digest) in sorted(cov.months.items()):
        got, why = _whole_month(folder, month, count, digest, memo)
        if why:
            return None, why
        lines += got
    memo.save()
    return Summary(cov, tuple(lines)), ""


def _whole_month(folder: Path, month: str, count: int, digest: str, memo: checked.Memo) -> tuple[list[dict], str]:
    """(every line of the month's file, '') when it holds the records its coverage
    names, (count, hash), remembered so on this machine; ([], why) when not."""
    got, stat, why = _month_lines(folder / f"{month}.jsonl")
    if why or month_hash(line["path"] for line in got) != (count, digest):
        return [], why or f"{FOLDER}/{month}.jsonl does not hold the records its coverage names"
    memo.remember_file(stat, month, count, digest)
    return got, ""


def _fresh_coverage(data_dir: str | Path, memo: checked.Memo) -> tuple[Coverage | None, str]:
    """(DATA's coverage, '') when it covers runs/; (None, why not)."""
    folder = Path(data_dir) / FOLDER
    if not (folder / COVERAGE).is_file():
        return None, f"no {FOLDER}/{COVERAGE}"
    try:
        cov = Coverage.from_text((folder / COVERAGE).read_text(encoding="utf-8"), f"{FOLDER}/{COVERAGE}")
    except (OSError, UnicodeDecodeError, ValueError) as e:
        return None, str(e)
    disk, outside = _disk_months(data_dir, memo)
    why = stale_months(cov, disk, outside, is_sparse(data_dir))
    return (None, why) if why else (cov, "")


def read_some(data_dir: str | Path, needles: Iterable[bytes | re.Pattern], recent: int,
              newest: int | None = None) -> tuple[Summary | None, str, str | None]:
    """(the summary, '', since) as read() gives it, but holding of the months
    before the newest `recent` only the lines that hold one of `needles`, the
    "skipped" ones and those of a night, or started, in those months or
    later: `bench show` reads its own target's lines of every month and every
    line of the last few. `since`: None when no line was left out, else the
    first of the `recent` months ('YYYY-MM'): every record of a night, or
    started, from then on was read, wherever it lies (a record lies in its
    start's month, but its night may be later, and a file laid by hand anywhere).

    A needle is the exact text line_text writes (sorted keys, no spaces), for
    example target_needle(backend, device); every line is written by
    line_text, so a line that holds the field holds the needle. A line that
    holds it by chance is read too (the caller checks the parsed fields). A
    month read in part is still checked against its coverage: its paths,
    taken from the text (each line's "night", "nightly" and "path", adjacent
    as line_text sorts them), count and hash, unless this machine checked the
    same file so before and kept its facts (bench.records.checked).

    `newest`: open only the newest `newest` months, and an older one unless
    its coverage shows that none of its records' nights and starts falls in
    them (Coverage.dates); the summary's `first` then names the first of
    those months: every record of a night, or started, from then on was
    read, wherever it lies. Every month is still checked against runs/: a
    month left unopened is fresh by its count and hash, and its dates are
    those of its records, which are never edited."""
    if recent < 1:  # `since` names the first month read whole: there must be one
        raise ValueError(f"read_some: recent {recent!r}; expected 1 or more months read whole")
    if newest is not None and newest < recent:
        raise ValueError(f"read_some: newest {newest!r}; expected at least the {recent} months read whole")
    memo = checked.Memo(data_dir)
    cov, why = _fresh_coverage(data_dir, memo)
    if cov is None:
        return None, why, None
    folder = Path(data_dir) / FOLDER
    months = sorted(cov.months.items())
    whole = [m for m, _ in months[-recent:]]
    wanted = Wanted(tuple(needles), whole[0])
    first = months[-newest][0] if newest is not None and newest < len(months) else None
    lines: list[Mapping[str, Any]] = []
    partial = unopened = False
    for month, (count, digest) in months:
        if first is not None and _before(cov, month, first):
            if count:
                unopened = partial = True
            continue
        if month in whole:
            got, why = _whole_month(folder, month, count, digest, memo)
            if why:
                return None, why, None
        else:
            path = folder / f"{month}.jsonl"
            got, paths, facts, stat, why = _some_lines(
                path, wanted, lambda st: memo.facts(st, month, count, digest))
            if why or not (paths is None or _bytes_hash(paths) == (count, digest)):
                return None, why or f"{FOLDER}/{path.name} does not hold the records its coverage names", None
            partial = partial or len(got) < count
            memo.remember_file(stat, month, count, digest, facts)
        lines += got
    memo.save()
    return Summary(cov, tuple(lines), first if unopened else None), "", whole[0] if partial else None


def _before(cov: Coverage, month: str, first: str) -> bool:
    """Whether the coverage shows that every record of `month` is of a night,
    and started, before month `first` (a month whose dates are unknown is not)."""
    return month < first and month in cov.dates and all(d < first for d in cov.dates[month])


def target_needle(backend: str, device: str) -> bytes:
    """The text of a line of (backend, device) as line_text writes it: the two keys are adjacent when sorted."""
    return f'"backend":{_dumps(backend)},"device":{_dumps(device)},'.encode()


def _dumps(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _bytes_hash(paths: list[bytes]) -> tuple[int, str]:
    """month_hash of paths given as UTF-8 (sorted as bytes, the order of their text)."""
    paths = sorted(paths)
    return len(paths), hashlib.sha256(b"\n".join(paths)).hexdigest()


def _finder(pattern: re.Pattern, raw: bytes):
    """bytes.find's shape for a pattern: (pattern, start) -> where it matches or -1."""
    def find(_, start: int = 0) -> int:
        m = pattern.search(raw, start)
        return m.start() if m else -1
    return find


@dataclass(frozen=True)
class Wanted:
    """What read_some reads of a month it reads in part: the lines that hold
    one of `targets`, those of a night or started in month `since` or later
    (the months read whole, and any after them), and the "skipped" ones."""

    targets: tuple[bytes, ...]
    since: str

    def later(self, dates: frozenset[str]) -> re.Pattern | None:
        """A pattern of the lines of a night, or started, in those of `dates`
        (a file's months) from `since` on; None when there are none."""
        months = sorted(m for m in dates if m >= self.since)
        if not months:
            return None
        alternatives = b"|".join(re.escape(m.encode()) for m in months)
        return re.compile(b'"(?:night|started_at)":"(?:' + alternatives + b')-')


# Each line's night and path, as line_text writes every line of a record (its
# keys sorted: "night", "nightly", "path" follow each other); a "skipped" line
# has neither night nor "nightly", and is found by its own text. A path
# holding a quote (escaped) is cut at it: its month then does not match its
# coverage, and the reader reads the records, as for any stale month.
_NIGHT_PATH = re.compile(rb'"night":"([0-9]{4}-[0-9]{2})-[0-9]{2}","nightly":(?:true|false),"path":"([^"]*)"')
# Each line's start (its "started_at"; a line holding the text in another
# field too is read as well, as a needle's chance match is).
_STARTED = re.compile(rb'"started_at":"([0-9]{4}-[0-9]{2})-')


def _some_lines(path: Path, wanted: Wanted, known) -> tuple[list[dict], list[bytes] | None, checked.Facts | None, Any, str]:
    """(the lines of a month file that `wanted` asks for, parsed, in file
    order; every line's path, as UTF-8, taken from the text, or None when the
    file need not be checked (its facts known); its Facts; the os.fstat of the file; why not).
    `known(fstat)`: this file's Facts when this machine checked it and found
    them (bench.records.checked), else None. Facts known spare the check and
    the scans for the "skipped" lines and, when no line's night or start
    falls in `wanted.since` or later, for those lines."""
    import orjson

    try:
        with open(path, "rb") as f:
            stat = os.fstat(f.fileno())
            # Mapped, not read: the month is searched, not copied (a third of the time at ten years).
            raw = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if stat.st_size else b""
        facts = known(stat)
        if facts is not None and not all(at < len(raw) and (at == 0 or raw[at - 1:at] == b"\n") for at in facts.skipped):
            facts = None  # not where lines start: found again
        found = None
        if facts is None:
            # One scan gives the nights' months and, for the check, the paths; one more the starts'.
            found = _NIGHT_PATH.findall(raw)
            months = frozenset(m.decode() for m, _ in found) | frozenset(m.decode() for m in _STARTED.findall(raw))
            # A "skipped" line is {"path": ..., "skipped": ...}: found by its text; a
            # line that holds that text by chance is dropped once parsed.
            maybe = _holding(raw, (b'","skipped":',))
        else:
            months, maybe = facts.dates, set(facts.skipped)
        later = wanted.later(months)
        scan = wanted.targets + ((later,) if later is not None else ())
        starts = _holding(raw, scan)
        every = sorted(starts | maybe)
        parsed = orjson.loads(b"[" + b",".join(_cut(raw, every)) + b"]")
        is_skipped = [isinstance(x, dict) and "skipped" in x for x in parsed]
        skipped = [at for at, k in zip(every, is_skipped) if k]
        lines = [x for at, x, k in zip(every, parsed, is_skipped) if at in starts or k]
        if isinstance(raw, mmap.mmap):
            raw.close()
    except (OSError, ValueError) as e:
        return [], [], None, None, f"{FOLDER}/{path.name}: {str(e).splitlines()[0]}"
    if not all(isinstance(x, dict) and isinstance(x.get("path"), str) for x in lines):
        return [], [], None, None, f"{FOLDER}/{path.name}: a line without a path; expected one JSON object per record"
    # Facts are found only with the check that every line's path is the
    # coverage's (a line whose night the pattern missed fails it), and kept
    # only once it passed (read_some): a month trusted without them is checked here.
    paths: list[bytes] | None = None
    if facts is None:
        paths = [p for _, p in found]
        if b"\\" in b"".join(paths):  # an escape: the paths as text
            paths = [orjson.loads(b'"' + x + b'"').encode() for x in paths]
        paths += [x["path"].encode() for x in lines if "skipped" in x]
    return lines, paths, facts or checked.Facts(tuple(skipped), months), stat, ""


def _holding(raw, needles: tuple) -> set[int]:
    """Where each line that holds one of `needles` starts."""
    starts = set()
    for needle in needles:
        find = raw.find if isinstance(needle, bytes) else _finder(needle, raw)
        at = find(needle)
        while at != -1:
            starts.add(raw.rfind(b"\n", 0, at) + 1)
            end = raw.find(b"\n", at)
            at = -1 if end == -1 else find(needle, end)
    return starts


def _cut(raw, starts) -> list[bytes]:
    """The lines that start at `starts`, in file order."""
    picked = []
    for start in sorted(starts):
        end = raw.find(b"\n", start)
        picked.append(raw[start:len(raw) if end == -1 else end])
    return picked


def stale_months(cov: Coverage, disk: Mapping[str, tuple[int, str]], outside: str | None = None,
                 sparse: bool = False) -> str:
    """'' when `cov` covers `disk` ({month: (count, hash)} of runs/; `outside`:
    a record file outside a month's folder) as the module docstring says,
    else the first difference, in words."""
    if outside is not None:
        return f"{outside} is not in a runs/YYYY/MM/ folder, which it covers"
    for month in sorted(disk):
        if month not in cov.months:
            return f"runs/{month.replace('-', '/')} ({disk[month][0]} files) is not in it"
        if disk[month] != cov.months[month]:
            return (f"runs/{month.replace('-', '/')} holds {disk[month][0]} files, "
                    f"it covers {cov.months[month][0]} (or other ones)")
    missing = [m for m in cov.months if m not in disk and cov.months[m][0]]
    if missing and not sparse:
        return f"it covers runs/{missing[0].replace('-', '/')}, which is not on disk"
    return ""


def _month_lines(path: Path) -> tuple[list[dict], Any, str]:
    """(the month file's lines, the os.fstat of the file read, why not)."""
    import orjson  # twice as fast as json here (0.5 s against 1.1 s CPU for ten years' 76 MB); same values

    try:
        with open(path, "rb") as f:
            stat = os.fstat(f.fileno())
            raw = f.read()
        # One parse for the whole month: one C call instead of one per line.
        # Split as bytes: a str's splitlines also splits at U+2028, which a
        # line may hold inside a string (written with ensure_ascii=False).
        lines = orjson.loads(b"[" + b",".join(raw.splitlines()) + b"]")
    except (OSError, ValueError) as e:  # orjson.JSONDecodeError is a ValueError; bad UTF-8 is one too
        return [], None, f"{FOLDER}/{path.name}: {str(e).splitlines()[0]}"
    if not all(isinstance(x, dict) and isinstance(x.get("path"), str) for x in lines):
        return [], None, f"{FOLDER}/{path.name}: a line without a path; expected one JSON object per record"
    return lines, stat, ""


def line_text(line: Mapping[str, Any]) -> str:
    return json.dumps(line, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def month_text(lines: Iterable[Mapping[str, Any]]) -> str:
    """A month file's text: its lines sorted by path (so a rebuild writes the same bytes)."""
    return "".join(line_text(x) + "\n" for x in sorted(lines, key=lambda x: x["path"]))


def merge_month(old_text: str | None, new: Iterable[Mapping[str, Any]]) -> tuple[str, tuple[int, str], tuple[str, ...]]:
    """A month file's text with `new` lines added (a path already there keeps its
    line: a record is never edited), the month's (count, hash) and its dates (dates_of)."""
    lines, parsed = {}, []
    for raw in (old_text or "").split("\n"):  # not splitlines: a string may hold U+2028
        if raw.strip():
            parsed.append(json.loads(raw))
            lines[parsed[-1]["path"]] = raw
    for x in new:
        if x["path"] not in lines:
            lines[x["path"]] = line_text(x)
            parsed.append(x)
    text = "".join(lines[p] + "\n" for p in sorted(lines))
    return text, month_hash(lines), dates_of(parsed)


def dates_of(lines: Iterable[Mapping[str, Any]]) -> tuple[str, ...] | None:
    """The months ('YYYY-MM') the lines' nights and starts fall in, sorted;
    None when a line has no night or start (a "skipped" line: a reader must
    open its month to name the file)."""
    found = set()
    for x in lines:
        night, start = x.get("night"), x.get("started_at")
        if not (isinstance(night, str) and isinstance(start, str) and _is_month(night[:7]) and _is_month(start[:7])):
            return None
        found.update((night[:7], start[:7]))
    return tuple(sorted(found))


def write(data_dir: str | Path, months: Mapping[str, list[Mapping[str, Any]]], keep: Coverage | None = None) -> Coverage:
    """Write each month's file from its lines, then coverage.json (last, so a
    reader never sees coverage for a month file not yet written). `keep`: the
    coverage of months not rewritten."""
    folder = Path(data_dir) / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    covered = dict(keep.months) if keep else {}
    dates = dict(keep.dates) if keep else {}
    for month, lines in sorted(months.items()):
        atomic.write_text(folder / f"{month}.jsonl", month_text(lines))
        covered[month] = month_hash(x["path"] for x in lines)
        set_dates(dates, month, dates_of(lines))
    cov = Coverage(covered, dates)
    atomic.write_text(folder / COVERAGE, cov.to_json())
    return cov


def set_dates(dates: dict[str, tuple[str, ...]], month: str, found: tuple[str, ...] | None) -> None:
    """dates[month] = found, or no entry when `found` is None (unknown)."""
    if found is None:
        dates.pop(month, None)
    else:
        dates[month] = found


def with_dates(data_dir: str | Path, months: Mapping[str, tuple[int, str]]) -> Coverage:
    """The coverage of `months` ({month: (count, hash)}) with each month's
    dates worked out afresh from its file (a summary written before months
    carried them, or a hand-edited coverage.json), where the file holds the
    records the month covers; else unknown."""
    dates: dict[str, tuple[str, ...]] = {}
    for month in sorted(months):
        lines, _, why = _month_lines(Path(data_dir) / FOLDER / f"{month}.jsonl")
        if not why and month_hash(x["path"] for x in lines) == months[month]:
            set_dates(dates, month, dates_of(lines))
    return Coverage(months, dates)


def existing(data_dir: str | Path) -> Coverage | None:
    """The coverage on disk, None when missing or unreadable."""
    path = Path(data_dir) / FOLDER / COVERAGE
    try:
        return Coverage.from_text(path.read_text(encoding="utf-8"), str(path))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
