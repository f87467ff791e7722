"""What `bench run` prints on stderr: one progress line per benchmark, then a
summary table of every result. Pure text rendering."""

from __future__ import annotations

import statistics
from typing import Iterable

from bench.records.record import RunRecord


def figure(result: dict) -> str:
    """'1,234 samples/s +-2.1%' for ok, 'failed (timeout): ...' otherwise."""
    if result["status"] == "ok":
        return f"{result['value']:,.0f} {result.get('unit', 'samples/s')} {spread_text(result.get('samples', []))}".rstrip()
    err = result.get("error") or {}
    return f"{result['status']} ({err.get('kind', '?')}): {err.get('message', '')}"


def spread_text(samples: list[float]) -> str:
    """Largest distance of a repeat from the median, as '+-x.x%' ('' for none)."""
    if not samples:
        return ""
    mid = statistics.median(samples)
    return f"±{100 * max(abs(s / mid - 1) for s in samples):.1f}%"


def progress_line(backend: str, device: str, index: int, total: int, result: dict) -> str:
    secs = result.get("child_seconds")
    extra = []
    if result["status"] == "ok":
        extra.append(f"{len(result.get('samples', []))} repeats")
        if "compile_seconds" in result:
            extra.append(f"compile {result['compile_seconds']:.1f} s")
    if secs is not None:
        extra.append(f"{secs:.0f} s")
    tail = f" [{', '.join(extra)}]" if extra else ""
    return f"[{index}/{total}] {backend}/{device} {result['model']} {result['mode']}: {figure(result)}{tail}"


def summary_table(records: Iterable[RunRecord]) -> str:
    """A fixed-width table: backend, device, model, mode, status, value, spread."""
    head = ("BACKEND", "DEVICE", "MODEL", "MODE", "STATUS", "SAMPLES/S", "SPREAD", "NOTE")
    rows = []
    for rec in records:
        for r in rec.data["results"]:
            ok = r["status"] == "ok"
            err = r.get("error") or {}
            note = "" if ok else f"{err.get('kind', '')}: {err.get('message', '')}"
            rows.append((rec.backend, rec.device, r["model"], r["mode"], r["status"],
                         f"{r['value']:,.0f}" if ok else "—", spread_text(r.get("samples", [])) if ok else "",
                         note[:70]))
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head))]
    def cell(i: int, c: str) -> str:
        return c.rjust(widths[i]) if i == 5 else c.ljust(widths[i])  # numbers right-aligned

    lines = ["  ".join(cell(i, c) for i, c in enumerate(row)).rstrip() for row in [head, *rows]]
    return "\n".join(lines) + "\n"
