"""One series night by night, as plain text for the terminal (`bench show`,
like `asv show`): date, value, Δ to the night before, Keras version and
commit, the host's speed against the nights before (bench/analyse/host.py:
positive is a slower host), and a mark saying how the status rule reads the night.

Marks: '◆' the first night at a new level (the change), '▼' / '▲' a night
off the level beyond the noise band (worse / better, in the series'
direction), '✖' a failure that night. No mark: within the noise band.
"""

from __future__ import annotations

import math

from bench.analyse import host
from bench.analyse.series import Series
from bench.analyse.trends import BASELINE, Assessment, band
from bench.analyse.window import change_window
from bench.config import Trends
from bench.present.escape import plain
from bench.present.format import DASH, format_delta, format_value


def render_nights(s: Series, a: Assessment, t: Trends, last: int | None = None) -> str:
    """The series' nights (its `last` nights when it has more, and the
    failures since the first of them), then its change window. What a
    night shows depends only on the BASELINE nights before it, so the
    last nights read the same whether the series holds every older night or not."""
    half = band(a.noise, t)
    change = a.change.index if a.change is not None else None
    n = len(s.points)
    first = n - last if last is not None and n > last else 0
    nights = f"the last {last} nights (--all: every night)" if first else f"{n} nights"
    lines = [f"{plain('/'.join(s.key))}: {a.status}, {nights}, {s.unit} "
             f"({s.better} is better); level {format_value(a.level) if a.level else DASH}, "
             f"noise band ±{math.expm1(half):.1%}"]
    rows = [("NIGHT", "VALUE", "Δ PREV", "KERAS", "COMMIT", "HOST", "MARK")]
    # A night's host shift reads the BASELINE nights before it, by position:
    # the points from BASELINE before the first printed give the same shifts.
    context = max(0, first - BASELINE)
    hosts = [None] * context + host.night_shifts(s.points[context:], before=BASELINE)
    prev = s.points[first - 1].value if first else None
    for i in range(first, n):
        p = s.points[i]
        rows.append((p.day.isoformat(), f"{p.value:.6g}",
                     format_delta(p.value / prev - 1) if prev else DASH,
                     plain(p.keras_version or DASH), plain((p.keras_commit or DASH)[:12]),
                     format_delta(hosts[i]) if hosts[i] is not None else DASH,
                     _mark(p.value, _level_at(a, i), half, s.better, i == change)))
        prev = p.value
    since = s.points[first].day if first else None
    for f in s.failures:
        if since is None or f.started_at.date() >= since:
            rows.append((f.started_at.date().isoformat(), DASH, DASH, plain(f.keras_version or DASH), DASH, DASH,
                         plain(f"✖ {f.kind}")))
    # Record text is made plain where it enters (no escape sequence, no line
    # break); the dates, numbers and marks are this module's own.
    rows[1:] = sorted(rows[1:], key=lambda r: r[0])
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    w = change_window(s, a.change)
    if w is not None:
        lines.append(plain(f"change: Keras {w.before.label()} → {w.after.label()}"))
        lines.append(f"Keras commits ({w.by}): {w.commits_url}")
        lines += [plain(f"also changed: {c.text()}") for c in w.env_changes]
    return "\n".join(lines) + "\n"


def _level_at(a: Assessment, i: int) -> float | None:
    if a.change is None:
        return a.level
    return a.change.after if i >= a.change.index else a.change.before


def _mark(v: float, level: float | None, half: float, better: str, is_change: bool) -> str:
    if is_change:
        return "◆ change"
    if level is None:
        return ""
    off = math.log(v / level)
    if abs(off) <= half:
        return ""
    return "▲" if (off > 0) == (better == "bigger") else "▼"
