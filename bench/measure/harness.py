"""The timing protocol: calibrate, time repeats, check a canary, take the median.

Pure logic: the workload is a callable `run(steps)` that performs `steps`
steps (batches) and returns only when the results are on the host (the child
wraps `model.fit`/`model.predict`, which return host values, plus a backend
sync). The clock and the canary are passed in, so tests drive it all with a
fake clock.

The protocol (docs/DESIGN.md, 'Measuring honestly'):

1. Warm-up: `warmup_steps` untimed steps after the first (compiling) call.
2. Calibration: the step count grows until one call lasts at least
   `min_repeat_seconds`; a trial disturbed by a slow CPU (see 4) is retried.
3. Timed repeats: `repeats` calls of `run(steps)` between two reads of a
   monotonic clock; nothing else (no callbacks, no progress bar) in between.
4. Canary: a fixed tiny numpy matmul, timed just before and just after each
   repeat. This machine has bursts where the CPU runs up to 10x slower for a
   second or two; such a burst shows as a canary much slower than the fastest
   canary seen. A repeat with a canary slower than `canary_tolerance` times
   that fastest canary is *disturbed*: it is kept in the record
   (`canary.disturbed_samples`) but not in `samples`, and is redone, up to
   `max_extra_repeats` extra repeats (the same budget also buys extra repeats
   when the clean ones disagree by more than `spread_goal`, where one is set:
   latency rounds; throughput repeats only where benchmarks.yaml's
   `harness.spread_goal` asks). If the CPU stays
   slow for longer than that budget, every repeat counts (`canary.kept =
   "all"`): a slow machine then shows as a slow number rather than no number.
5. Headline: the median of the kept repeats' throughputs (samples/s, bigger is
   better), so one burst the canary missed still cannot move it.

Limits: a slowdown that starts and ends inside one repeat, between its two
canaries, is left to the median; and a machine whose speed drifts from one
process to the next (a shared VM) moves the headline of the whole process,
which no in-process protocol can see. The repeats, the canaries and the
dropped repeats are all in the record, so a reader can judge.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass
from typing import Callable, Mapping

from bench.measure import disturbance, estimate

Clock = Callable[[], float]  # monotonic seconds
Run = Callable[[int], object]  # run(steps): do `steps` batches, host-synchronised
Canary = Callable[[], float]  # seconds taken by a fixed tiny computation
Probe = Callable[[], "disturbance.Snapshot"]  # CPU time, pressure and steal now
Reset = Callable[[], None]  # puts the state a timed call starts from back (train: the weights)
Sync = Callable[[], None]  # waits for the other side of a duet before a timed call (bench/measure/barrier.py)

CANARY_WARMUP = 5  # canaries before the first timing, to know the fast CPU's figure
MAX_GROWTH = 100  # calibration never extrapolates a step count by more than this
# A call's cost must be dominated by its steps, not by the call itself: Keras's
# per-fit set-up plus a slow first step cost ~0.35 s per call with torch on a
# small CPU, where a step takes ~0.03 s. Calibration keeps doubling while the
# time per step still falls by more than this fraction of the last trial's ...
LINEARITY = 0.15
# ... but a repeat never grows beyond this many times min_repeat_seconds.
MAX_OVERSHOOT = 8
# Stored work (workers v13): the steps per call a series calibrated once are
# reused while one call of them lasts within this band of min_repeat_seconds
# (a check call before the repeats); outside it they are calibrated afresh and
# the result says why (`steps_source: "recalibrated"`, `steps_why`). 0.5x-2x:
# halving or doubling the work moved samples/s by -3.6 to +2.8 % (workers v11's
# log, docs/measurements.md "Workers and fixed work"), so inside the band the
# work size costs at most that, and a machine or Keras change that moves a call
# by more than 2x gets work that fits it again.
STEPS_BAND = (0.5, 2.0)


@dataclass(frozen=True)
class Protocol:
    """How to time one benchmark. Seconds; counts are positive integers."""

    repeats: int
    min_repeat_seconds: float
    warmup_steps: int = 2
    canary_tolerance: float = 3.0  # a canary this many times the fastest one = a slowed CPU
    max_extra_repeats: int = -1  # redo budget for disturbed repeats; -1: as many as `repeats`
    max_steps: int = 1_000_000
    calibration_margin: float = 1.1  # aim calibration a little above the minimum
    # Clean repeats further than this from their median: time more (None: never).
    spread_goal: float | None = 0.10
    # Fewest clean repeats the figure is taken over; with fewer, every repeat counts
    # (None: `repeats`, the throughput rule; latency.protocol sets 1, workers v13).
    min_clean: int | None = None

    def __post_init__(self):
        checks = {
            "repeats": self.repeats >= 1,
            "min_repeat_seconds": self.min_repeat_seconds > 0,
            "warmup_steps": self.warmup_steps >= 0,
            "canary_tolerance": self.canary_tolerance > 1,
            "max_extra_repeats": self.max_extra_repeats >= -1,
            "max_steps": self.max_steps >= 1,
            "calibration_margin": self.calibration_margin >= 1,
            "spread_goal": self.spread_goal is None or self.spread_goal > 0,
            "min_clean": self.min_clean is None or 1 <= self.min_clean <= self.repeats,
        }
        for name, good in checks.items():
            if not good:
                raise ValueError(f"Protocol.{name} is {getattr(self, name)!r}; expected a value in range")
        if self.max_extra_repeats == -1:
            object.__setattr__(self, "max_extra_repeats", self.repeats)
        if self.min_clean is None:
            object.__setattr__(self, "min_clean", self.repeats)

    @classmethod
    def from_config(cls, harness, quick: bool) -> "Protocol":
        """From benchmarks.yaml's `harness` section (config.Harness)."""
        return cls(
            repeats=harness.quick_repeats if quick else harness.repeats,
            min_repeat_seconds=harness.quick_min_repeat_seconds if quick else harness.min_repeat_seconds,
            warmup_steps=harness.warmup_steps,
            canary_tolerance=harness.canary_tolerance,
            spread_goal=harness.spread_goal,
        )


@dataclass(frozen=True)
class Repeat:
    """One timed call: its duration and the canaries either side (seconds)."""

    seconds: float
    canary_before: float
    canary_after: float
    load: disturbance.Window | None = None  # CPU share, stall and steal during the call

    @property
    def canary(self) -> float:
        return max(self.canary_before, self.canary_after)


@dataclass(frozen=True)
class Timing:
    """The timed repeats of one benchmark and what they say.

    `samples` and `value` are throughputs in samples/s (bigger is better).
    """

    steps: int
    samples_per_step: int
    repeats: tuple[Repeat, ...]
    canary_baseline: float  # fastest canary this benchmark read, seconds
    canary_tolerance: float
    wanted: int  # clean repeats the protocol asked for
    warmup_seconds: float = 0.0
    calibration: tuple[tuple[int, float], ...] = ()  # (steps, seconds) trials; () = fixed work given
    # Wall-clock (unix s) start and end of the timed repeats: what a disturbance
    # must overlap to move the figure (the worker's `window` also spans imports,
    # data, compile and calibration).
    timed_window: tuple[float, float] | None = None
    canary_floor: float | None = None  # the fastest canary of the run before it (harness.benchmark)
    min_clean: int | None = None  # fewest clean repeats the figure needs (None: `wanted`)
    # Wall-clock (unix s) start and end of each timed call, in `repeats` order: how
    # the two sides' calls of a pair are matched (workers v13).
    windows: tuple[tuple[float, float], ...] = ()
    # Where `steps` came from (workers v13): "calibrated" (none stored), "stored"
    # (the series' stored work, its check call inside STEPS_BAND), "recalibrated"
    # (stored, but outside the band: `steps_why`), "fixed" (given by the parent).
    steps_source: str = "calibrated"
    steps_why: str | None = None

    def __post_init__(self):
        if not self.repeats:
            raise ValueError("Timing needs at least one repeat")
        if self.steps < 1 or self.samples_per_step < 1:
            raise ValueError(f"Timing: steps {self.steps!r} and samples_per_step "
                             f"{self.samples_per_step!r}; expected positive integers")

    def disturbed(self, r: Repeat) -> bool:
        """Did the CPU run slow around this repeat (canary beyond tolerance)?"""
        return r.canary > self.canary_tolerance * full_speed(self.canary_baseline, self.canary_floor)

    @property
    def clean(self) -> tuple[Repeat, ...]:
        return tuple(r for r in self.repeats if not self.disturbed(r))

    @property
    def kept(self) -> tuple[Repeat, ...]:
        """The repeats the headline uses: the clean ones when there are at least
        `min_clean` of them (default: all `wanted`), else every repeat."""
        return self.clean if self.enough_clean else self.repeats

    @property
    def enough_clean(self) -> bool:
        clean = self.clean
        return bool(clean) and len(clean) >= (self.min_clean or self.wanted)

    def throughput(self, r: Repeat) -> float:
        return self.steps * self.samples_per_step / r.seconds

    @property
    def samples(self) -> tuple[float, ...]:
        return tuple(self.throughput(r) for r in self.kept)

    @property
    def value(self) -> float:
        """Headline: median throughput of the kept repeats, samples/s."""
        return statistics.median(self.samples)

    def summary(self) -> dict:
        """Extra result fields for the run record (JSON-ready)."""
        kept = self.kept
        kept_ids = {id(r) for r in kept}
        dropped = [r for r in self.repeats if id(r) not in kept_ids]
        return {
            "steps_per_repeat": self.steps,
            "repeat_seconds": [round(r.seconds, 6) for r in kept],
            "warmup_seconds": round(self.warmup_seconds, 6),
            "calibration": [[s, round(t, 6)] for s, t in self.calibration],
            "canary": {
                "baseline_seconds": self.canary_baseline,
                **({"floor_seconds": self.canary_floor} if self.canary_floor else {}),
                "tolerance": self.canary_tolerance,
                "seconds": [round(r.canary, 6) for r in kept],
                "disturbed_samples": [self.throughput(r) for r in dropped],
                "kept": "clean" if self.enough_clean else "all",
            },
            "disturbance": disturbance.summarise([r.load for r in self.repeats if r.load is not None]),
            **({"timed_window": [round(t, 3) for t in self.timed_window]} if self.timed_window else {}),
            **({"repeat_windows": [[round(a, 4), round(b, 4)] for r, (a, b) in zip(self.repeats, self.windows)
                                   if id(r) in kept_ids]} if self.windows else {}),
            "steps_source": self.steps_source,
            **({"steps_why": self.steps_why} if self.steps_why else {}),
        }


def time_call(fn: Callable[[], object], clock: Clock) -> float:
    """Seconds one call of `fn` takes on `clock`."""
    t0 = clock()
    fn()
    return clock() - t0


def numpy_canary(size: int = 64, reps: int = 320, clock: Clock = time.perf_counter) -> Canary:
    """The real canary: `reps` fixed size x size float64 matmuls, timed as a whole.

    64x64 stays under OpenBLAS's threading threshold, so the canary measures
    one core, not the BLAS thread pool. Its length (about 4 ms here) is chosen
    to be comparable to a scheduler slice: measured on this machine with 8
    busy processes on its 2 cores, a 1 ms canary still fits inside one slice
    and reads as fast as on an idle machine, while the 4 ms one reads 2-5x
    slower. Two per repeat cost about 2-3 % of wall time, outside the timed region.
    """
    import numpy as np

    a = np.full((size, size), 0.5)

    def canary() -> float:
        t0 = clock()
        for _ in range(reps):
            a @ a
        return clock() - t0

    return canary


class _Canaries:
    """The fastest canary seen so far: the 'CPU at full speed' reference."""

    def __init__(self, canary: Canary, warmup: int = CANARY_WARMUP, floor: float | None = None):
        self.canary = canary
        # `floor`: the fastest canary an earlier benchmark of this run saw. Without
        # it, a benchmark that starts in a slow CPU state takes that state as "full
        # speed" and keeps its slow repeats (bench/measure/latency.py, workers v3).
        self.floor = floor
        self.baseline = min(canary() for _ in range(warmup))  # this benchmark's own fastest

    def read(self) -> float:
        c = self.canary()
        self.baseline = min(self.baseline, c)
        return c

    def slow(self, *readings: float, tolerance: float) -> bool:
        return max(readings) > tolerance * self.full_speed

    @property
    def full_speed(self) -> float:
        return full_speed(self.baseline, self.floor)


def faster(a: float | None, b: float | None) -> float | None:
    """The faster (smaller) of two canary readings, either may be missing: how a
    floor is carried from benchmark to benchmark and from worker to worker."""
    return min((x for x in (a, b) if x), default=None)


def full_speed(baseline: float, floor: float | None) -> float:
    """The canary at full CPU speed: this benchmark's fastest, or the run's
    fastest before it (`floor`) when that is faster."""
    return min(baseline, floor) if floor else baseline


def untimed_reset(reset: Reset | None) -> None:
    """Before a timed call, outside its time: `reset` (if any) puts back the state
    every timed call starts from, so each one does the same work (workers v11)."""
    if reset is not None:
        reset()


def calibrate(run: Run, protocol: Protocol, clock: Clock, canaries: _Canaries,
              reset: Reset | None = None) -> tuple[tuple[int, float], ...]:
    """Grow the step count until one undisturbed call lasts >= min_repeat_seconds
    and its cost is linear in the steps (the fixed per-call cost amortised).

    Returns every (steps, seconds) trial; the last one's steps is the answer.
    Growth aims at min_repeat_seconds * calibration_margin from the last
    trial's pace, at least doubling, at most MAX_GROWTH-fold. A trial is
    linear when its time per step is within LINEARITY of the previous
    trial's; without that, the headline would measure the call overhead.
    """
    target = protocol.min_repeat_seconds * protocol.calibration_margin
    ceiling = protocol.min_repeat_seconds * MAX_OVERSHOOT
    steps, trials, retries = 1, [], 0
    pace = None  # seconds per step of the last undisturbed trial
    while True:
        untimed_reset(reset)
        before = canaries.read()
        seconds = time_call(lambda: run(steps), clock)
        after = canaries.read()
        if canaries.slow(before, after, tolerance=protocol.canary_tolerance) and retries < protocol.max_extra_repeats:
            retries += 1  # a slowed CPU makes the pace look slow: try again
            trials.append((steps, seconds))
            continue
        linear = pace is not None and seconds / steps >= (1 - LINEARITY) * pace
        pace = seconds / steps
        trials.append((steps, seconds))
        if steps >= protocol.max_steps or seconds >= ceiling:
            return tuple(trials)
        if seconds >= protocol.min_repeat_seconds and linear:
            return tuple(trials)
        grow = target / seconds if seconds > 0 else MAX_GROWTH
        steps = min(protocol.max_steps, max(steps * 2, math.ceil(steps * min(grow, MAX_GROWTH))))


def timed(run: Run, steps: int, clock: Clock, meter=None,
          wall: Clock = time.time) -> tuple[float, tuple[float, float]]:
    """One timed call of `run(steps)`: (seconds on `clock`, its (start, end) on `wall`).
    `meter.begin()` just before the clock's first read and `meter.end(steps)` just
    after its second: the energy meter's reads (NVML, RAPL) stay outside the timed
    call (workers v13; before, usage.Metered wrapped the call and they were inside)."""
    if meter is not None:
        meter.begin()
    started = wall()
    t0 = clock()
    run(steps)
    seconds = clock() - t0
    ended = wall()
    if meter is not None:
        meter.end(steps)
    return seconds, (started, ended)


def measure(run: Run, steps: int, protocol: Protocol, clock: Clock, canaries: _Canaries,
            probe: Probe | None = None, reset: Reset | None = None, sync: Sync | None = None,
            meter=None, wall: Clock = time.time) -> tuple[tuple[Repeat, ...], tuple[tuple[float, float], ...]]:
    """Timed repeats until `protocol.repeats` are clean and agree, or the budget is spent;
    returns the repeats and each one's wall-clock window.

    Clean repeats that disagree by more than `spread_goal` (largest distance
    from their median) get more repeats too: a median of more samples is the
    cheap cure for a noisy stretch the canary did not flag. Per repeat, in
    order: reset, sync, canary, probe, the timed call (`timed`), probe, canary.
    """
    repeats: list[Repeat] = []
    windows: list[tuple[float, float]] = []
    budget = protocol.repeats + protocol.max_extra_repeats

    def clean() -> list[float]:
        return [r.seconds for r in repeats if not canaries.slow(r.canary, tolerance=protocol.canary_tolerance)]

    def settled() -> bool:
        c = clean()
        return len(c) >= protocol.repeats and (protocol.spread_goal is None or spread(c) <= protocol.spread_goal)

    while len(repeats) < budget and not settled():
        untimed_reset(reset)
        if sync is not None:
            sync()  # before the canary: both sides read it, and start their call, together
        before = canaries.read()
        a = probe() if probe else None
        seconds, window = timed(run, steps, clock, meter, wall)
        load = disturbance.between(a, probe()) if probe else None
        repeats.append(Repeat(seconds, before, canaries.read(), load))
        windows.append(window)
    return tuple(repeats), tuple(windows)


def check_stored(run: Run, steps: int, protocol: Protocol, clock: Clock, canaries: _Canaries,
                 reset: Reset | None = None) -> tuple[tuple[int, float], ...]:
    """One untimed call of the stored `steps` (reset first, canaries around it;
    retried while a slowed CPU makes it read slow, like a calibration trial):
    the (steps, seconds) trials. Whether the last one lies inside STEPS_BAND
    decides between keeping the stored work and calibrating afresh."""
    trials, retries = [], 0
    while True:
        untimed_reset(reset)
        before = canaries.read()
        seconds = time_call(lambda: run(steps), clock)
        after = canaries.read()
        trials.append((steps, seconds))
        if canaries.slow(before, after, tolerance=protocol.canary_tolerance) and retries < protocol.max_extra_repeats:
            retries += 1
            continue
        return tuple(trials)


def outside_band(seconds: float, protocol: Protocol, band: tuple[float, float] = STEPS_BAND) -> str | None:
    """Why a call of `seconds` does not fit the stored work, or None when it lies
    within `band` x min_repeat_seconds (both ends included)."""
    low, high = (f * protocol.min_repeat_seconds for f in band)
    if low <= seconds <= high:
        return None
    return (f"a call of the stored work took {seconds:.3g} s, outside {band[0]:g}-{band[1]:g}x "
            f"min_repeat_seconds ({low:.3g}-{high:.3g} s)")


def benchmark(run: Run, samples_per_step: int, protocol: Protocol, clock: Clock = time.perf_counter,
              canary: Canary | None = None, steps: int | None = None, probe: Probe | None = None,
              wall: Clock = time.time, canary_floor: float | None = None, reset: Reset | None = None,
              stored: int | None = None, sync: Sync | None = None, meter=None) -> Timing:
    """Warm up, calibrate and time `run` (already compiled by a first call).

    `samples_per_step` is the batch size: throughput = steps * batch / seconds.
    `steps` given (protocol 2's fixed work, set by the series' first worker):
    no calibration, every repeat does exactly that work (`steps_source`
    "fixed"). Else `stored` given (the series' stored work, workers v13): one
    check call of it (`check_stored`); inside STEPS_BAND it is the work
    ("stored"), outside it the steps are calibrated afresh ("recalibrated",
    with the reason); neither given: calibrated ("calibrated"). `probe`
    (disturbance.snapshot) is read around every timed call; `wall` (unix s)
    dates the timed repeats, for Timing.timed_window and each repeat's window.
    `canary_floor`: the fastest canary (seconds) seen earlier in this run, the
    full-speed figure when it is faster than any this benchmark reads. `reset`
    runs before every calibration trial and timed repeat, untimed (a train
    benchmark's weights); `sync` before every timed repeat (a duet's barrier);
    `meter` (begin()/end(steps)) around every timed call, outside its time.
    """
    canaries = _Canaries(canary or numpy_canary(clock=clock), floor=canary_floor)
    warmup = time_call(lambda: run(protocol.warmup_steps), clock) if protocol.warmup_steps else 0.0
    source, why = "calibrated", None
    if steps is not None:
        if steps < 1:
            raise ValueError(f"benchmark: steps is {steps!r}; expected a positive integer (the fixed work)")
        trials, source = (), "fixed"
    else:
        trials = ()
        if stored is not None:
            if stored < 1:
                raise ValueError(f"benchmark: stored is {stored!r}; expected a positive integer (the stored work)")
            trials = check_stored(run, stored, protocol, clock, canaries, reset)
            why = outside_band(trials[-1][1], protocol)
            source = "recalibrated" if why else "stored"
        if why or stored is None:
            trials = trials + calibrate(run, protocol, clock, canaries, reset)
        steps = trials[-1][0]
    started = wall()
    repeats, windows = measure(run, steps, protocol, clock, canaries, probe, reset, sync, meter, wall)
    return Timing(steps=steps, samples_per_step=samples_per_step, repeats=repeats,
                  canary_baseline=canaries.baseline, canary_tolerance=protocol.canary_tolerance,
                  wanted=protocol.repeats, warmup_seconds=warmup, calibration=trials,
                  timed_window=(started, wall()), canary_floor=canary_floor, min_clean=protocol.min_clean,
                  windows=windows, steps_source=source, steps_why=why)


def spread(values: Mapping[str, float] | list[float]) -> float:
    """Largest relative distance from the median, a fraction (0.03 = +-3 %); 0 for none.

    Works for throughputs and for durations alike (smaller is better for both
    as a measure of agreement)."""
    vals = list(values.values()) if isinstance(values, Mapping) else list(values)
    return estimate.spread(vals)


SETUP_CALLS = 3  # one-step calls timed after the repeats to estimate the per-call set-up


def setup_seconds(run: Run, timing: Timing, clock: Clock, calls: int = SETUP_CALLS,
                  reset: Reset | None = None) -> float:
    """The per-call set-up cost (fit/predict's data adapter, callbacks, ...), seconds.

    A one-step call costs set-up + one step; a timed repeat costs set-up +
    `steps` steps. Their difference gives the pace per step, and the set-up is
    what a one-step call takes beyond it: median(one-step calls) - pace. Kept
    apart from the headline, so a slower set-up shows as its own number
    (`setup_seconds`, smaller is better) rather than hiding in a mix that
    depends on the step count. Never negative. `reset` as benchmark's: each
    one-step call starts where the repeats did.
    """
    def one_step() -> float:
        untimed_reset(reset)
        return time_call(lambda: run(1), clock)

    one = statistics.median(one_step() for _ in range(calls))
    repeat = statistics.median(r.seconds for r in timing.kept)
    pace = (repeat - one) / (timing.steps - 1) if timing.steps > 1 else 0.0
    return max(0.0, one - pace)
