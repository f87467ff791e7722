"""NVIDIA GPUs through NVML (nvidia-ml-py, imported as `pynvml`).

state(): the NVML driver, the CUDA version the driver supports, and per GPU its
name, SM and memory clocks (MHz), power limit and draw (W), temperature (°C),
throttle reasons (names), memory used/total (bytes) and the processes on it
with their memory (other jobs on a shared card). Each field is read on its
own: a query the card does not support is listed under "unavailable".

EnergyMeter: NVML's total-energy counter (mJ since the driver loaded; Volta
and newer), read before and after the timed calls.

`module` stands in for pynvml in tests (a fake with the same functions).
"""

from __future__ import annotations

import os
from typing import Callable

from bench.measure.telemetry import Unavailable

CLOCK_SM, CLOCK_MEM, TEMPERATURE_GPU = 1, 2, 0  # NVML enum values (stable ABI)
# nvmlClocksEventReasons / nvmlClocksThrottleReasons bits (nvml.h)
THROTTLE = {0x1: "gpu_idle", 0x2: "applications_clocks_setting", 0x4: "sw_power_cap",
            0x8: "hw_slowdown", 0x10: "sync_boost", 0x20: "sw_thermal_slowdown",
            0x40: "hw_thermal_slowdown", 0x80: "hw_power_brake_slowdown", 0x100: "display_clock_setting"}


def load(module=None):
    """pynvml, initialised; Unavailable naming why not."""
    if module is None:
        try:
            import pynvml as module
        except ImportError:
            raise Unavailable("nvidia-ml-py (pynvml) is not installed") from None
    try:
        module.nvmlInit()
    except Exception as e:  # noqa: BLE001 - NVMLError_LibraryNotFound, DriverNotLoaded, ...
        raise Unavailable(f"nvmlInit failed: {e}") from None
    return module


def _text(v) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def throttle_names(mask: int) -> list[str]:
    names = [name for bit, name in THROTTLE.items() if mask & bit]
    rest = mask & ~sum(THROTTLE)
    return names + ([f"0x{rest:x}"] if rest else [])


def cuda_version(v: int) -> str:
    """CUDA's integer version (NVML's, jax's) as text: 12080 -> "12.8"."""
    return f"{v // 1000}.{v % 1000 // 10}"


def _processes(nv, h) -> list[dict]:
    seen: dict[int, dict] = {}
    for query in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses"):
        for p in getattr(nv, query)(h):
            used = getattr(p, "usedGpuMemory", None)
            seen.setdefault(p.pid, {"pid": p.pid, "used_bytes": used if isinstance(used, int) else None,
                                    "name": _process_name(p.pid)})
    return sorted(seen.values(), key=lambda p: p["pid"])


def _process_name(pid: int) -> str | None:
    try:
        import psutil

        return psutil.Process(pid).name()
    except Exception:  # noqa: BLE001 - another container's pid, or gone already
        return None


def _device_fields(nv, h) -> dict[str, Callable[[], object]]:
    def throttle():
        get = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
            nv.nvmlDeviceGetCurrentClocksThrottleReasons
        return throttle_names(get(h))

    def memory():
        m = nv.nvmlDeviceGetMemoryInfo(h)
        return {"used_bytes": int(m.used), "total_bytes": int(m.total)}

    return {
        "name": lambda: _text(nv.nvmlDeviceGetName(h)),
        "sm_clock_mhz": lambda: nv.nvmlDeviceGetClockInfo(h, CLOCK_SM),
        "memory_clock_mhz": lambda: nv.nvmlDeviceGetClockInfo(h, CLOCK_MEM),
        "power_limit_w": lambda: round(nv.nvmlDeviceGetEnforcedPowerLimit(h) / 1000, 1),
        "power_draw_w": lambda: round(nv.nvmlDeviceGetPowerUsage(h) / 1000, 1),
        "temperature_c": lambda: nv.nvmlDeviceGetTemperature(h, TEMPERATURE_GPU),
        "throttle_reasons": throttle,
        "memory": memory,
        "processes": lambda: _processes(nv, h),
    }


def _read_fields(fields: dict[str, Callable[[], object]]) -> dict:
    out, missing = {}, {}
    for name, read in fields.items():
        try:
            out[name] = read()
        except Exception as e:  # noqa: BLE001 - NVMLError_NotSupported on consumer cards, ...
            missing[name] = f"{type(e).__name__}: {e}".rstrip(": ")
    if missing:
        out["unavailable"] = missing
    return out


def state(module=None) -> dict:
    nv = load(module)
    try:
        out = _read_fields({
            "driver": lambda: _text(nv.nvmlSystemGetDriverVersion()),
            "cuda_driver": lambda: cuda_version(nv.nvmlSystemGetCudaDriverVersion()),
        })
        count = nv.nvmlDeviceGetCount()
        out["devices"] = [_read_fields({"index": lambda i=i: i,
                                        **_device_fields(nv, nv.nvmlDeviceGetHandleByIndex(i))})
                          for i in range(count)]
        return out
    finally:
        _shutdown(nv)


def _shutdown(nv) -> None:
    try:
        nv.nvmlShutdown()
    except Exception:  # noqa: BLE001 - nothing to lose at shutdown
        pass


def visible_index(environ=os.environ) -> int:
    """The NVML index of the GPU the benchmark uses: CUDA_VISIBLE_DEVICES' first entry
    when it is a number (not a UUID), else 0."""
    first = environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    return int(first) if first.isdigit() else 0


class EnergyMeter:
    """NVML total energy of one GPU, in joules; Unavailable when the card cannot say."""

    source = "nvml"

    def __init__(self, index: int | None = None, module=None):
        self._nv = load(module)
        try:
            self._h = self._nv.nvmlDeviceGetHandleByIndex(visible_index() if index is None else index)
            self.read_joules()
        except Exception as e:  # noqa: BLE001
            _shutdown(self._nv)
            raise Unavailable(f"no total-energy counter: {type(e).__name__}: {e}".rstrip(": ")) from None

    def read_joules(self) -> float:
        return self._nv.nvmlDeviceGetTotalEnergyConsumption(self._h) / 1000.0  # mJ -> J

    def close(self) -> None:
        _shutdown(self._nv)
