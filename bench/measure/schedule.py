"""Protocol 2's order of work: which worker process runs which benchmarks, when. Pure.

Each benchmark of a backend runs in `workers` separate worker processes. A
worker process runs every benchmark of its backend once (one Keras import per
worker, which keeps the nightly inside its time budget), in an order rotated by
one per worker, so no benchmark always runs first (cold caches) or last (a
warm, maybe throttled CPU). With two sides (same-machine A/B), the workers of
A and B alternate: A0 B0 A1 B1 ... in one job, so drift hits both alike.
"""

from __future__ import annotations

from dataclasses import dataclass

NAME, VERSION = "workers", 2
PROTOCOL = {"name": NAME, "version": VERSION}


@dataclass(frozen=True)
class Task:
    """One worker process: its side ('' or 'a'/'b'), index and benchmarks in order."""

    side: str
    worker: int
    keys: tuple[tuple[str, str], ...]  # (model, mode)
    rerun: bool = False

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
