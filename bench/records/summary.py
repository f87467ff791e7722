"""The derived summary beside runs/: what the readers need of every record,
one JSON line per record, one file per month (docs/scale.md).

DATA/summary/
  coverage.json   {"format": 2, "count": N, "hash": H, "months": {"YYYY-MM": {"count": n, "hash": h}}}
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
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from bench.records import atomic
from bench.records.history import json_files

FOLDER = "summary"
COVERAGE = "coverage.json"
FORMAT = 2


@dataclass(frozen=True)
class Coverage:
    """Which record files a summary covers: per month (count, hash)."""

    months: Mapping[str, tuple[int, str]]

    def __post_init__(self):
        for month, (count, digest) in self.months.items():
            if not _is_month(month) or not isinstance(count, int) or count < 0 or not isinstance(digest, str):
                raise ValueError(f"summary coverage month {month!r}: ({count!r}, {digest!r}); "
                                 "expected 'YYYY-MM': (count >= 0, sha256 hex)")

    @property
    def count(self) -> int:
        return sum(c for c, _ in self.months.values())

    @property
    def digest(self) -> str:
        text = "".join(f"{m} {h}\n" for m, (_, h) in sorted(self.months.items()))
        return hashlib.sha256(text.encode()).hexdigest()

    def to_json(self) -> str:
        return json.dumps({"format": FORMAT, "count": self.count, "hash": self.digest,
                           "months": {m: {"count": c, "hash": h} for m, (c, h) in sorted(self.months.items())}},
                          sort_keys=True, indent=1) + "\n"

    @classmethod
    def from_text(cls, text: str, source: str) -> "Coverage":
        try:
            data = json.loads(text)
            if data.get("format") != FORMAT:
                raise ValueError(f"format {data.get('format')!r}; expected {FORMAT}")
            cov = cls({m: (v["count"], v["hash"]) for m, v in data["months"].items()})
            if (data.get("count"), data.get("hash")) != (cov.count, cov.digest):
                raise ValueError("count and hash do not match its months")
            return cov
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


def on_disk(data_dir: str | Path) -> dict[str, list[str]]:
    """{month: [relpath, ...]} of every record file under DATA/runs (OUTSIDE:
    those not in a month's folder, which no summary covers)."""
    root = os.path.join(str(data_dir), "")
    out: dict[str, list[str]] = {}
    for f in json_files(os.path.join(root, "runs")):
        rel = f[len(root):].replace(os.sep, "/")
        out.setdefault(month_of(rel) or OUTSIDE, []).append(rel)
    return out


def is_sparse(data_dir: str | Path) -> bool:
    """A git checkout with sparse-checkout on (scripts/checkout-data.sh): months left out are not on disk."""
    return (Path(data_dir) / ".git" / "info" / "sparse-checkout").is_file()


@dataclass(frozen=True)
class Summary:
    """A fresh summary's lines (one dict per record file), in no order."""

    coverage: Coverage
    lines: tuple[Mapping[str, Any], ...]


def read(data_dir: str | Path) -> tuple[Summary | None, str]:
    """(the summary, '') when DATA's summary is fresh; (None, why not) when it
    is missing or stale (the reader then says why in one line and reads the records)."""
    folder = Path(data_dir) / FOLDER
    if not (folder / COVERAGE).is_file():
        return None, f"no {FOLDER}/{COVERAGE}"
    try:
        cov = Coverage.from_text((folder / COVERAGE).read_text(encoding="utf-8"), f"{FOLDER}/{COVERAGE}")
    except (OSError, UnicodeDecodeError, ValueError) as e:
        return None, str(e)
    why = stale_months(cov, on_disk(data_dir), is_sparse(data_dir))
    if why:
        return None, why
    lines: list[Mapping[str, Any]] = []
    for month, (count, digest) in sorted(cov.months.items()):
        got, why = _month_lines(folder / f"{month}.jsonl")
        if why or month_hash(line["path"] for line in got) != (count, digest):
            return None, why or f"{FOLDER}/{month}.jsonl does not hold the records its coverage names"
        lines += got
    return Summary(cov, tuple(lines)), ""


def stale_months(cov: Coverage, disk: Mapping[str, list[str]], sparse: bool = False) -> str:
    """'' when `cov` covers `disk` (see the module docstring), else the first difference, in words."""
    if OUTSIDE in disk:
        return f"{disk[OUTSIDE][0]} is not in a runs/YYYY/MM/ folder, which it covers"
    for month in sorted(disk):
        if month not in cov.months:
            return f"runs/{month.replace('-', '/')} ({len(disk[month])} files) is not in it"
        if month_hash(disk[month]) != cov.months[month]:
            return (f"runs/{month.replace('-', '/')} holds {len(disk[month])} files, "
                    f"it covers {cov.months[month][0]} (or other ones)")
    missing = [m for m in cov.months if m not in disk and cov.months[m][0]]
    if missing and not sparse:
        return f"it covers runs/{missing[0].replace('-', '/')}, which is not on disk"
    return ""


def _month_lines(path: Path) -> tuple[list[dict], str]:
    try:
        text = path.read_text(encoding="utf-8")
        # One parse for the whole month: one C call instead of one per line.
        lines = json.loads("[" + ",".join(text.splitlines()) + "]")
    except (OSError, UnicodeDecodeError, ValueError) as e:
        return [], f"{FOLDER}/{path.name}: {str(e).splitlines()[0]}"
    if not all(isinstance(x, dict) and isinstance(x.get("path"), str) for x in lines):
        return [], f"{FOLDER}/{path.name}: a line without a path; expected one JSON object per record"
    return lines, ""


def line_text(line: Mapping[str, Any]) -> str:
    return json.dumps(line, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def month_text(lines: Iterable[Mapping[str, Any]]) -> str:
    """A month file's text: its lines sorted by path (so a rebuild writes the same bytes)."""
    return "".join(line_text(x) + "\n" for x in sorted(lines, key=lambda x: x["path"]))


def merge_month(old_text: str | None, new: Iterable[Mapping[str, Any]]) -> tuple[str, tuple[int, str]]:
    """A month file's text with `new` lines added (a path already there keeps its
    line: a record is never edited), and the month's (count, hash)."""
    lines = {}
    for raw in (old_text or "").splitlines():
        if raw.strip():
            lines[json.loads(raw)["path"]] = raw
    for x in new:
        lines.setdefault(x["path"], line_text(x))
    text = "".join(lines[p] + "\n" for p in sorted(lines))
    return text, month_hash(lines)


def write(data_dir: str | Path, months: Mapping[str, list[Mapping[str, Any]]], keep: Coverage | None = None) -> Coverage:
    """Write each month's file from its lines, then coverage.json (last, so a
    reader never sees coverage for a month file not yet written). `keep`: the
    coverage of months not rewritten."""
    folder = Path(data_dir) / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    covered = dict(keep.months) if keep else {}
    for month, lines in sorted(months.items()):
        atomic.write_text(folder / f"{month}.jsonl", month_text(lines))
        covered[month] = month_hash(x["path"] for x in lines)
    cov = Coverage(covered)
    atomic.write_text(folder / COVERAGE, cov.to_json())
    return cov


def existing(data_dir: str | Path) -> Coverage | None:
    """The coverage on disk, None when missing or unreadable."""
    path = Path(data_dir) / FOLDER / COVERAGE
    try:
        return Coverage.from_text(path.read_text(encoding="utf-8"), str(path))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
