"""Protocol 2's order of work: which worker process runs which benchmarks, when. Pure.

Each benchmark of a backend runs in `workers` separate worker processes. A
worker process runs every benchmark of its backend once (one Keras import per
worker, which keeps the nightly inside its time budget), in an order rotated by
one per worker, so no benchmark always runs first (cold caches) or last (a
warm, maybe throttled CPU). With two sides (same-machine A/B), the workers of
A and B run in one job, either in turns (A0 B0 A1 B1 ...) or as duets.

Duet (`duet`): worker i of A and worker i of B run at the same time, each
pinned to its own half of the CPUs (the halves swap every pair), so both see
the same moment of the host. Measured on this 2-core VM with
studies/bench_duet.py (jax mlp/train, 7 pairs each way): the sd of a pair's
log ratio B/A was 4.1 % as a duet and 15.6 % in turns; this VM's speed moves
by 10-30 % within the ~20 s between the two workers of a pair in turns (after
Bulej et al., "Duet Benchmarking", ICPE 2020). One calibration worker of A
runs alone first, so every duet worker does its fixed work; its figure (an
uncontended one) counts in neither side's headline nor any pair. Workers
v13: before each timed repeat the two processes of a duet meet at a barrier
(bench/measure/barrier.py), so their timed calls start together although
their compiles and gates take different times.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

# The protocol's history (a new version starts a new baseline for every series):
#   workers v2: worker processes, fixed work, rotated order, duets for A/B.
#   workers v3: the latency mode times its calls in canary-checked rounds
#               (bench/measure/latency.py), and every worker judges its
#               canaries against the fastest its side has seen in the run
#               (pool.py's floor); throughput repeats otherwise as in v2.
#   workers v4: every worker runs with glibc's malloc thresholds fixed
#               (benchmarks.yaml harness.malloc_*), so its big buffers stay in
#               the heap instead of being mapped afresh on every call in some
#               processes and not others (docs/measurements.md, "The allocator": a torch
#               cnn/predict worker read 8.5k or 21k samples/s by that alone).
#   workers v5: a train benchmark's quality gate and timed-result check predict
#               the held-out digits at the benchmark's batch size, not in one
#               batch of all 360: that one big batch grew torch's heap by 3 to
#               31 MiB, process by process, before the timed calls
#               (bench/measure/child.py _gate; the peaks, and the heap the
#               timed calls start from, change).
#   workers v6: the headline of a train or predict result is its best clean
#               worker, not their median (bench/measure/estimate.py HEADLINE
#               says why); latency keeps the median. `spread` stays the
#               workers' distance from their median.
#   workers v7: the headline of every result (latency too) is the fastest
#               sample of its clean workers: the fastest timed repeat, the
#               fastest round's p50 (estimate.py HEADLINE says why).
#   workers v8: every worker runs with glibc's per-thread cache of small freed
#               blocks off (benchmarks.yaml harness.malloc_tcache_count: 0):
#               cached blocks kept torch's freed activations from merging, so
#               its heap fragmented inside predict by a different amount in
#               each process, and the fragmented workers ran slower and peaked
#               higher (docs/measurements.md, "The allocator").
#   workers v9: the headline of every result is the trimmed mean of its clean
#               workers' figures (the best and the worst left out), not the
#               fastest sample (estimate.py HEADLINE says why).
#   workers v10: a worker's CPU seconds per wall second (the disturbance flag's
#               first rule) are read at nanoseconds, not in 10 ms clock ticks:
#               a latency round's share moved by a tick, so undisturbed latency
#               workers were flagged, rerun and left out of the headline
#               (disturbance.snapshot says how many).
#   workers v11: every timed call of a train benchmark starts from the weights
#               and optimizer state the gate left (child._start_state, untimed):
#               trained on from call to call, torch's weights went denormal part
#               way through a worker, which then ran ~20 % slower (mlp/train),
#               at a point set by the steps per call its invocation calibrated.
#   workers v12: a worker whose canary alone read slow throughout is flagged
#               (and rerun, and left out of the headline) only when its figure
#               is also 3 % worse than its clean peers' median
#               (disturbance.CANARY_SLOWER): on a drifting host the canary flagged
#               latency workers that timed as fast as the others.
#   workers v13: the same work and the same start on both sides and every night
#               (issue 53): each series' steps per call are stored (read back
#               from its newest record under this protocol, bench/measure/steps.py)
#               and reused while a check call of them lasts 0.5-2x
#               min_repeat_seconds (harness.STEPS_BAND; else recalibrated, and
#               `steps_source`/`steps_why` say so); a timed train call starts
#               from the committed weights and the optimizer as built
#               (child._start_state), not from what the gate trained, its
#               reset synced before the clock; the energy meter is read outside
#               the timed call (harness.timed); a latency worker's figure is its
#               clean rounds however many (latency.MIN_CLEAN_ROUNDS); a duet's
#               two sides meet at a barrier before every timed repeat or round
#               (bench/measure/barrier.py), and every repeat records its window.
NAME, VERSION = "workers", 13
# How a result's peak memory comes from its workers (run.protocol.memory; a new
# one starts a new baseline for the memory series alone, series.memory_state):
#   absent: the median of the workers that ran the benchmark earliest in their
#           process (before 2026-12-04: of the clean workers)
#   least:  the least of the first-round workers' peaks (pool.memory_workers)
#   least, settled: the same, each benchmark's peak taken after its worker let go
#           of what earlier benchmarks left (usage.settle; from 2026-12-04 evening)
MEMORY = "least, settled"
PROTOCOL = {"name": NAME, "version": VERSION, "memory": MEMORY}


@dataclass(frozen=True)
class Task:
    """One worker process: its side ('' or 'a'/'b'), index and benchmarks in order."""

    side: str
    worker: int
    keys: tuple[tuple[str, str], ...]  # (model, mode)
    rerun: bool = False
    calibration: bool = False  # a duet's first worker: sets the fixed work, counts nowhere

    def __post_init__(self):
        if self.worker < 0 or not self.keys:
            raise ValueError(f"Task: worker {self.worker!r} with benchmarks {self.keys!r}; "
                             f"expected a worker index >= 0 and at least one benchmark")


def rotated(keys: tuple, by: int) -> tuple:
    by %= len(keys)
    return keys[by:] + keys[:by]


def plan(keys: tuple[tuple[str, str], ...], workers: int, sides: tuple[str, ...] = ("",)) -> list[Task]:
    """The worker processes in the order they run."""
    if workers < 1:
        raise ValueError(f"plan: workers is {workers!r}; expected a positive integer")
    if not keys:
        return []
    return [Task(side, w, rotated(tuple(keys), w)) for w in range(workers) for side in sides]


def profiled_worker(index: int, count: int, workers: int) -> int:
    """The worker (0 .. workers-1) whose process profiles the benchmark at
    `index` of `count` (bench/measure/profiling.py): the one that runs it
    latest in its rotated order (plan), the first such. With workers >= count
    every benchmark is the last of some process, so no benchmark's timing
    ever follows a profiled call in its process."""
    if not (0 <= index < count) or workers < 1:
        raise ValueError(f"profiled_worker: benchmark {index!r} of {count!r}, {workers!r} workers; "
                         "expected 0 <= index < count and workers >= 1")
    return max(range(workers), key=lambda w: ((index - w) % count, -w))


def together(tasks: list[Task], size: int) -> list[tuple[Task, ...]]:
    """`tasks` in groups of up to `size` that run at the same time (plan's order;
    size 1: one after the other)."""
    if size < 1:
        raise ValueError(f"together: size is {size!r}; expected a positive integer")
    return [tuple(tasks[i:i + size]) for i in range(0, len(tasks), size)]


def reruns(disturbed: dict[tuple[str, tuple[str, str]], int], workers: int,
           order: tuple[tuple[str, str], ...], sides: tuple[str, ...] = ("",)) -> list[Task]:
    """Extra worker processes that rerun disturbed workers once each.

    `disturbed` maps (side, key) to how many of its workers were disturbed;
    rerun round r holds every benchmark with more than r of them, in the
    benchmark order, sides alternating as in `plan`.
    """
    rounds = max(disturbed.values(), default=0)
    tasks = []
    for r in range(rounds):
        for side in sides:
            keys = tuple(k for k in order if disturbed.get((side, k), 0) > r)
            if keys:
                tasks.append(Task(side, workers + r, keys, rerun=True))
    return tasks


def duet(keys: tuple[tuple[str, str], ...], workers: int) -> list[tuple[Task, ...]]:
    """A/B as duets: groups of tasks that run at the same time, in order: A's
    calibration worker alone, then (A i, B i) for each worker i (plan's order)."""
    pairs = [(t, replace(t, side="b")) for t in plan(keys, workers, ("a",))]
    return [(Task("a", 0, tuple(keys), calibration=True),)] + pairs if pairs else []


def duet_reruns(disturbed: dict[tuple[str, tuple[str, str]], int], workers: int,
                order: tuple[tuple[str, str], ...]) -> list[tuple[Task, Task]]:
    """Reruns as duets: `reruns` of the side that had more disturbed workers
    of each benchmark, run on both sides together (a side alone would run
    uncontended, at another speed than its duet workers)."""
    either = {("a", k): max(disturbed.get((side, k), 0) for side in ("a", "b")) for k in order}
    return [(t, replace(t, side="b")) for t in reruns(either, workers, order, ("a",))]


def worker_slice(task: Task, cpus, size: int) -> tuple[int, ...]:
    """The `size` CPUs of `cpus` that `task`'s process is pinned to: consecutive
    slices, moving on by one slice per worker index (wrapping), so the workers
    of a benchmark share out the CPUs (each vCPU here has speed states of its
    own: bench/measure/latency.py)."""
    ordered = sorted(cpus)
    start = task.worker * size
    return tuple(ordered[(start + i) % len(ordered)] for i in range(size))


def halves(cpus) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """Two equal, disjoint CPU sets for a duet (an odd CPU left out), or None
    with fewer than 2 CPUs."""
    ordered = sorted(cpus or ())
    n = len(ordered) // 2
    return (tuple(ordered[:n]), tuple(ordered[n:2 * n])) if n else None


def duet_cpus(task: Task, pair: tuple[tuple[int, ...], tuple[int, ...]]) -> tuple[int, ...]:
    """The CPU half `task` runs on: they swap every worker index, so neither
    side always has the same core (the calibration worker takes the first)."""
    if task.calibration:
        return pair[0]
    return pair[(task.worker + (task.side == "b")) % 2]
