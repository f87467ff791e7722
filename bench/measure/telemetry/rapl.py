"""Linux CPU package energy through RAPL powercap (/sys/class/powercap).

EnergyMeter sums the `energy_uj` counters of the package zones
(intel-rapl:N; AMD Zen exposes the same interface) and unwraps each counter
at its `max_energy_range_uj`. Since Linux 5.10 these files are readable by
root only (CVE-2020-8694); then, or without powercap, the meter is
Unavailable and the record says so. Nothing is ever estimated.
"""

from __future__ import annotations

import re
from pathlib import Path

from bench.measure.telemetry import Unavailable

ROOT = Path("/sys/class/powercap")
PACKAGE = re.compile(r"^intel-rapl:\d+$")  # package zones; sub-zones (core, dram) are intel-rapl:N:M


class EnergyMeter:
    source = "rapl"

    def __init__(self, root: Path = ROOT):
        if not root.is_dir():
            raise Unavailable(f"no {root} (not Linux, or no powercap driver)")
        self._zones = sorted(p for p in root.iterdir() if PACKAGE.match(p.name))
        if not self._zones:
            raise Unavailable(f"{root}: no RAPL package zone (intel-rapl:N)")
        self._max = [self._read(z / "max_energy_range_uj") for z in self._zones]
        self._last = [self._read(z / "energy_uj") for z in self._zones]
        self._total_uj = 0

    @staticmethod
    def _read(path: Path) -> int:
        try:
            return int(path.read_text().strip())
        except PermissionError:
            raise Unavailable(f"{path}: permission denied (root only since Linux 5.10)") from None
        except (OSError, ValueError) as e:
            raise Unavailable(f"{path}: {e}") from None

    def read_joules(self) -> float:
        """Package energy since the meter opened, in J (wraps unwrapped)."""
        for i, zone in enumerate(self._zones):
            now = self._read(zone / "energy_uj")
            step = now - self._last[i]
            self._total_uj += step if step >= 0 else step + self._max[i]
            self._last[i] = now
        return self._total_uj / 1e6

    def close(self) -> None:
        pass
