"""What one benchmark used: peak memory and energy, for the result's `memory` and `energy`.

memory_block(): the worker's peak RSS and the backend's device peak
(`device_peak_bytes()`: torch CUDA max allocated, jax memory_stats peak, mlx
peak memory; None on CPU-only backends). Bytes; smaller is better. A worker
runs several benchmarks, so `settle()` first drops what the earlier ones left
behind and `reset_peaks()` starts each one afresh: on Linux writing 5 to
/proc/self/clear_refs resets the peak RSS (VmHWM, read from /proc/self/status);
elsewhere the figure is getrusage's peak of the whole process (psutil has no
peak RSS on Linux or macOS). The block's `host_peak_scope` says which:
"benchmark" or "process".

Energy: a meter (NVML on a CUDA device, RAPL on a CPU one) read just before and
just after every timed call, outside the time the harness takes (`Metered`,
harness.timed); joules per 1000 samples = 1000 * J / samples over the
timed calls only. A meter that cannot open is recorded as
{"unavailable": reason}; nothing is ever estimated.

trace(): with $BENCH_MEMORY_TRACE set to a file, each worker appends its RSS
after every stage of a benchmark and every timed call
(studies/bench_memory_stages.py runs it and reads the file): how the causes
of a spread in peak memory were found (docs/measurements.md, "Peak memory").
"""

from __future__ import annotations

import ctypes
import gc
import os
import resource
import sys
from pathlib import Path
from typing import Callable

from bench.measure.telemetry import Unavailable, guarded, unavailable


CLEAR_REFS, STATUS = Path("/proc/self/clear_refs"), Path("/proc/self/status")
TRACE_VAR = "BENCH_MEMORY_TRACE"
# /proc/self/status fields a trace line carries, in this order (kB, but Threads).
TRACE_FIELDS = ("RssAnon", "RssFile", "VmHWM", "Threads")


def settle(keras, libc: object | None = None) -> tuple[str, ...]:
    """Drop what earlier benchmarks in this worker left behind, so the next
    one's peak starts from the process's own floor: Keras's global state
    (clear_session), Python's reference cycles (gc.collect), and the freed heap
    glibc keeps mapped (malloc_trim(0); glibc only, skipped elsewhere). Returns
    the steps that ran; a step that fails is skipped, never the benchmark.

    Why (run.protocol.memory "least, settled"; studies/bench_memory_settle.py):
    without it a benchmark's peak RSS is its own plus whatever earlier ones in
    the process left, which moves with the rotated order and glibc's luck. Over
    8 torch and 4 jax quick invocations taking turns with the code before
    (2026-12-04), the least first-round worker's peak moved at most ±1.8 %
    across invocations in every benchmark (12 of 12 within 2 %), against
    ±0.3-2.9 % (10 of 12) without; jax mlp/latency read 436-440 MiB against
    491-523 (its leftovers), and samples/s moved -5 to +7 %, the noise of runs
    taken in turns. Cost, measured after a small fit and predict with a second
    gc.collect after clear_session's own (since dropped; `studies/bench_memory_settle.py
    --cost jax,torch` times it now): 0.25-0.30 s (jax) and
    0.50-0.58 s (torch) per benchmark, about half of it that second collection
    (clear_session 161/300 ms, gc 148/292 ms, malloc_trim 1-7 ms); without it
    0.12-0.13 s (jax) and 0.21-0.26 s (torch), 4-8 s of a backend's nightly (30
    benchmarks' worth of workers). The 5 nightly invocations measured with it
    took 179-260 s a backend, within the 226-362 s of the evening's before it."""
    done = []

    def collect():
        # Keras's clear_session (free_memory=True, its default) ends with a full
        # gc.collect, 0.15-0.3 s here; a second one would find nothing new.
        if "clear_session" not in done:
            gc.collect()

    for name, step in (("clear_session", lambda: keras.backend.clear_session()), ("gc", collect),
                       ("malloc_trim", lambda: _malloc_trim(libc))):
        try:
            if step() is not False:
                done.append(name)
        except Exception:  # noqa: BLE001 - memory hygiene never fails a benchmark
            pass
    return tuple(done)


def _malloc_trim(libc: object | None) -> bool:
    """glibc's malloc_trim(0): hand freed heap pages back to the system; False
    where the C library has none (macOS, musl)."""
    trim = getattr(libc if libc is not None else ctypes.CDLL(None), "malloc_trim", None)
    if trim is None:
        return False
    trim(0)
    return True


def reset_peaks(backend=None, clear_refs: Path = CLEAR_REFS) -> bool:
    """Start a new host (and device) peak for the next benchmark; True when the
    host peak could be reset."""
    if backend is not None:
        guarded("device", lambda: backend.reset_device_peak() or {})
    try:
        clear_refs.write_text("5")
        return True
    except OSError:
        return False


def status_kb(status: Path = STATUS) -> dict[str, int]:
    """/proc/self/status's numeric fields (kB, but Threads a count); empty where it
    cannot be read (not Linux)."""
    try:
        lines = status.read_text().splitlines()
    except OSError:
        return {}
    out = {}
    for line in lines:
        name, _, rest = line.partition(":")
        first = rest.split()[:1]
        if first and first[0].isdigit():
            out[name] = int(first[0])
    return out


def host_peak_bytes(status: Path = STATUS) -> int:
    """VmHWM (peak RSS since the last reset) on Linux, else getrusage's process peak."""
    hwm = status_kb(status).get("VmHWM")
    if hwm is not None:
        return hwm * 1024
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) if sys.platform == "darwin" else int(peak) * 1024  # macOS: bytes; Linux: KiB


def trace(tag: str, environ=os.environ, status: Path = STATUS) -> None:
    """Append "pid tag RssAnon RssFile VmHWM Threads" (kB; Threads a count) to
    the file $BENCH_MEMORY_TRACE names; nothing without it. A diagnostic: a
    file or field it cannot read or write is skipped, never the benchmark."""
    path = environ.get(TRACE_VAR)
    if not path:
        return
    try:
        fields = status_kb(status)
        values = [str(fields[name]) for name in TRACE_FIELDS]
        with open(path, "a", encoding="utf-8") as out:  # one short write per line: workers append safely
            out.write(f"{os.getpid()} {tag} {' '.join(values)}\n")
    except (OSError, KeyError):
        pass


def memory_block(backend, host: Callable[[], int] = host_peak_bytes, scope: str = "process",
                 settled: tuple[str, ...] | None = None) -> dict:
    """{"host_peak_bytes", "device_peak_bytes", "unavailable": {source: reason}} (contract),
    plus "host_peak_scope" (see the module docstring) and, when given, "settled":
    the steps settle() took before the peak was reset."""
    out: dict = {"host_peak_bytes": None, "device_peak_bytes": None, "host_peak_scope": scope}
    if settled is not None:
        out["settled"] = list(settled)
    missing = {}
    for key, source, read in (("host_peak_bytes", "host", host),
                              ("device_peak_bytes", "device", backend.device_peak_bytes)):
        got = guarded(source, lambda read=read: {"value": read()})
        value = got.get("value")
        if isinstance(value, int) and not isinstance(value, bool):
            out[key] = value
        else:
            missing[source] = got.get("unavailable") or (
                f"the {backend.NAME} backend reports no device memory here (CPU device)")
    out["unavailable"] = missing
    return out


def open_meter(device: str, opener: dict[str, Callable[[], object]] | None = None):
    """The energy meter for a device string from device_info() ('cuda:...', 'gpu:...' -> NVML,
    else RAPL); returns (meter, None) or (None, {"unavailable": reason})."""
    from bench.measure.telemetry import nvml, rapl

    opener = opener or {"nvml": nvml.EnergyMeter, "rapl": rapl.EnergyMeter}
    source = "nvml" if device.startswith(("cuda", "gpu")) else "rapl"
    try:
        return opener[source](), None
    except Unavailable as e:
        return None, unavailable(source, e)
    except Exception as e:  # noqa: BLE001 - never fail a benchmark over telemetry
        return None, unavailable(source, f"{type(e).__name__}: {e}")


def meter(device: str) -> "Metered | Unmetered":
    """The device's energy meter, for the harness to read around each timed call
    (harness.timed: begin() just before its clock starts, end(steps) just after
    it stops), or no meter (and why) when the device has none."""
    opened, reason = open_meter(device)
    return Metered(opened) if opened else Unmetered(reason)


class Unmetered:
    """No meter here: begin/end do nothing, and the energy is the reason."""

    def __init__(self, reason: dict):
        self._reason = reason

    def begin(self) -> None:
        pass

    def end(self, steps: int) -> None:
        pass

    def energy(self, last_calls: int, samples_per_step: int) -> dict:
        return self._reason


class Metered:
    """An energy meter read around each timed call, outside it (workers v13:
    until v12 this wrapped the workload, so the NVML or RAPL reads ran inside the
    call the clock timed): the joules of every (begin, end), to pick the timed
    calls out later."""

    def __init__(self, meter):
        self._meter = meter
        self.calls: list[tuple[int, float]] = []  # (steps, joules)
        self.error: str | None = None
        self._start: float | None = None

    def begin(self) -> None:
        self._start = self._read()

    def end(self, steps: int) -> None:
        j0, self._start = self._start, None
        j1 = self._read()
        if j0 is not None and j1 is not None:
            self.calls.append((steps, j1 - j0))

    def _read(self) -> float | None:
        if self.error is not None:
            return None
        try:
            return self._meter.read_joules()
        except Exception as e:  # noqa: BLE001 - a source that dies partway: unavailable, not a crash
            self.error = f"{self._meter.source}: read failed partway: {type(e).__name__}: {e}"
            return None

    def energy(self, last_calls: int, samples_per_step: int) -> dict:
        """Energy block over the last `last_calls` calls (the timed repeats); closes the meter."""
        _close(self._meter)
        if self.error is not None:
            return {"unavailable": self.error}
        timed = self.calls[-last_calls:] if last_calls else []
        samples = sum(s for s, _ in timed) * samples_per_step
        if len(timed) < last_calls or samples <= 0:
            return unavailable(self._meter.source, "no reading over the timed calls")
        joules = sum(j for _, j in timed)
        return {"joules_per_1000_samples": round(1000.0 * joules / samples, 6), "source": self._meter.source}


def combine(results: list[dict], memory_from: list[dict] | None = None) -> dict:
    """A result's `latency`, `memory` and `energy` from its (clean) workers' own
    results (protocol 2): the median worker's latency and energy, so one
    worker's outlier moves neither, and the least worker's peak memory (what
    moves a peak only ever adds to it: pool.memory_workers); an `unavailable`
    reason is kept when no worker had the figure.

    `memory_from` (default `results`): the results peak memory is taken over
    (the pool gives its first-round workers; a slowed CPU does not move a
    peak, so disturbed workers count there too)."""
    import statistics

    from bench.measure import latency

    out: dict = {}
    lat = [r["latency"] for r in results if isinstance(r.get("latency"), dict)]
    if lat:
        out["latency"] = latency.combine(lat)
    mems = [r["memory"] for r in (results if memory_from is None else memory_from)
            if isinstance(r.get("memory"), dict)]
    if mems:
        mem = dict(mems[0])
        for key in ("host_peak_bytes", "device_peak_bytes"):
            got = [m[key] for m in mems if isinstance(m.get(key), int)]
            mem[key] = min(got) if got else None
        out["memory"] = mem
    energies = [r["energy"] for r in results if isinstance(r.get("energy"), dict)]
    joules = [e for e in energies if "joules_per_1000_samples" in e]
    if joules:
        out["energy"] = {"joules_per_1000_samples": round(statistics.median(
            e["joules_per_1000_samples"] for e in joules), 6), "source": joules[0].get("source")}
    elif energies:
        out["energy"] = energies[0]
    return out


def _close(meter) -> None:
    try:
        meter.close()
    except Exception:  # noqa: BLE001 - nothing to lose at close
        pass
