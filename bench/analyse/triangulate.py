"""Whose change is it? A Regressed or Faster series against its controls (pure).

The same Keras nightly runs every night on several backends and devices, so
the other cells of that night are the controls of a change:

  - the other backends on the same device,
  - the same backend on the other devices,
  - the other models and modes of the same cell.

Within one slice (a model and a mode: the same workload and metric), a cell
is (backend, device). The series itself is Regressed or Faster by the
status rule (bench.analyse.trends.assess, called, never changed). A control
cell *moved* when its median level from that night on shifted the same way,
clearly beyond its own noise and by at least a quarter of the series' own
step; it *held* when it did not shift clearly. Not the controls' own
status: a control whose change is just below its own bar, or dated a night
apart, still moved with the rest. No control: a cell without nights on both
sides; a cell that clearly moved the other way (another change hit it that
night); a held cell whose backend or device moved the other way everywhere
else (two opposite changes may cancel in it).

Class, first that applies:
  keras    most backends move on most of their devices, and most devices
           move on most of their backends: the change is in Keras's core.
  backend  this backend moves on every device it runs on (at least two;
           EVERY), while the backends that do not move everywhere hold on
           the devices that do not move everywhere.
  device   every backend on this device moves (at least two), while the
           backends elsewhere hold, those that move everywhere left aside.
  series   none of these: this series alone (perhaps with other models or
           modes of its own cell, which the evidence counts).

"Left aside" is what lets two unrelated changes land on one night: a jax
release and a driver update the same night move the jax column and the
device's row; each cell of the column is the backend's, each of the row the
device's, and the cell in both is both (`also`).

Evidence: the moved and held cells, for a backend change the backend's own
package versions across the window (or none: only Keras changed), for a
device change the machine's fields that changed (driver, CUDA, runner, OS, ...).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date, timedelta
from statistics import median
from typing import Mapping

from bench.analyse import envsummary
from bench.analyse.series import Point, Series, SeriesKey
from bench.analyse.noise import level_noise
from bench.analyse.trends import MEDIAN_SE, Assessment

KINDS = ("keras", "backend", "device", "series")
# "Most": at least this share of a backend's devices (or a device's backends).
# Two of three is the smallest majority a three-device matrix can show, and a
# Keras change that a backend does not exercise (openvino's own path) still
# leaves most backends moving.
MOST = 2 / 3
# "Every": a backend's own change moves it on every device it runs on, a
# device's on every backend it runs; all but one in four, so that one control
# lost in its noise does not hide the line, while one stray move cannot make one.
EVERY = 0.75
# A control moved when its level from the change's night on, against the
# BEFORE nights before it (medians: a dip barely moves them), shifted the same
# way by at least SHARE of the change's own step and by Z standard errors of
# its own noise; it held otherwise. A quarter, not a half: a cell that two
# changes hit the same night moves by both steps, the cells only one hits by
# one; Z keeps a noisy control's wobble from reading as a move.
SHARE = 0.25
Z = 3.0
BEFORE = 20
MIN_BEFORE, MIN_AFTER = 3, 2   # fewer nights on a side: not a control
# Other models/modes of the cell whose own status dates a change within a
# night of this one count as the same change (a first night that dips dates it one late).
SLACK_DAYS = 1
# Machine fields of envsummary whose change a device class names.
MACHINE = ("driver", "cuda", "cudnn", "gpu", "sm_clock_mhz", "memory_clock_mhz", "power_limit_w",
           "cpu", "governor", "threads", "malloc", "runner", "os")
_NOT_BACKEND = {"driver", "runner"}  # Point.env's fields besides the backend packages


@dataclass(frozen=True)
class Origin:
    """Whose change a series' change is. kind: one of KINDS; night: the
    change's first night; also: a second kind the same cell fits (two changes
    that night); moved / held: the cells ('backend/device') of the same model
    and mode that moved the same way / held that night; siblings: the other
    models and modes of this cell that moved that night; versions: the
    backend's package changes across the window ('jax 0.4.30 → 0.4.31'; empty:
    only Keras changed); machine: the device's changed fields."""

    kind: str
    night: date
    moved: tuple[str, ...] = ()
    held: tuple[str, ...] = ()
    also: tuple[str, ...] = ()
    siblings: tuple[str, ...] = ()
    versions: tuple[str, ...] = ()
    machine: tuple[str, ...] = ()
    backend: str = ""
    device: str = ""

    def __post_init__(self):
        for k in (self.kind, *self.also):
            if k not in KINDS:
                raise ValueError(f"Origin.kind {k!r}; expected one of {', '.join(KINDS)}")

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset((self.kind, *self.also))

    def label(self) -> str:
        """'Keras core', 'jax's path', 'device rtx-5070-ti', 'this series alone'
        ('jax's path + device rtx-5070-ti' when the cell fits two)."""
        return " + ".join(_label(k, self.backend, self.device) for k in (self.kind, *self.also))

    def text(self) -> str:
        """The label and its evidence, one line."""
        n = len(self.moved) + len(self.held)
        parts = [f"{self.label()}: {len(self.moved)} of {n} other cells moved the same way "
                 f"on {self.night.isoformat()}"]
        if "backend" in self.kinds:
            parts.append(f"{self.backend} " + (", ".join(self.versions) if self.versions else "unchanged, only Keras"))
        if "device" in self.kinds and self.machine:
            parts.append("machine: " + ", ".join(self.machine))
        if self.siblings:
            parts.append("with " + ", ".join(self.siblings))
        return "; ".join(parts)

    def bisect_keras(self) -> bool:
        """Whether Keras's commits are where to look: not for a device's change."""
        return self.kind != "device" and "device" not in self.also

    def to_json(self) -> dict:
        return {"kind": self.kind, "also": list(self.also), "label": self.label(), "text": self.text(),
                "night": self.night.isoformat(), "moved": list(self.moved), "held": list(self.held),
                "siblings": list(self.siblings), "versions": list(self.versions),
                "machine": list(self.machine)}


def _label(kind: str, backend: str, device: str) -> str:
    return {"keras": "Keras core", "backend": f"{backend}'s path", "device": f"device {device}",
            "series": "this series alone"}[kind]


def triangulate(series: Mapping[SeriesKey, Series], assessed: Mapping[SeriesKey, Assessment],
                ) -> dict[SeriesKey, Origin]:
    """An Origin for every series whose assessment is Regressed or Faster and
    that has at least one control cell (alone in its slice, nothing can be told)."""
    changes = {k: c for k in series if (c := _change(series[k], assessed.get(k))) is not None}
    shifts: dict = {}  # (key, night) -> _shift: a Keras change asks every cell the same question
    out = {k: _classify(k, night, step, series, changes, shifts) for k, (night, step) in changes.items()}
    return {k: o for k, o in out.items() if o.moved or o.held}


def _change(s: Series, a: Assessment | None) -> tuple[date, float] | None:
    """(first night of the change, its step in logs, up = better), or None."""
    if a is None or a.status not in ("Regressed", "Faster") or a.change is None:
        return None
    if not 0 <= a.change.index < len(s.points):
        return None
    x = math.log1p(a.change.relative)
    return s.points[a.change.index].day, -x if s.better == "smaller" else x


def _cells(key: SeriesKey, night: date, step: float, series, shifts: dict) -> dict[tuple[str, str], bool]:
    """{(backend, device): moved} of the slice of `key` with nights on both sides of `night`."""
    out = {}
    for k, s in series.items():
        if k[2:] != key[2:]:
            continue
        if k == key:
            out[k[:2]] = True  # the series itself moved, by its status
            continue
        if (k, night) not in shifts:
            shifts[(k, night)] = _shift(s, night)
        if shifts[(k, night)] is not None:
            x, se = shifts[(k, night)]
            clear = abs(x) >= max(SHARE * abs(step), Z * se)
            out[k[:2]] = None if clear and x * step < 0 else clear
    return _controls(out)


def _controls(cells: dict) -> dict[tuple[str, str], bool]:
    """The cells that are controls: not those that moved the other way (another
    change hit them that night, value None), nor a held cell on a line whose
    other cells all moved the other way (that line had its own change, which
    may have cancelled this one in this cell)."""
    def other_way(axis: int, name: str, but: tuple[str, str]) -> bool:
        rest = [m for c, m in cells.items() if c[axis] == name and c != but]
        return len(rest) >= 2 and sum(m is None for m in rest) >= EVERY * len(rest)

    return {c: m for c, m in cells.items()
            if m is not None and (m or not (other_way(0, c[0], c) or other_way(1, c[1], c)))}


def _shift(s: Series, night: date) -> tuple[float, float] | None:
    """(shift, its standard error) in logs, up = better: the median from
    `night` on against the level of the BEFORE nights before it (dips
    skipped, noise.level_noise); None without nights enough on both sides."""
    sign = -1.0 if s.better == "smaller" else 1.0
    before = [sign * math.log(p.value) for p in s.points if p.day < night][-BEFORE:]
    after = [sign * math.log(p.value) for p in s.points if p.day >= night]
    if len(before) < MIN_BEFORE or len(after) < MIN_AFTER:
        return None
    level, sigma, kept = level_noise(before)
    return median(after) - level, MEDIAN_SE * sigma * math.sqrt(1 / len(after) + 1 / kept)


def _classify(key: SeriesKey, night: date, step: float, series, changes, shifts: dict) -> Origin:
    cells = _cells(key, night, step, series, shifts)
    backend, device = key[0], key[1]
    kinds = _kinds(backend, device, cells)
    s = series[key]
    # The environment across the change, a night wider on each side: the
    # status rule may date a change a night late (or early) of what moved it.
    slack = timedelta(days=SLACK_DAYS)
    before = ([p for p in s.points if p.day < night - slack] or [s.points[0]])[-1]
    after = ([p for p in s.points if p.day >= night + slack] or [s.points[-1]])[0]
    moved = tuple(sorted("/".join(c) for c, m in cells.items() if m and c != key[:2]))
    held = tuple(sorted("/".join(c) for c, m in cells.items() if not m))
    siblings = tuple(sorted("/".join(k[2:]) for k, c in changes.items()
                            if k[:2] == key[:2] and k != key and c[1] * step > 0
                            and abs((c[0] - night).days) <= SLACK_DAYS))
    return Origin(kinds[0], night, moved, held, kinds[1:], siblings,
                  _versions(before, after) if "backend" in kinds else (),
                  _machine(before, after) if "device" in kinds else (), backend, device)


def _lines(cells: Mapping[tuple[str, str], bool], axis: int, share: float) -> set[str]:
    """Names on `axis` (0 backend, 1 device) that moved in at least `share` of
    their cells, and in at least two (one cell cannot tell a line from a point)."""
    out = set()
    for n in {c[axis] for c in cells}:
        mine = [m for c, m in cells.items() if c[axis] == n]
        if len(mine) >= 2 and sum(mine) >= share * len(mine):
            out.add(n)
    return out


def _kinds(backend: str, device: str, cells) -> tuple[str, ...]:
    if _keras(cells):
        return ("keras",)
    cols, rows = _lines(cells, 0, EVERY), _lines(cells, 1, EVERY)
    out = []
    # Backend: its column moves; the cells outside moving columns and rows hold.
    if backend in cols and _hold(cells, lambda b, d: b != backend and b not in cols and d not in rows):
        out.append("backend")
    if device in rows and _hold(cells, lambda b, d: d != device and d not in rows and b not in cols):
        out.append("device")
    return tuple(out) or ("series",)


def _keras(cells) -> bool:
    """Most backends move on most devices and most devices on most backends,
    the backends counted without the device that moved most: one backend's
    column and one device's row (two changes on one night) are not Keras."""
    backends, devices = {c[0] for c in cells}, {c[1] for c in cells}
    rows = _lines(cells, 1, MOST)
    if len(rows) < max(2, MOST * len(devices)):
        return False
    top = max(devices, key=lambda d: sum(m for c, m in cells.items() if c[1] == d))
    cols = _lines({c: m for c, m in cells.items() if c[1] != top}, 0, MOST)
    return len(cols) >= max(2, MOST * len(backends))


def _hold(cells, where) -> bool:
    """Most of the cells `where` picks held (true when it picks none)."""
    picked = [m for (b, d), m in cells.items() if where(b, d)]
    return sum(not m for m in picked) >= MOST * len(picked)


def _versions(before: Point, after: Point) -> tuple[str, ...]:
    """'pkg old → new' for each backend package that differs across the window."""
    a = {k: v for k, v in before.env if k not in _NOT_BACKEND}
    b = {k: v for k, v in after.env if k not in _NOT_BACKEND}
    return tuple(f"{k} {a.get(k) or '—'} → {b.get(k) or '—'}" for k in sorted(a.keys() | b.keys())
                 if a.get(k) != b.get(k))


def _machine(before: Point, after: Point) -> tuple[str, ...]:
    """'field old → new' for each machine field (MACHINE) that differs across the window."""
    changed = envsummary.changes(before.state, after.state)
    return tuple(f"{f} {old or '—'} → {new or '—'}" for f, old, new in changed
                 if f in MACHINE)
