"""Telemetry: what the machine is doing, each source optional.

One module per source (nvml: NVIDIA GPUs through nvidia-ml-py; rapl: Linux
powercap energy counters; cpu: psutil + py-cpuinfo). A source that is missing
or raises never fails a benchmark: `guarded` turns it into
{"unavailable": "<source>: <reason>"}, the same shape everywhere in the record.

  snapshot(sources)  the machine's state now: {"gpu": ..., "cpu_state": ...}
                     (taken by `bench run` at the start and the end of a run)
"""

from __future__ import annotations

import sys
from typing import Callable


class Unavailable(Exception):
    """A source that is not there (no library, no device, no permission); the message says why."""


def unavailable(source: str, reason: object) -> dict:
    return {"unavailable": f"{source}: {reason}"}


def guarded(source: str, read: Callable[[], dict]) -> dict:
    """read(), or {"unavailable": reason} when it raises (never a traceback)."""
    try:
        return read()
    except Unavailable as e:
        return unavailable(source, e)
    except Exception as e:  # noqa: BLE001 - a broken driver/library must not fail the run
        return unavailable(source, f"{type(e).__name__}: {e}".rstrip(": "))


def snapshot(sources: dict[str, tuple[str, Callable[[], dict]]] | None = None) -> dict:
    """{key: reading} for each (key -> (source name, reader)); defaults to GPU and CPU state."""
    if sources is None:
        from bench.measure.telemetry import cpu, nvml

        sources = {"gpu": ("nvml", nvml.state), "cpu_state": ("cpu", cpu.state)}
    return {key: guarded(name, read) for key, (name, read) in sources.items()}


def warn(message: str) -> None:
    print(f"bench: telemetry: {message}", file=sys.stderr)
