"""Batch-1 latency: time single calls in rounds, report p50/p90/p99/mean in ms (pure).

The workload is `call()`, one batch-1 inference that returns only when its
result is on the host (the child wraps `model.predict_on_batch` plus the
backend's sync). The clock is injected, so tests drive it with a fake one.

One round (`measure`): `warmup_calls` untimed calls (the first one compiles),
then `calls` timed calls, each between two reads of a monotonic clock.
Percentiles use numpy's default (linear interpolation between order
statistics). Times are milliseconds; smaller is better.

Rounds (`measure_rounds`, protocol workers v3, used by bench/measure/child.py):
a worker times its calls as the harness's repeats, each round a repeat between
two canaries (bench/measure/harness.py), and `Rounds.latency` joins the calls
of the rounds the canaries kept. Why rounds: on this 2-vCPU VM each vCPU runs
in speed states that last 0.1 to several seconds and differ up to 1.7x (jax
mlp batch-1 p50 0.21 ms or 0.36 ms on one pinned CPU; the two vCPUs' states
uncorrelated: studies/bench_latency_lottery.py and docs/measurements.md, "Batch-1 latency").
One 200-call window (40-70 ms) was a sample of one state, so a worker's p50
was whichever state it met. The canary reads the same states (a round's p50
and its canary correlate 0.90), so a round whose canary is beyond
CANARY_TOLERANCE x the fastest one is a slow-state round.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

Clock = Callable[[], float]  # monotonic seconds
MIN_CALLS = 200  # issue 13: at least 200 timed calls per worker
PATH = "predict_on_batch"  # the one user path timed: Keras's compiled single-batch predict
# A round whose canary reads this many times the fastest canary ran in a slow
# state. Measured (150 rounds of jax mlp, one vCPU): rounds with a canary under
# 1.2x the fastest had a p50 within 3 % of the fast state's; from 1.3x on they
# read 1.25-1.75x slower; 1.2-1.3x were mixed. The throughput repeats keep the
# harness's 3x (a scheduler slice); their 0.5 s repeats average over the states.
CANARY_TOLERANCE = 1.25
# Rounds are short (200 calls, ~50 ms on this VM), so a worker can afford to
# wait out a slow state: up to this many times `repeats` extra rounds.
EXTRA_ROUNDS = 3


@dataclass(frozen=True)
class Latency:
    """The timed calls of one latency benchmark, in ms (smaller is better)."""

    samples_ms: tuple[float, ...]
    path: str = PATH

    def __post_init__(self):
        if len(self.samples_ms) < 1:
            raise ValueError("Latency.samples_ms is empty; expected at least one timed call")
        bad = [s for s in self.samples_ms if not (s >= 0 and np.isfinite(s))]
        if bad:
            raise ValueError(f"Latency.samples_ms holds {bad[:3]!r}; expected finite times >= 0 ms")

    def percentile(self, q: float) -> float:
        return float(np.percentile(self.samples_ms, q))

    @property
    def p50_ms(self) -> float:
        return self.percentile(50)

    def summary(self, rounds: int | None = None) -> dict:
        """The record's `latency` block (contract: p50_ms, p90_ms, p99_ms, mean_ms, calls, path;
        `rounds`: how many timed rounds the calls came from, workers v3 on)."""
        out = {"p50_ms": _r(self.percentile(50)), "p90_ms": _r(self.percentile(90)),
               "p99_ms": _r(self.percentile(99)), "mean_ms": _r(float(np.mean(self.samples_ms))),
               "calls": len(self.samples_ms), "path": self.path}
        if rounds is not None:
            out["rounds"] = rounds
        return out


def _r(ms: float) -> float:
    return round(ms, 6)  # nanosecond resolution: far below any clock's noise


def measure(call: Callable[[], object], calls: int = MIN_CALLS, warmup_calls: int = 20,
            clock: Clock = time.perf_counter, path: str = PATH) -> Latency:
    """Warm up, then time `calls` single calls of `call()`."""
    if calls < 1 or warmup_calls < 0:
        raise ValueError(f"latency calls={calls!r}, warmup_calls={warmup_calls!r}; "
                         f"expected calls >= 1 and warmup_calls >= 0")
    for _ in range(warmup_calls):
        call()
    out = []
    for _ in range(calls):
        t0 = clock()
        call()
        out.append((clock() - t0) * 1000.0)
    return Latency(tuple(out), path)


# One rule whatever the number of clean rounds (workers v13): a worker's figure
# comes from its clean (fast-state) rounds, however many of the `repeats` wanted
# it got, 1 or more; only a worker with no clean round at all falls back to
# every round (`canary.kept: "all"`), and that worker the pool judges as slow
# throughout (flagged when also slower than its peers: disturbance.CANARY_SLOWER).
# Until v12 a worker with fewer than `repeats` clean rounds kept every round, so
# from night to night the series switched between "fast state only" and "every
# state" with how many slow-state rounds the extra-round budget met.
MIN_CLEAN_ROUNDS = 1


def protocol(repeats: int, warmup_calls: int):
    """The harness protocol for latency rounds: `repeats` clean rounds wanted,
    `warmup_calls` untimed calls first (one untimed round), this mode's canary
    tolerance, extra-round budget and clean-round rule (MIN_CLEAN_ROUNDS).
    min_repeat_seconds is unused (no calibration)."""
    from bench.measure import harness

    return harness.Protocol(repeats=repeats, min_repeat_seconds=1.0, warmup_steps=warmup_calls,
                            canary_tolerance=CANARY_TOLERANCE, max_extra_repeats=EXTRA_ROUNDS * repeats,
                            min_clean=MIN_CLEAN_ROUNDS)


@dataclass(frozen=True)
class Rounds:
    """A worker's timed rounds: the harness's view (`timing`, one repeat per
    round, canaries either side) and each round's per-call times in ms."""

    timing: object  # harness.Timing
    rounds: tuple[tuple[float, ...], ...]  # one per timing.repeats, in order

    def __post_init__(self):
        if len(self.rounds) != len(self.timing.repeats):
            raise ValueError(f"Rounds: {len(self.rounds)} rounds for {len(self.timing.repeats)} repeats; "
                             f"expected one round per timed repeat")

    def _split(self) -> tuple[list, list]:
        kept = {id(r) for r in self.timing.kept}
        pairs = list(zip(self.timing.repeats, self.rounds))
        return [c for r, c in pairs if id(r) in kept], [c for r, c in pairs if id(r) not in kept]

    @property
    def latency(self) -> Latency:
        """Every call of the kept rounds (the clean ones; all, when none was clean)."""
        return Latency(tuple(s for r in self._split()[0] for s in r))

    @property
    def samples(self) -> list[float]:
        """Each kept round's p50, ms: the record's `samples` (one figure per timed repeat)."""
        return [_r(Latency(r).p50_ms) for r in self._split()[0]]

    @property
    def disturbed_samples(self) -> list[float]:
        """Each slow-state round's p50, ms (kept in the record, in no figure)."""
        return [_r(Latency(r).p50_ms) for r in self._split()[1]]


def measure_rounds(run_round: Callable[[int], tuple[float, ...]], calls: int, protocol, clock: Clock = time.perf_counter,
                   canary=None, probe=None, canary_floor: float | None = None, sync=None, meter=None,
                   wall: Clock = time.time) -> Rounds:
    """Time rounds of `calls` calls through the harness (warm-up, canaries, extra
    rounds for slow ones; `canary_floor`, `sync` (a duet's barrier before each
    round), `meter` (read around each round) and `wall` as harness.benchmark's).
    `run_round(n)` times n calls and returns their ms (`measure(call, n, 0, clock).samples_ms`).
    Each round's wall-clock window is the timing's `windows` (the record's
    `repeat_windows`), so two sides' rounds can be matched on it."""
    from bench.measure import harness

    got: list[tuple[float, ...]] = []
    timing = harness.benchmark(lambda n: got.append(tuple(run_round(n))), 1, protocol, clock, canary, calls, probe,
                               wall, canary_floor=canary_floor, sync=sync, meter=meter)
    return Rounds(timing, tuple(got[len(got) - len(timing.repeats):]))  # the warm-up round first


def combine(blocks: list[dict]) -> dict:
    """One `latency` block from several workers' blocks: the median worker's
    figure for each percentile and the mean, every timed call counted: the
    shape of a typical worker's calls. The result's `value` is estimate.HEADLINE
    over the workers' p50s (workers v9: their trimmed mean), so it sits near p50_ms."""
    import statistics

    out = {k: round(statistics.median(b[k] for b in blocks), 6) for k in ("p50_ms", "p90_ms", "p99_ms", "mean_ms")}
    out.update(calls=sum(b["calls"] for b in blocks), path=blocks[0]["path"], workers=len(blocks))
    if all("rounds" in b for b in blocks):
        out["rounds"] = sum(b["rounds"] for b in blocks)
    return out
