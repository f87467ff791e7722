"""What `bench run` prints on stderr: one progress line per benchmark, then a
summary table of every result. Pure text rendering."""

from __future__ import annotations

import statistics
import threading
import time
from typing import Callable, Iterable

from bench.records.extensions import reference_side
from bench.records.record import RunRecord


def figure(result: dict) -> str:
    """'1,234 samples/s +-2.1%' for ok, 'failed (timeout): ...' otherwise."""
    if result["status"] == "ok":
        return f"{value_text(result)} {result.get('unit', 'samples/s')} {spread_of(result)}".rstrip()
    err = result.get("error") or {}
    return f"{result['status']} ({err.get('kind', '?')}): {err.get('message', '')}"


def value_text(result: dict) -> str:
    """Throughput as a whole number; a latency in ms to 3 significant digits."""
    return f"{result['value']:.3g}" if "latency" in result else f"{result['value']:,.0f}"


def spread_of(result: dict) -> str:
    """A latency's tail (p99), else the repeats' spread: per-call times are not repeats."""
    if isinstance(result.get("latency"), dict):
        return f"p99 {result['latency']['p99_ms']:.3g} ms"
    return spread_text(result.get("samples", []))


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
        n = len(result.get("samples", []))
        extra.append(f"{n} calls" if "latency" in result else f"{n} repeats")
        if "compile_seconds" in result:
            extra.append(f"compile {result['compile_seconds']:.1f} s")
    if secs is not None:
        extra.append(f"{secs:.0f} s")
    tail = f" [{', '.join(extra)}]" if extra else ""
    return f"[{index}/{total}] {backend}/{device} {result['model']} {result['mode']}: {figure(result)}{tail}"


class Eta:
    """Progress of a whole `bench run`: how many benchmark runs (one worker's one
    benchmark) are done of how many, and the time left at the average pace so far.

    `total` is the plan (every backend's workers x its benchmarks); reruns of
    disturbed workers add to it as they start. Safe to call from the threads of
    workers that run at the same time."""

    def __init__(self, total: int, clock: Callable[[], float] = time.monotonic):
        if total < 0:
            raise ValueError(f"Eta: total is {total!r}; expected a count >= 0")
        self.total, self.done, self._clock, self._t0 = total, 0, clock, clock()
        self._lock = threading.Lock()

    def started(self, extra: bool = False) -> None:
        """A benchmark started; `extra`: one the plan did not count (a rerun)."""
        with self._lock:
            self.total += extra

    def finished(self) -> None:
        with self._lock:
            self.done += 1

    def left(self) -> str:
        """'~1m40s left', or 'estimating' before the first benchmark is done."""
        with self._lock:
            if not self.done:
                return "time left: estimating"
            seconds = (self._clock() - self._t0) / self.done * max(self.total - self.done, 0)
        minutes, secs = divmod(round(seconds), 60)
        return f"~{minutes}m{secs:02d}s left" if minutes else f"~{secs}s left"


def eta_line(backend: str, index: int, backends: int, worker: str, model: str, mode: str, eta: Eta) -> str:
    """'jax 2/4, worker 1/3, cnn/train: 14/36 done, ~1m40s left'."""
    return (f"{backend} {index}/{backends}, {worker}, {model}/{mode}: "
            f"{eta.done}/{eta.total} done, {eta.left()}")


def summary_table(records: Iterable[RunRecord]) -> str:
    """A fixed-width table: backend, device, model, mode, status, value, spread."""
    head = ("BACKEND", "DEVICE", "MODEL", "MODE", "STATUS", "SAMPLES/S", "SPREAD", "NOTE")
    rows = []
    for rec in records:
        for r in rec.data["results"]:
            ok = r["status"] == "ok"
            err = r.get("error") or {}
            note = (_workers_note(r) if ok else f"{err.get('kind', '')}: {err.get('message', '')}")
            if reference_side(rec.data) == "a":
                note = f"the reference build: {note}"
            rows.append((rec.backend, rec.device, r["model"], r["mode"], r["status"],
                         value_text(r) if ok else "—", spread_of(r) if ok else "",
                         note[:70]))
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head))]
    def cell(i: int, c: str) -> str:
        return c.rjust(widths[i]) if i == 5 else c.ljust(widths[i])  # numbers right-aligned

    lines = ["  ".join(cell(i, c) for i, c in enumerate(row)).rstrip() for row in [head, *rows]]
    return "\n".join(lines) + "\n" + "".join(unstable_warnings(records))


def _workers_note(r: dict) -> str:
    """Protocol 2: '5 workers, 1 disturbed (rerun), may be unstable', and
    with --reference '0.987x the reference (5 pairs)', with native on
    'Keras 1.234x native's time'."""
    nat = r.get("native")  # bench/measure/native.py: Keras's time over native code's (protocol 1 too)
    native_note = (f"Keras {nat['ratio']:.3f}x native's time" if isinstance(nat, dict) and
                   isinstance(nat.get("ratio"), (int, float)) else
                   f"native failed ({nat['error'].get('kind')})" if isinstance(nat, dict) and
                   isinstance(nat.get("error"), dict) else None)
    if "workers" not in r:
        return native_note or ""
    parts = [f"{len(r['workers'])} workers"]
    ref = r.get("reference")
    if isinstance(ref, dict) and isinstance(ref.get("ratio"), (int, float)):
        parts.append(f"{ref['ratio']:.3f}x the reference ({ref.get('pairs')} pairs)")
    if native_note:
        parts.append(native_note)
    if r.get("disturbed_workers"):
        parts.append(f"{r['disturbed_workers']} disturbed (rerun)")
    if r.get("failed_workers"):
        parts.append(f"{r['failed_workers']} failed")
    if r.get("unstable"):
        parts.append("may be unstable")
    return ", ".join(parts)


def unstable_warnings(records: Iterable[RunRecord]) -> str:
    """pyperf-style lines under the table, one per unstable result, saying why."""
    out = []
    for rec in records:
        for r in rec.data["results"]:
            if r.get("status") == "ok" and r.get("unstable"):
                out.append(f"WARNING: {rec.backend} {r['model']} {r['mode']}: the result may be unstable: "
                           f"{r.get('unstable_why', 'its workers disagree')}; rerun on a quieter machine "
                           f"(bench check) or with more --workers\n")
    return ("\n" + "".join(out)) if out else ""
