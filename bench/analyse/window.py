"""The change window of a Regressed / Faster series: which nightlies bracket
the change, the Keras commits between them, and what else changed there.

Pure functions, no I/O. The window is the last point before the detected
change (`Change.index - 1`) and the first point at the new level
(`Change.index`). The Keras commits are linked by commit when both records
know `environment.keras_commit`, else by the date range between the two
nightlies on Keras's default branch (a nightly wheel is built from it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime

from bench.analyse.series import Point, Series
from bench.analyse.trends import Change

KERAS_REPO = "https://github.com/keras-team/keras"
KERAS_BRANCH = "master"
# keras-nightly versions end in .devYYYYMMDDHH: the UTC hour it was built.
_DEV = re.compile(r"\.dev(\d{8})(\d{2})?$")
_SHA = re.compile(r"^[0-9a-f]{7,40}$")


@dataclass(frozen=True)
class Nightly:
    """One side of the window: the point's night, Keras version and commit."""

    day: date
    keras_version: str | None
    keras_commit: str | None

    @classmethod
    def of(cls, p: Point) -> "Nightly":
        return cls(p.day, p.keras_version, p.keras_commit)

    def label(self) -> str:
        """'3.16.0.dev2026110502 (2026-11-05)'; the version is '?' when unknown."""
        return f"{self.keras_version or '?'} ({self.day.isoformat()})"


@dataclass(frozen=True)
class EnvChange:
    """Something besides Keras that differs across the window."""

    name: str               # a backend package, 'driver' or 'runner'
    before: str | None      # None: absent on that side
    after: str | None

    def text(self) -> str:
        return f"{self.name} {self.before or '—'} → {self.after or '—'}"


@dataclass(frozen=True)
class Window:
    before: Nightly
    after: Nightly
    commits_url: str
    by: str                 # 'commit' or 'date': how commits_url picks the commits
    env_changes: tuple[EnvChange, ...] = ()

    def __post_init__(self):
        if self.by not in ("commit", "date"):
            raise ValueError(f"Window.by is {self.by!r}; expected 'commit' or 'date'")
        if self.after.day <= self.before.day:
            raise ValueError(f"Window: after {self.after.day} is not later than before {self.before.day}")

    def to_json(self) -> dict:
        def side(n: Nightly) -> dict:
            return {"day": n.day.isoformat(), "keras_version": n.keras_version,
                    "keras_commit": n.keras_commit}
        return {"before": side(self.before), "after": side(self.after),
                "commits_url": self.commits_url, "by": self.by,
                "env_changes": [{"name": c.name, "before": c.before, "after": c.after}
                                for c in self.env_changes]}


def change_window(series: Series, change: Change | None) -> Window | None:
    """The window around `change` (None without a change or a point before it)."""
    if change is None or not 1 <= change.index < len(series.points):
        return None
    p0, p1 = series.points[change.index - 1], series.points[change.index]
    before, after = Nightly.of(p0), Nightly.of(p1)
    url, by = commits_link(before, after)
    return Window(before, after, url, by, env_changes(p0, p1))


def commits_link(before: Nightly, after: Nightly) -> tuple[str, str]:
    """(url, 'commit'|'date'): a compare view of the two commits when both are
    known, else the default branch's commits between the two build times."""
    a, b = before.keras_commit, after.keras_commit
    if a and b and _SHA.match(a) and _SHA.match(b):
        return f"{KERAS_REPO}/compare/{a}...{b}", "commit"
    since, until = build_time(before), build_time(after)
    return (f"{KERAS_REPO}/commits/{KERAS_BRANCH}?since={since:%Y-%m-%dT%H:%M:%SZ}"
            f"&until={until:%Y-%m-%dT%H:%M:%SZ}"), "date"


def build_time(n: Nightly) -> datetime:
    """When the nightly was built: its .devYYYYMMDDHH suffix, else the end of
    the night before the point (a nightly installs the wheel built before it)."""
    m = _DEV.search(n.keras_version or "")
    if m:
        try:
            return datetime.strptime(m.group(1) + (m.group(2) or "00"), "%Y%m%d%H")
        except ValueError:
            pass  # a malformed suffix: fall back to the night
    return datetime.combine(n.day, datetime.min.time())


def env_changes(p0: Point, p1: Point) -> tuple[EnvChange, ...]:
    a, b = dict(p0.env), dict(p1.env)
    return tuple(EnvChange(k, a.get(k), b.get(k)) for k in sorted(a.keys() | b.keys())
                 if a.get(k) != b.get(k))
