"""The note fragments for whose change it is and its triage mark (shared by
the README/HTML table note, the dashboard, `bench show` and the alert issue)."""

from __future__ import annotations

from bench.analyse.triangulate import Origin
from bench.records.triage import Mark

MARK_WORDS = {"acknowledged": "acknowledged (expected)", "invalid": "marked invalid (the machine), not counted",
              "fixed": "marked fixed"}


def origin_text(o: Origin | None) -> str:
    """'jax's path (jax 0.4.30 → 0.4.31)', 'jax's path (only Keras changed)',
    'Keras core (7 of 8 cells)', 'device rtx-5070-ti (driver 570 → 575)',
    'this series alone (0 of 7 cells)'; '' without an origin."""
    if o is None:
        return ""
    bits = []
    if "backend" in o.kinds:
        bits.append(", ".join(o.versions) if o.versions else "only Keras changed")
    if "device" in o.kinds and o.machine:
        bits.append(", ".join(o.machine))
    if o.kinds & {"keras", "series"}:
        bits.append(f"{len(o.moved)} of {len(o.moved) + len(o.held)} other cells moved")
    return f"{o.label()} ({'; '.join(bits)})" if bits else o.label()


def mark_text(m: Mark | None) -> str:
    """'acknowledged (expected) #12 https://…' (the link when one was given): '' without a mark."""
    if m is None:
        return ""
    where = f"#{m.issue}" + (f" {m.link}" if m.link else "")
    return f"{MARK_WORDS[m.mark]} {where} (change of {m.night})"


def origin_note(r) -> str:
    return origin_text(r.origin)


def mark_note(r) -> str:
    return mark_text(r.mark)
