"""One profiled call per benchmark per night, after its timed repeats: where the time went.

The child (bench/measure/child.py) calls `take` when its Spec.profile is set
(bench/measure/pool.py sets it on one worker per benchmark,
schedule.profiled_worker), after the figures, the timed results' check, the
set-up calls and the memory readings: the profiler runs after everything the
record measures, so it cannot move a figure or a peak.

Each backend's own profiler answers through its module's `profile(call)`
(bench/measure/backends/): a Reading, or {"unavailable": reason} where the
backend has none. `take` turns a Reading into the record's summary
(results[i].profile; docs/profiles.md):

  profiler           "jax.profiler", "torch.profiler"
  steps              batches (train, predict) or batch-1 calls (latency) in the call
  wall_ms            the call's wall time, per step
  device_ms          time the backend's ops ran, per step: kernels on a GPU; on a
                     CPU the ops the backend runs there (XLA's thunks, torch's aten ops)
  host_ms            wall_ms - device_ms (>= 0), per step: time the device waited
                     on the host (Python, Keras, dispatch)
  compiles, retraces during the profiled call (0 once warm: more means every call
                     compiles or traces again); null where the backend cannot say
  ops                the TOP ops by time, longest first, as three lists of one
                     length: {"name": [...], "ms": [... per step], "calls": [... per
                     step]} (columns: a third of the bytes of one object per op in
                     a record written with indent 2)
  other_ops          the names of the other ops, longest first, as many as fit
                     BUDGET_BYTES (a diff tells a new op from one that moved up)
  other_ms           those other ops' time, per step
  seconds            what profiling cost this benchmark (take's own wall time)
or {"unavailable": reason} or {"error": {"kind", "message"}} (a profiler that
raised or ran past LIMIT_S), each with "seconds": never a traceback, never a
lost benchmark.
"""

from __future__ import annotations

import json
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Mapping

TOP = 10
# One profiled call covers this many batches (train, predict) or batch-1 calls
# (latency), the same every night, so its per-step figures compare across
# nights whatever steps per call the timed repeats calibrated.
STEPS = 8
LATENCY_CALLS = 32
# A profiler that has not returned by then is stopped (SIGALRM in the worker's
# main thread); the summary says "timeout". A hang inside C code that never
# returns to Python is beyond it: the worker's per-benchmark timeout ends it.
LIMIT_S = 120.0
# A record holds up to 6 benchmarks (2 models x 3 modes), each with one summary:
# 6 x 1,300 B = 7.8 KB, within the 8 KB a record may spend on profiles.
BUDGET_BYTES = 1300
NAME_CHARS = 60  # an op's name as stored (XLA fusion names can run to hundreds)


@dataclass(frozen=True)
class Reading:
    """What a backend's profiler saw over one call: {op: (nanoseconds, calls)},
    the ops' time (device_ns, overlaps counted once where the backend knows
    them) and the call's wall time, with compile and retrace counts (None: unknown)."""

    profiler: str
    ops: Mapping[str, tuple[int, int]]
    device_ns: int
    wall_ns: int
    compiles: int | None = None
    retraces: int | None = None

    def __post_init__(self):
        if self.wall_ns < 0 or self.device_ns < 0:
            raise ValueError(f"Reading: wall_ns {self.wall_ns!r}, device_ns {self.device_ns!r}; expected >= 0")


class ProfileTimeout(Exception):
    pass


def take(backend, call: Callable[[], object], steps: int, limit_s: float = LIMIT_S,
         clock: Callable[[], float] = time.perf_counter) -> dict:
    """The summary of one profiled `call` (covering `steps` steps) by `backend`'s profiler."""
    t0 = clock()
    try:
        with deadline(limit_s):
            got = backend.profile(call)
        out = summary(got, steps) if isinstance(got, Reading) else _unavailable(got)
    except ProfileTimeout:
        out = {"error": {"kind": "timeout", "message": f"the profiler ran past {limit_s:g} s"}}
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # noqa: BLE001 - a profiler's failure is recorded, never raised
        kind = "oom" if isinstance(e, MemoryError) else "crash"
        message = " ".join(str(e).split())[:200] or "no message"
        out = {"error": {"kind": kind, "message": f"{type(e).__name__}: {message}"}}
    out["seconds"] = round(clock() - t0, 3)
    return out


def _unavailable(got) -> dict:
    if isinstance(got, Mapping) and isinstance(got.get("unavailable"), str):
        return {"unavailable": got["unavailable"]}
    return {"error": {"kind": "crash", "message": f"the backend's profile() gave {type(got).__name__}; "
                                                  "expected a Reading or {'unavailable': reason}"}}


@contextmanager
def deadline(seconds: float):
    """Raise ProfileTimeout in this thread after `seconds` (main thread only,
    where a signal can reach; elsewhere no limit)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def expired(signum, frame):
        raise ProfileTimeout()

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _ms(ns: float, steps: int) -> float:
    """Milliseconds per step to 4 significant digits (finer than any night's noise)."""
    return float(f"{ns / 1e6 / steps:.4g}")


def summary(r: Reading, steps: int) -> dict:
    """The record's summary of a Reading over `steps` steps (module docstring), within BUDGET_BYTES."""
    if steps < 1:
        raise ValueError(f"profile summary: steps {steps!r}; expected >= 1")
    ranked = sorted(r.ops.items(), key=lambda kv: (-kv[1][0], kv[0]))
    top, rest = ranked[:TOP], ranked[TOP:]
    out = {
        "profiler": r.profiler, "steps": steps,
        "wall_ms": _ms(r.wall_ns, steps), "device_ms": _ms(r.device_ns, steps),
        "host_ms": _ms(max(0, r.wall_ns - r.device_ns), steps),
        "compiles": r.compiles, "retraces": r.retraces,
        "ops": {"name": [name[:NAME_CHARS] for name, _ in top], "ms": [_ms(ns, steps) for _, (ns, _) in top],
                "calls": [round(n / steps, 3) for _, (_, n) in top]},
        "other_ms": _ms(sum(ns for _, (ns, _) in rest), steps),
        "other_ops": [],
        # take() fills it in; counted here at its widest (take's whole wall time,
        # 3 decimals, a clock that ran on past LIMIT_S), so the budget holds with it
        "seconds": _WIDEST_SECONDS,
    }
    while size_of(out) > BUDGET_BYTES and out["ops"]["name"]:  # long names: fewer ops, not a bigger record
        for column in out["ops"].values():
            column.pop()
    for name in dict.fromkeys(name[:NAME_CHARS] for name, _ in rest):  # then as many others as fit
        out["other_ops"].append(name)
        if size_of(out) > BUDGET_BYTES:
            out["other_ops"].pop()
            break
    del out["seconds"]
    return out


_WIDEST_SECONDS = 99999.999


def size_of(summary_: Mapping) -> int:
    """Bytes a summary adds to a record as record.dumps writes it (sorted keys,
    indent 2, at its depth in results[i].profile)."""
    def text(value) -> int:
        return len(json.dumps({"results": [{"profile": value}]}, sort_keys=True, indent=2,
                              ensure_ascii=False).encode())
    return text(summary_) - text(None)
