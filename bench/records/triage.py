"""Triage marks: what a maintainer said about a change, as a small file.

A maintainer labels an alert issue `acknowledged` (expected; the link says
why), `invalid` (the machine, not the code) or `fixed`. `bench triage` reads
the labels back from GitHub and writes them here, DIR/triage.json beside
runs/, for `bench report`, `site`, `show` and `alert` to read
(docs/triage.md). The labels on the issues are the truth; the file is their
snapshot, rebuilt at every publish, so a removed label removes the mark.

Format 1 (JSON, sorted keys):
  {"format": 1, "kind": "bench-triage",
   "marks": [{"series": "B/D/M/MODE", "night": "YYYY-MM-DD", "mark": "invalid",
              "issue": 12, "url": "https://github.com/o/r/issues/12", "link": null}, ...]}
night: the change's first night, as the alert issue's hidden state has it.
A file that cannot be read is named in one line and read as no marks.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from datetime import date
from pathlib import Path
from typing import Iterable, TextIO

from bench.records import atomic

FORMAT = 1
KIND = "bench-triage"
FILE = "triage.json"
MARKS = ("acknowledged", "invalid", "fixed")
_SERIES = re.compile(r"^[^/\s]+/[^/\s]+/[^/\s]+/[^/\s]+$")


@dataclass(frozen=True)
class Mark:
    """One triaged change: `series` (B/D/M/MODE) changed on `night`; `mark` one
    of MARKS; `issue` its alert issue's number and `url`; `link` the reason a
    maintainer gave (a URL in their comment), None when none."""

    series: str
    night: str
    mark: str
    issue: int
    url: str | None = None
    link: str | None = None

    def __post_init__(self):
        if not (isinstance(self.series, str) and _SERIES.match(self.series)):
            raise ValueError(f"triage mark series {self.series!r}; expected BACKEND/DEVICE/MODEL/MODE")
        try:
            date.fromisoformat(self.night)
        except (TypeError, ValueError):
            raise ValueError(f"triage mark night {self.night!r}; expected YYYY-MM-DD") from None
        if self.mark not in MARKS:
            raise ValueError(f"triage mark {self.mark!r}; expected one of {', '.join(MARKS)}")
        if not (isinstance(self.issue, int) and not isinstance(self.issue, bool) and self.issue > 0):
            raise ValueError(f"triage mark issue {self.issue!r}; expected an issue number > 0")
        for name in ("url", "link"):
            v = getattr(self, name)
            if v is not None and not (isinstance(v, str) and v.startswith(("https://", "http://"))):
                raise ValueError(f"triage mark {name} {v!r}; expected an http(s) URL or null")

    @property
    def day(self) -> date:
        return date.fromisoformat(self.night)


def dumps(marks: Iterable[Mark]) -> str:
    items = sorted((asdict(m) for m in marks), key=lambda m: (m["series"], m["night"], m["issue"]))
    return json.dumps({"format": FORMAT, "kind": KIND, "marks": items}, sort_keys=True, indent=1) + "\n"


def write(data_dir: str | Path, marks: Iterable[Mark]) -> Path:
    return atomic.write_text(Path(data_dir) / FILE, dumps(marks))


def load(data_dir: str | Path, warn: TextIO | None = None) -> tuple[Mark, ...]:
    """The marks of DIR/triage.json; () when there is none. A broken file or
    mark is named in one line on `warn` and left out (the file is not touched)."""
    path = Path(data_dir) / FILE
    if not path.is_file():
        return ()
    try:
        doc = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as e:
        _say(warn, f"{path}: not readable JSON ({e}); read as no triage marks")
        return ()
    if not (isinstance(doc, dict) and doc.get("kind") == KIND and doc.get("format") == FORMAT
            and isinstance(doc.get("marks"), list)):
        _say(warn, f"{path}: expected {{'format': {FORMAT}, 'kind': '{KIND}', 'marks': [...]}}; "
                   "read as no triage marks")
        return ()
    out = []
    for i, m in enumerate(doc["marks"]):
        try:
            if not isinstance(m, dict):
                raise ValueError(f"{m!r}; expected an object")
            out.append(Mark(**{k: m.get(k) for k in ("series", "night", "mark", "issue", "url", "link")}))
        except (TypeError, ValueError) as e:
            _say(warn, f"{path}: marks[{i}]: {e}; left out")
    return tuple(out)


def _say(warn: TextIO | None, line: str) -> None:
    if warn is not None:
        print(f"bench: {line}", file=warn)
