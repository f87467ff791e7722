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


def render_nights(s: Series, a: Assessment, t: Trends) -> str:
    half = band(a.noise, t)
    change = a.change.index if a.change is not None else None
    lines = [f"{plain('/'.join(s.key))}: {a.status}, {len(s.points)} nights, {s.unit} "
             f"({s.better} is better); level {format_value(a.level) if a.level else DASH}, "
             f"noise band ±{math.expm1(half):.1%}"]
    rows = [("NIGHT", "VALUE", "Δ PREV", "KERAS", "COMMIT", "HOST", "MARK")]
    prev, hosts = None, host.night_shifts(s.points, before=BASELINE)
    for i, p in enumerate(s.points):
        level = _level_at(a, i)
        rows.append((p.day.isoformat(), f"{p.value:.6g}",
                     format_delta(p.value / prev - 1) if prev else DASH,
                     p.keras_version or DASH, (p.keras_commit or DASH)[:12],
                     format_delta(hosts[i]) if hosts[i] is not None else DASH,
                     _mark(p.value, level, half, s.better, i == change)))
        prev = p.value
    for f in s.failures:
        rows.append((f.started_at.date().isoformat(), DASH, DASH, f.keras_version or DASH, DASH, DASH,
                     f"✖ {f.kind}"))
    rows[1:] = sorted(rows[1:], key=lambda r: r[0])
    rows = [tuple(plain(c) for c in r) for r in rows]  # record text: no escape sequence, no line break
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
