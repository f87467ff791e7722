"""A series' status once its triage marks are read (pure; docs/triage.md).

The status rule (bench.analyse.trends.assess) runs unchanged; then the mark
on the change it found, if any, is looked up: the mark of the same series
whose night is within a night of the change's first night (a later night's
points can re-date a change by one). `invalid` says the change was the
machine: it stops counting toward Regressed (and Faster), and the series
reads Steady at its newest level. `acknowledged` and `fixed` keep the status
and are shown beside it.
"""

from __future__ import annotations

from typing import Iterable

from bench.analyse.series import Series
from bench.analyse.trends import Assessment
from bench.records.triage import Mark

SLACK_DAYS = 1  # a change re-dated by a night is still the one that was marked


def mark_of(s: Series, a: Assessment, marks: Iterable[Mark]) -> Mark | None:
    """The newest-issue mark on `a`'s change, None without a change or a mark."""
    if a.change is None or not 0 <= a.change.index < len(s.points):
        return None
    night = s.points[a.change.index].day
    name = "/".join(s.key)
    found = [m for m in marks if m.series == name and abs((m.day - night).days) <= SLACK_DAYS]
    return max(found, key=lambda m: m.issue) if found else None


def triaged(s: Series, a: Assessment, marks: Iterable[Mark]) -> tuple[Assessment, Mark | None]:
    """(the status after the marks, the mark on its change)."""
    m = mark_of(s, a, marks)
    if m is not None and m.mark == "invalid" and a.status in ("Regressed", "Faster"):
        return Assessment("Steady", level=a.level, noise=a.noise), m
    return a, m
