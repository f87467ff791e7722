"""The duet's barrier: both sides start each timed call together (workers v13).

In a duet (`bench run --ab`, `--reference`) worker i of A and worker i of B run
at the same time, each on its own half of the CPUs, so that both see the same
moment of the host. They start together, but each side's imports, compiles and
quality gates take their own time (a nightly and a frozen build differ in
compile and gate time), so their timed calls slid apart: latency pairs that
overlapped less than half read beyond 10 % apart in 7 % of cases (issue 53).
So before each timed repeat (a throughput call, a latency round) each side
waits for the other at a barrier, outside the timed call.

The two worker processes may run different Pythons (two venvs), so the barrier
is a folder both can see (the pool makes one per duet): arriving at repeat n of
a benchmark, a side writes the empty file `<model>.<mode>.<n>.<side>` and waits
until the other side's file for the same n is there. A side stops waiting for
the other (the repeats go on unaligned, and the record counts them) when the
other side
  - has ended that benchmark's timed repeats (`<model>.<mode>.end.<other>`:
    it needed fewer repeats, or failed before timing),
  - has left (`gone.<other>`, which the pool writes when the other process
    ends, whatever the cause), or
  - has not arrived within `timeout` seconds; the barrier is then off for the
    rest of that benchmark.
After its last repeat a side marks its end and waits for the other's
(`await_end`), so nothing it does after its repeats overlaps the other's.
Polling a file every POLL_SECONDS costs microseconds of the waiting side's own
CPU half; both sides pass the barrier within about POLL_SECONDS of each other.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

POLL_SECONDS = 0.0005
# The most a side waits for the other at one barrier: longer than any compile and
# gate of the other side here (torch cnn's first benchmark in a worker, ~30 s),
# shorter than the pool's per-benchmark timeout (harness.timeout, 900 s).
TIMEOUT_SECONDS = 300.0
GONE = "gone"


def other(side: str) -> str:
    if side not in ("a", "b"):
        raise ValueError(f"barrier: side is {side!r}; expected 'a' or 'b'")
    return "b" if side == "a" else "a"


def mark(folder: str | Path, name: str) -> None:
    """Create the empty file `name` in `folder` (a side's arrival, end or departure)."""
    Path(folder, name).touch()


def gone(folder: str | Path, side: str) -> None:
    """The pool's note that `side`'s worker process has ended: its partner stops waiting."""
    mark(folder, f"{GONE}.{side}")


@dataclass
class Barrier:
    """One side's barrier for one benchmark: `wait()` before each timed repeat,
    `end()` after the last. Counts what happened, for the record (`summary`)."""

    folder: str
    side: str
    benchmark: str  # "<model>.<mode>"
    timeout: float = TIMEOUT_SECONDS
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    exists: Callable[[str], bool] = os.path.exists
    waits: int = 0
    alone: int = 0  # repeats that went on without the other side
    waited: float = 0.0  # seconds spent waiting, in all
    off: bool = False  # the other side timed out once: no more waiting
    _n: int = field(default=0, repr=False)

    def __post_init__(self):
        self.partner = other(self.side)

    def _path(self, name: str) -> str:
        return os.path.join(self.folder, name)

    def wait(self) -> None:
        n, self._n = self._n, self._n + 1
        self.waits += 1
        if self.off:
            self.alone += 1
            return
        mark(self.folder, f"{self.benchmark}.{n}.{self.side}")
        theirs = f"{self.benchmark}.{n}.{self.partner}"
        if self._poll(theirs, f"{self.benchmark}.end.{self.partner}", f"{GONE}.{self.partner}") != theirs:
            self.alone += 1  # the other side ended its repeats, left, or never came

    def end(self) -> None:
        """This side's timed repeats of the benchmark are over (or never came)."""
        mark(self.folder, f"{self.benchmark}.end.{self.side}")

    def await_end(self) -> None:
        """Wait until the other side's timed repeats of this benchmark are over
        (its end mark, or its departure), so that what this side does next (the
        verify and set-up calls, the native pairs, the profiled call) runs beside
        none of them: each side may need a different number of repeats. Not when
        the barrier is off; a wait past `timeout` turns it off."""
        if not self.off:
            self._poll(f"{self.benchmark}.end.{self.partner}", f"{GONE}.{self.partner}")

    def _poll(self, *names: str) -> str | None:
        """Wait until one of the files `names` is in the folder; the first of
        them found, or None when `timeout` passed (the barrier is then off).
        The time waited adds to `waited`."""
        paths = [self._path(name) for name in names]
        t0 = self.clock()
        while True:
            found = next((name for name, path in zip(names, paths) if self.exists(path)), None)
            if found is not None:
                break
            if self.clock() - t0 > self.timeout:
                self.off = True
                break
            self.sleep(POLL_SECONDS)
        self.waited += self.clock() - t0
        return found

    def summary(self) -> dict:
        """The result's `sync` block: barriers met, repeats that ran without the
        other side, and the seconds spent waiting (outside every timed call)."""
        return {"waits": self.waits, "alone": self.alone, "waited_seconds": round(self.waited, 3)}
