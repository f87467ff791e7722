"""CPU state through psutil and py-cpuinfo (plus the two Linux files they do not read).

state(): model (py-cpuinfo), governor (cpufreq sysfs), frequency in MHz
(psutil), load average (psutil), steal % over a short window (psutil, Linux
VMs), CPU pressure (Linux PSI, /proc/pressure/cpu "some" avg10/avg60, % of
time some task waited for a CPU). Each field is read on its own: one that
cannot be read is listed under "unavailable" with its reason.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Callable

GOVERNOR = Path("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
PRESSURE = Path("/proc/pressure/cpu")
STEAL_WINDOW = 0.2  # seconds psutil samples the CPU times over


@functools.lru_cache(maxsize=1)
def info() -> dict:
    """py-cpuinfo's description of this CPU (about 1 s: read once per process)."""
    import cpuinfo

    return cpuinfo.get_cpu_info()


def model() -> str:
    """The CPU's name from py-cpuinfo."""
    got = info()
    return got.get("brand_raw") or got.get("arch_string_raw") or "unknown"


def governor(path: Path = GOVERNOR) -> str:
    return path.read_text().strip()


def frequency_mhz() -> dict:
    import psutil

    f = psutil.cpu_freq()
    if f is None:
        raise OSError("psutil.cpu_freq() returned nothing on this OS")
    return {"current": round(f.current, 1), "min": round(f.min, 1), "max": round(f.max, 1)}


def load_average() -> list[float]:
    import psutil

    return [round(x, 2) for x in psutil.getloadavg()]


def steal_percent() -> float:
    import psutil

    times = psutil.cpu_times_percent(interval=STEAL_WINDOW)
    if not hasattr(times, "steal"):
        raise OSError("this OS reports no steal time")
    return round(times.steal, 2)


def pressure(path: Path = PRESSURE) -> dict:
    """Linux PSI: {"some_avg10": %, "some_avg60": %} from /proc/pressure/cpu."""
    for line in path.read_text().splitlines():
        kind, *fields = line.split()
        if kind == "some":
            values = dict(f.split("=", 1) for f in fields)
            return {"some_avg10": float(values["avg10"]), "some_avg60": float(values["avg60"])}
    raise ValueError(f"{path}: no 'some' line")


FIELDS: dict[str, Callable[[], object]] = {
    "model": model, "governor": governor, "frequency_mhz": frequency_mhz,
    "load_average": load_average, "steal_percent": steal_percent, "pressure": pressure,
}


def state(fields: dict[str, Callable[[], object]] | None = None) -> dict:
    out: dict = {"logical_cpus": os.cpu_count()}
    missing = {}
    for name, read in (fields or FIELDS).items():
        try:
            out[name] = read()
        except Exception as e:  # noqa: BLE001 - one unreadable field never hides the others
            missing[name] = _reason(e)
    if missing:
        out["unavailable"] = missing
    return out


def _reason(e: Exception) -> str:
    if isinstance(e, OSError) and e.strerror:
        return f"{e.filename or ''}: {e.strerror}".lstrip(": ")
    return f"{type(e).__name__}: {e}"
