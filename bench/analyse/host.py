"""How fast the host itself ran on a night, from the reference workload (pure).

Every protocol-2 worker times a fixed numpy workload (the canary) between its
repeats and records its fastest run as `reference_seconds` and, since
2026-12-06, the median of those around its kept repeats as
`reference_median_seconds` (bench/measure/pool.py). No Keras code runs in it,
so when a whole night reads slow and this workload reads slow too, the host was slow, not Keras. The headline is never
rescaled by it (issue 10): the status table only says what the host did on the
nights a row's note speaks of (bench/present/markdown.py).

Units: seconds, smaller is faster. A shift is slow/usual - 1: positive means
the host ran slower on those nights than on the nights before.
"""

from __future__ import annotations

import statistics
from typing import Any, Iterable, Mapping, Sequence

# A night's reading is the median over every counted worker of the record
# (5 workers x 6 benchmarks on a local nightly): one worker's reading moves by
# ±10 % on a calm host, the record's median by a few percent. Below HELD the
# note calls the host as before. Chosen on the workers v11 kept sets
# (studies/bench_host_note.py; docs/measurements.md, "A slow host or slow Keras"): 30 of the 31
# rows that read 5 % or more worse came on nights this read 5 % or more slower,
# 1 of the 180 rows on the other nights; at 3 % the same 30, with more calm
# rows called slower; at 8 and 10 %, 29 and 26.
HELD = 0.05

# A reading outside this range (seconds) is no reading: the canary takes 2-4 ms
# here and never under a microsecond or over a minute on any real host, and the
# record contract only asks for a finite number >= 0, so a broken or hostile
# record could otherwise make a shift of 1e308 % (or an infinite one, which no
# JSON writer takes).
PLAUSIBLE = (1e-6, 60.0)


# A worker's two readings, the one a night is read by first (`basis`). Since
# 2026-12-06 a worker also records the median of the canaries around its kept
# timed repeats: its fastest canary catches the host's fastest moment, the
# median the state the repeats ran in. Measured on the ten v11/v12 stability sets
# (studies/bench_host_note.py --basis; docs/measurements.md, "A slow host or slow
# Keras"): within one process the canary's minute medians followed the models'
# (correlation 0.71-0.96, studies/bench_host_probes.py); on the ten sets' first workers,
# at the 5 % line, the median reading called the host slower for 46 of the 57 rows the
# machine made 5 % worse, the fastest for 38. A night is compared only with nights read
# the same way (`kind`).
TYPICAL = "reference_median_seconds"
FASTEST = "reference_seconds"
BASES = (TYPICAL, FASTEST)


def reading(data: Mapping[str, Any]) -> tuple[str, float] | None:
    """(basis, seconds): how the record's night is read (TYPICAL when a counted
    worker has that reading, else FASTEST) and the median over the ok workers
    that count (a duet's calibration worker and `alone` leftovers do not) of
    that reading; None when no counted worker has either (protocol 1)."""
    for by in BASES:
        found = _median(data, by)
        if found is not None:
            return by, found
    return None


def basis(data: Mapping[str, Any]) -> str | None:
    """Which reading the record's night is read by (see `reading`)."""
    found = reading(data)
    return found[0] if found else None


def seconds(data: Mapping[str, Any], by: str | None = None) -> float | None:
    """The record's host reading: by its `basis` (see `reading`), or by the
    reading `by` when given; None when no counted worker has it."""
    if by is not None:
        return _median(data, by)
    found = reading(data)
    return found[1] if found else None


def _median(data: Mapping[str, Any], by: str) -> float | None:
    """The median of the counted workers' reading `by`; None when none has it."""
    found = [w[by] for r in data.get("results", ()) if isinstance(r, Mapping)
             for w in r.get("workers", ()) or () if _counted(w, by)]
    return statistics.median(found) if found else None


def _counted(w: Any, by: str) -> bool:
    if not isinstance(w, Mapping) or w.get("status") != "ok" or w.get("calibration") or w.get("alone"):
        return False
    v = w.get(by)
    return isinstance(v, (int, float)) and not isinstance(v, bool) and PLAUSIBLE[0] <= v <= PLAUSIBLE[1]


def shift(readings: Sequence[float | None], start: int, end: int | None = None, *,
          before: int) -> float | None:
    """median(readings[start:end]) / median(up to `before` readings before
    `start`; the callers pass trends.BASELINE, the nights the status's old
    level rests on) - 1, over the nights that have a reading; None when either
    side has none. `readings` are one series' nights, oldest first."""
    if not 0 <= start < len(readings):
        return None
    now = [r for r in readings[start:end] if r]
    usual = [r for r in readings[max(0, start - before):start] if r]
    if not now or not usual:
        return None
    return statistics.median(now) / statistics.median(usual) - 1


def readings(points: Sequence[Any], at: int) -> list[float | None]:
    """The host readings of a series' points (series.Point) comparable with
    night `at`'s: those of another protocol (a duet shares the host with its
    partner) or another numpy (the workload's own code) read None."""
    kinds, by_kind = _by_kind(points)
    return by_kind[kinds[at]]


def night_shifts(points: Sequence[Any], *, before: int) -> list[float | None]:
    """Each night's shift against the comparable nights before it (`bench show`):
    `shift(readings(points, i), i, i + 1)` for every i, the readings made once
    per kind of night rather than once per night."""
    return shifts_by_night([p.protocol for p in points], [p.env for p in points],
                           [p.host_basis for p in points], [p.host for p in points], before=before)


def shifts_by_night(protocols: Sequence[str], envs: Sequence[Iterable[tuple[str, str]]],
                    bases: Sequence[str | None], hosts: Sequence[float | None], *,
                    before: int) -> list[float | None]:
    """night_shifts of a series' points given as columns (series.Columns'
    protocols, envs, bases, hosts). A series without a reading has no shift:
    every night None, with no kind worked out."""
    if not any(hosts):
        return [None] * len(hosts)
    kinds, by_kind = _kinds(protocols, envs, bases, hosts)
    return [shift(by_kind[k], i, i + 1, before=before) for i, k in enumerate(kinds)]


def _by_kind(points: Sequence[Any]) -> tuple[list, dict[tuple, list[float | None]]]:
    """Each point's kind (protocol, numpy), and per kind the readings with the
    other kinds' nights as None."""
    return _kinds([p.protocol for p in points], [p.env for p in points], [p.host_basis for p in points],
                  [p.host for p in points])


def _kinds(protocols, envs, bases, hosts) -> tuple[list, dict[tuple, list[float | None]]]:
    numpy: dict[int, str | None] = {}  # by the env's id: a record's points share one (`envs` keeps them alive)
    kinds = []
    for protocol, env, by in zip(protocols, envs, bases):
        n = numpy.get(id(env), numpy)
        if n is numpy:
            n = numpy[id(env)] = dict(env).get("numpy")
        kinds.append((protocol, n, by))  # kind()
    return kinds, {k: [h if pk == k else None for h, pk in zip(hosts, kinds)] for k in set(kinds)}


def kind(protocol: str, env: Iterable[tuple[str, str]], by: str | None) -> tuple[str, str | None, str | None]:
    """What two readings must share to compare: the protocol ('workers v11',
    a duet's with its mark), numpy (the workload's own code) and the reading's
    `basis`. `env` is series.env_fingerprint's (name, version) pairs."""
    return protocol, dict(env).get("numpy"), by


def describe(value: float | None) -> str:
    """The note's words: 'the host as before (reference workload +1.2 %)',
    'the host 14.0 % slower (reference workload)', '' when unknown."""
    if value is None:
        return ""
    if abs(value) < HELD:
        return f"the host as before (reference workload {value * 100:+.1f} %)"
    return f"the host {abs(value) * 100:.1f} % {'slower' if value > 0 else 'faster'} (reference workload)"
