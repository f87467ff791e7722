"""Which ops moved: the diff of two nights' profile summaries (pure).

A result's `profile` (bench/measure/profiling.py, docs/profiles.md) holds one
profiled call's top ops by time. Across a Regressed or Faster series' change
window, `diff(good, bad)` compares the last night before the change (`good`)
with the first at the new level (`bad`):

  change = bad.ms / good.ms - 1, of an op's time per step (ms): positive when
  the op takes longer on the bad night, whatever the series' own direction.

Each op of either night's top ops gets one OpChange of a kind:
  moved    in both nights' top ops: `change` as above
  new      in the bad night's top ops, absent from the good night's profile
           (neither its top ops nor the other op names it kept)
  gone     in the good night's top ops, absent from the bad night's profile
  up       in the bad night's top ops, among the good night's other ops (it
           ran, below the top: its time then is unknown)
  down     the reverse
and the host's share (host_ms, per step) and the compile and retrace counts
of the profiled call are compared the same way.

What `describe` names: a moved op when its time changed by MIN_CHANGE or
more and it is at least MIN_SHARE of either night's op time (a smaller op's
swing says little); new, gone, up and down ops always. Largest shift in ms
first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from bench.analyse.series import Point, Series
from bench.analyse.trends import Change
from bench.records.profiles import Reader

# (series, point) -> that night's profile summary as the record holds it, or None
Lookup = Callable[[Series, Point], "Mapping[str, Any] | None"]

# An op must move by this much to be named: the profiled call is one call, so
# an op's time moves night to night with the host like the headline does.
MIN_CHANGE = 0.10
MIN_SHARE = 0.02  # ... and make up this share of either night's op time
KINDS = ("moved", "new", "gone", "up", "down")


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0


@dataclass(frozen=True)
class Op:
    name: str
    ms: float     # per step
    calls: float  # per step


@dataclass(frozen=True)
class Profile:
    """One night's profile summary, as the record holds it (bench/records/extensions.PROFILE)."""

    profiler: str
    steps: int
    wall_ms: float
    device_ms: float
    host_ms: float
    ops: tuple[Op, ...]
    other_ops: frozenset[str] = frozenset()
    compiles: int | None = None
    retraces: int | None = None

    def __post_init__(self):
        for name in ("wall_ms", "device_ms", "host_ms"):
            if not _number(getattr(self, name)):
                raise ValueError(f"Profile.{name} is {getattr(self, name)!r}; expected a number >= 0")
        if not isinstance(self.steps, int) or self.steps < 1:
            raise ValueError(f"Profile.steps is {self.steps!r}; expected an integer >= 1")

    @classmethod
    def of(cls, data: Any) -> "Profile | None":
        """The summary in a result's `profile`; None for {"unavailable"}, {"error"},
        a missing one or one of another shape (a reader never fails on it)."""
        if not isinstance(data, Mapping) or not isinstance(data.get("ops"), Mapping):
            return None
        cols = data["ops"]
        names, ms, calls = cols.get("name"), cols.get("ms"), cols.get("calls")
        try:
            if not (isinstance(names, list) and isinstance(ms, list) and isinstance(calls, list)
                    and len(names) == len(ms) == len(calls)
                    and all(isinstance(n, str) for n in names) and all(map(_number, ms + calls))):
                return None
            others = data.get("other_ops") or []
            return cls(str(data.get("profiler")), data.get("steps"), data.get("wall_ms"), data.get("device_ms"),
                       data.get("host_ms"), tuple(Op(n, float(m), float(c)) for n, m, c in zip(names, ms, calls)),
                       frozenset(x for x in others if isinstance(x, str)) if isinstance(others, list) else frozenset(),
                       _count(data.get("compiles")), _count(data.get("retraces")))
        except (ValueError, TypeError):
            return None

    def op(self, name: str) -> Op | None:
        return next((o for o in self.ops if o.name == name), None)

    @property
    def op_ms(self) -> float:
        return sum(o.ms for o in self.ops)


def _count(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


@dataclass(frozen=True)
class OpChange:
    """One op across the window; before/after in ms per step (None: not in that night's top ops)."""

    name: str
    kind: str
    before: float | None
    after: float | None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"OpChange.kind is {self.kind!r}; expected one of {', '.join(KINDS)}")

    @property
    def change(self) -> float | None:
        """after / before - 1 for a moved op (positive: slower on the bad night), else None."""
        if self.kind != "moved" or not self.before:
            return None
        return self.after / self.before - 1

    @property
    def shift_ms(self) -> float:
        """How many ms per step it moved by (an op outside a top counts 0 there)."""
        return abs((self.after or 0.0) - (self.before or 0.0))

    def text(self) -> str:
        if self.kind == "moved":
            return f"{self.name} {percent(self.change)}"
        return {"new": f"new {self.name}", "gone": f"{self.name} gone",
                "up": f"{self.name} up into the top ops", "down": f"{self.name} out of the top ops"}[self.kind]


@dataclass(frozen=True)
class ProfileDiff:
    """The good night's profile against the bad night's: every op of either's top
    ops (largest shift first), host ms per step, compiles and retraces (before, after)."""

    ops: tuple[OpChange, ...]
    host: tuple[float, float]
    compiles: tuple[int | None, int | None]
    retraces: tuple[int | None, int | None]
    notable: tuple[OpChange, ...]  # what describe names (module docstring)

    @property
    def host_change(self) -> float | None:
        before, after = self.host
        return after / before - 1 if before > 0 else None

    def to_json(self) -> dict:
        return {"ops": [{"name": c.name, "kind": c.kind, "before_ms": c.before, "after_ms": c.after,
                         "change": None if c.change is None else round(c.change, 4)} for c in self.ops],
                "host_ms": list(self.host), "compiles": list(self.compiles), "retraces": list(self.retraces),
                "text": describe(self)}


def percent(change: float | None) -> str:
    """+38 %, -12 % (whole percent; under 1 % as <1 %)."""
    if change is None:
        return "?"
    if abs(change) < 0.005:
        return "±0 %"
    return f"{change * 100:+.0f} %"


def diff(good: Profile, bad: Profile, min_change: float = MIN_CHANGE, min_share: float = MIN_SHARE) -> ProfileDiff | None:
    """The diff across a window (module docstring); None when the two cannot be
    compared (another profiler)."""
    if good.profiler != bad.profiler:
        return None
    changes = []
    for o in good.ops:
        b = bad.op(o.name)
        if b is not None:
            changes.append(OpChange(o.name, "moved", o.ms, b.ms))
        else:
            changes.append(OpChange(o.name, "down" if o.name in bad.other_ops else "gone", o.ms, None))
    for b in bad.ops:
        if good.op(b.name) is None:
            changes.append(OpChange(b.name, "up" if b.name in good.other_ops else "new", None, b.ms))
    changes.sort(key=lambda c: (-c.shift_ms, c.name))
    total = max(good.op_ms, bad.op_ms)

    def notable(c: OpChange) -> bool:
        if c.kind != "moved":
            return True
        share = max(c.before or 0.0, c.after or 0.0) / total if total > 0 else 0.0
        return c.change is not None and abs(c.change) >= min_change and share >= min_share

    return ProfileDiff(tuple(changes), (good.host_ms, bad.host_ms), (good.compiles, bad.compiles),
                       (good.retraces, bad.retraces), tuple(c for c in changes if notable(c)))


def describe(d: ProfileDiff | None, limit: int = 4, min_change: float = MIN_CHANGE) -> str:
    """One line: 'conv2d backward +38 %, new transpose, host +12 %, retraces 0 → 8';
    'no op moved by 10 % or more' when nothing did; '' without a diff."""
    if d is None:
        return ""
    parts = [c.text() for c in d.notable[:limit]]
    if len(d.notable) > limit:
        parts.append(f"{len(d.notable) - limit} more")
    if d.host_change is not None and abs(d.host_change) >= min_change:
        parts.append(f"host {percent(d.host_change)}")
    for name, (before, after) in (("compiles", d.compiles), ("retraces", d.retraces)):
        if before is not None and after is not None and before != after:
            parts.append(f"{name} {before} → {after}")
    return ", ".join(parts) or f"no op moved by {min_change:.0%} or more"


def window_diff(series: Series, change: Change | None, lookup: Lookup | None) -> ProfileDiff | None:
    """The diff across `change`'s window (bench.analyse.window: the last point
    before it is the good night, the first at the new level the bad one);
    None without a change, a lookup, or a profile on either night."""
    if change is None or lookup is None or not 1 <= change.index < len(series.points):
        return None
    good = Profile.of(lookup(series, series.points[change.index - 1]))
    bad = Profile.of(lookup(series, series.points[change.index]))
    return diff(good, bad) if good is not None and bad is not None else None


def records_lookup(data: str | Path) -> Lookup:
    """A Lookup reading the points' own record files under `data` (bench.records.profiles)."""
    reader = Reader(data)
    return lambda s, p: reader.profile(s.backend, s.device, s.model, s.mode, p.run_id, p.attempt, p.started_at)
