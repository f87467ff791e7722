"""Was a worker slowed by something else on the machine? Readers plus pure decisions.

Per timed repeat the harness takes a `Snapshot` before and after and keeps the
`Window` between them (bench/measure/harness.py):

- cpu_per_wall: this process's CPU seconds (all its threads, user + system,
  `time.process_time`: see snapshot) per wall second. A worker that gets its CPUs keeps a steady
  figure for a given benchmark; a neighbour that takes a core from it lowers
  it for as long as it runs. Compared across the workers of one benchmark
  (`flag_workers`), so it also sees a *whole* worker being slowed, which the
  in-process canary (fastest canary of the same process) cannot.
- stall: Linux pressure stall information, /proc/pressure/cpu `some total`
  (microseconds during which at least one runnable task waited for a CPU),
  as a fraction of the window's wall time. Includes our own threads queueing
  behind each other, so it is judged against the benchmark's other workers
  too, plus an absolute ceiling.
- steal: /proc/stat steal ticks as a fraction of all ticks (a VM's host gave
  our vCPU to someone else).

Fractions are in [0, 1] (cpu_per_wall up to the thread count); None where the
system cannot tell (no PSI on macOS, no /proc/stat).
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

PRESSURE = Path("/proc/pressure/cpu")
STAT = Path("/proc/stat")

# Decision thresholds (fractions). Every rule is relative to the benchmark's
# other workers: on a machine that is busy all the time (the shared 2-core
# development VM: PSI stall 55-90 % for every worker) an absolute ceiling flags
# every worker, and a rerun is no quieter. What a disturbance looks like is a
# worker off from its peers. Measured in one nightly jax run there (records of
# studies/bench_stability.py --full --keep): PSI stall was 86-100 % for every
# worker, useless on its own, while a worker's throughput followed its CPU per
# wall second (mlp/predict: 0.54 -> 49k, 0.76 -> 60k, 1.13-1.62 -> 98k-172k).
# The reference is the benchmark's *best* worker (highest CPU share, lowest
# stall and steal), not the median: with a hog over most of a quick run
# (studies/bench_stability.py --hog, 3 workers, 2 under the hog at CPU per wall
# 1.0 vs 1.7 quiet) the median worker is itself disturbed and flags nobody.
CPU_DROP = 0.20  # cpu_per_wall this far below the benchmark's best worker
STALL_RISE = 0.20  # stall fraction this much above the benchmark's least stalled worker
STEAL_RISE = 0.05  # steal fraction this much above the benchmark's least robbed worker
# How each rule starts the reason it gives (a worker's `disturbed_why`; several
# join with "; "); "canary" is pool.flag's, for a worker whose canary read slow
# in every repeat. studies/bench_stability.py --flags reads them back.
WHY = {"cpu": "CPU per wall second", "stall": "CPU stall", "steal": "steal",
       "canary": "the in-process canary stayed slow for every repeat"}
# A worker whose in-process canary read slow in every repeat (a slow CPU state
# throughout, pool.flag) is flagged only when its own figure bears that out:
# CANARY_SLOWER worse than the benchmark's clean first-round workers' median
# (workers v12). Measured (studies/bench_latency_flags.py): over the eight
# workers v11 stability sets the canary alone flagged 181 of 800 first-round
# latency workers here, most no slower than their clean peers (this VM's host
# drifts ±5-10 % within a run, so a worker after a slow turn reads its canaries
# against a floor set before it); needing the figure too would have flagged 56,
# with the latency headlines as still (27 of 32 rows within ±5 % either way).
# Under a hog (.local/hog-58) every rerun of jax mlp/latency was flagged that
# way, leaving its headline on one worker, +4.4 % against the quiet runs (+2.0 %
# recomputed with this rule). On an H100 the workers it flagged read 1.10-1.52x
# slower than the clean one: still flagged.
CANARY_SLOWER = 1.03


def canary_confirmed(value: float, centre: float | None, better: str) -> bool:
    """Whether a worker's figure bears out its canary's "slow throughout": worse than
    `centre` (the clean first-round workers' median; None when there is none, and
    then the canary decides alone) by more than CANARY_SLOWER, in the benchmark's
    direction (`better`: "bigger" for samples/s, "smaller" for a latency in ms)."""
    if centre is None:
        return True
    return value > centre * CANARY_SLOWER if better == "smaller" else value * CANARY_SLOWER < centre


@dataclass(frozen=True)
class Snapshot:
    wall: float
    cpu: float
    stall_us: int | None
    steal: int | None  # ticks
    ticks: int | None  # all ticks


@dataclass(frozen=True)
class Window:
    """What happened between two snapshots (see the module doc for units)."""

    wall: float
    cpu_per_wall: float
    stall: float | None
    steal: float | None

    def as_dict(self) -> dict:
        return {"cpu_per_wall": round(self.cpu_per_wall, 4),
                "stall": None if self.stall is None else round(self.stall, 4),
                "steal": None if self.steal is None else round(self.steal, 4)}


def between(a: Snapshot, b: Snapshot) -> Window:
    wall = max(b.wall - a.wall, 1e-9)
    stall = None if a.stall_us is None or b.stall_us is None else (b.stall_us - a.stall_us) / 1e6 / wall
    steal = None
    if None not in (a.steal, b.steal, a.ticks, b.ticks) and b.ticks > a.ticks:
        steal = (b.steal - a.steal) / (b.ticks - a.ticks)
    return Window(wall, (b.cpu - a.cpu) / wall, stall, steal)


def read_stall_us(path: Path = PRESSURE) -> int | None:
    try:
        first = path.read_text().splitlines()[0]  # "some avg10=.. avg60=.. avg300=.. total=N"
        return int(first.rsplit("total=", 1)[1])
    except (OSError, IndexError, ValueError):
        return None


def read_steal(path: Path = STAT) -> tuple[int | None, int | None]:
    """(steal ticks, all ticks) from the aggregate `cpu` line of /proc/stat."""
    try:
        fields = path.read_text().splitlines()[0].split()
        numbers = [int(x) for x in fields[1:]]
        return (numbers[7] if len(numbers) > 7 else None), sum(numbers[:8])
    except (OSError, IndexError, ValueError):
        return None, None


def snapshot(clock: Callable[[], float] = time.perf_counter) -> Snapshot:
    """The machine and this process now. CPU seconds come from time.process_time
    (CLOCK_PROCESS_CPUTIME_ID, nanoseconds). Before workers v10 they came from
    os.times, which counts 10 ms clock ticks: fine for a 0.5 s throughput
    repeat, but a latency round (200 batch-1 calls) lasts 13-200 ms here, so
    one tick more or less moved its CPU share by 5-75 %. Over four nightly
    jax+torch sets of 5 invocations (2026-12-06) a latency result's least CPU
    share sat at a median 0.84x its best worker's for jax (train and predict:
    0.99x), it did not follow the workers' speed (Spearman 0.07), and CPU_DROP
    flagged and reran 13-14 of a quiet set's 50 jax latency workers, whose
    p50s read 0.94-1.04x the clean ones' median."""
    steal, ticks = read_steal()
    return Snapshot(clock(), time.process_time(), read_stall_us(), steal, ticks)


def summarise(windows: Sequence[Window]) -> dict:
    """One worker's figures for one benchmark: the medians over its repeats."""
    def med(values):
        values = [v for v in values if v is not None]
        return round(statistics.median(values), 4) if values else None

    return {"cpu_per_wall": med(w.cpu_per_wall for w in windows), "stall": med(w.stall for w in windows),
            "steal": med(w.steal for w in windows)}


def flag_workers(figures: Sequence[dict | None]) -> list[str | None]:
    """For the workers of one benchmark (each `summarise`'s dict, or None when
    it has none): why each one looks disturbed, or None. Pure.

    A worker is disturbed when its CPU share is CPU_DROP below the best
    worker's, or its stall or steal fraction STALL_RISE / STEAL_RISE above
    the best worker's.
    """
    def best_of(key, pick):
        vals = [f[key] for f in figures if f and f.get(key) is not None]
        return pick(vals) if vals else None

    cpu_mid, stall_mid, steal_mid = best_of("cpu_per_wall", max), best_of("stall", min), best_of("steal", min)
    out: list[str | None] = []
    for f in figures:
        why = []
        if f:
            cpu, stall, steal = f.get("cpu_per_wall"), f.get("stall"), f.get("steal")
            if cpu is not None and cpu_mid and cpu < (1 - CPU_DROP) * cpu_mid:
                why.append(f"{WHY['cpu']} {cpu:.2f} vs the best worker's {cpu_mid:.2f}")
            if stall is not None and stall_mid is not None and stall > stall_mid + STALL_RISE:
                why.append(f"{WHY['stall']} {stall:.0%} vs the best worker's {stall_mid:.0%}")
            if steal is not None and steal_mid is not None and steal > steal_mid + STEAL_RISE:
                why.append(f"{WHY['steal']} {steal:.0%} of CPU ticks vs the best worker's {steal_mid:.0%}")
        out.append("; ".join(why) or None)
    return out
