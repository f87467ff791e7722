"""What one benchmark used: peak memory and energy, for the result's `memory` and `energy`.

memory_block(): host peak RSS of this (worker) process from getrusage (psutil
has no peak RSS on Linux or macOS), device peak from the backend's own
`device_peak_bytes()` (torch CUDA max allocated, jax memory_stats peak, mlx
peak memory; None on CPU-only backends). Bytes; smaller is better.

Energy: a meter (NVML on a CUDA device, RAPL on a CPU one) read around every
timed call (`Metered`); joules per 1000 samples = 1000 * J / samples over the
timed calls only. A meter that cannot open is recorded as
{"unavailable": reason}; nothing is ever estimated.
"""

from __future__ import annotations

import resource
import sys
from typing import Callable

from bench.measure.telemetry import Unavailable, guarded, unavailable


def host_peak_bytes() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) if sys.platform == "darwin" else int(peak) * 1024  # macOS: bytes; Linux: KiB


def memory_block(backend, host: Callable[[], int] = host_peak_bytes) -> dict:
    """{"host_peak_bytes", "device_peak_bytes", "unavailable": {source: reason}} (contract)."""
    out: dict = {"host_peak_bytes": None, "device_peak_bytes": None}
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


class Metered:
    """run(steps) wrapped: the meter's joules of every call, to pick the timed ones out later."""

    def __init__(self, run: Callable[[int], object], meter):
        self._run, self._meter = run, meter
        self.calls: list[tuple[int, float]] = []  # (steps, joules)
        self.error: str | None = None

    def __call__(self, steps: int):
        j0 = self._read()
        out = self._run(steps)
        j1 = self._read()
        if j0 is not None and j1 is not None:
            self.calls.append((steps, j1 - j0))
        return out

    def _read(self) -> float | None:
        if self.error is not None:
            return None
        try:
            return self._meter.read_joules()
        except Exception as e:  # noqa: BLE001 - a source that dies partway: unavailable, not a crash
            self.error = f"{self._meter.source}: read failed partway: {type(e).__name__}: {e}"
            return None

    def energy(self, last_calls: int, samples_per_step: int) -> dict:
        """Energy block over the last `last_calls` calls (the timed repeats)."""
        if self.error is not None:
            return {"unavailable": self.error}
        timed = self.calls[-last_calls:] if last_calls else []
        samples = sum(s for s, _ in timed) * samples_per_step
        if len(timed) < last_calls or samples <= 0:
            return unavailable(self._meter.source, "no reading over the timed calls")
        joules = sum(j for _, j in timed)
        return {"joules_per_1000_samples": round(1000.0 * joules / samples, 6), "source": self._meter.source}
