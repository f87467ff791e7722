"""How fast the host ran for the head against the baseline (pure).

A comparison against past nights (the pull-request comment's fallback when
no same-machine A/B run exists) compares two machine states: a head that
ran while the host was slow reads slower in every row. The reference
workload every protocol-2 worker times (bench/analyse/host.py) says whether
that was so. Like the status table's note, this only tells; no verdict or
value is rescaled by it.

A shift is the head's reading over the median of the baseline's readings,
minus 1: positive means the host ran slower for the head. Only readings of
the same kind (host.kind: protocol, numpy and which worker reading) are compared.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from bench.analyse import host
from bench.analyse.series import env_fingerprint, protocol_of, record_state
from bench.records.record import RunRecord

Reading = tuple[tuple[str, str | None, str | None], float]  # (host.kind, seconds)


@dataclass(frozen=True)
class HostShift:
    backend: str
    device: str
    shift: float  # head / baseline - 1 of the reference workload's seconds: positive, a slower host


def reading(rec: RunRecord) -> Reading | None:
    """A record's host reading and its kind; None when it has none (protocol 1)."""
    found = host.reading(rec.data)
    if found is None:
        return None
    by, seconds = found
    # the kind a headline point of this record would have (series.build_series)
    return host.kind(protocol_of(record_state(rec)), env_fingerprint(rec.environment), by), seconds


def readings(records: Iterable[RunRecord]) -> dict[tuple[str, str], tuple[Reading, ...]]:
    """Per (backend, device): the readings of these records, in the given order."""
    out: dict[tuple[str, str], list[Reading]] = {}
    for rec in records:
        r = reading(rec)
        if r is not None:
            out.setdefault((rec.backend, rec.device), []).append(r)
    return {t: tuple(rs) for t, rs in sorted(out.items())}


def host_shifts(base: Mapping[tuple[str, str], Sequence[Reading]],
                head: Mapping[tuple[str, str], Reading]) -> tuple[HostShift, ...]:
    """Per target with a head reading and base readings of its kind: the shift."""
    out = []
    for (backend, device), (kind, seconds) in sorted(head.items()):
        usual = [s for k, s in base.get((backend, device), ()) if k == kind]
        shift = host.shift([*usual, seconds], len(usual), before=len(usual))  # None without `usual`
        if shift is not None:
            out.append(HostShift(backend, device, shift))
    return tuple(out)
