"""Types of the optional fields the record contract grew (docs/DESIGN.md, "Record contract extensions").

The schema allows extra fields anywhere, so schema_version 1 does not say
what type `run.protocol` or a result's `workers` must have; these checks do,
for every reader (bench.records.record.validate calls `problem`). Every
field stays optional: old records lack them all. A present field of the
wrong type refuses the record with one line naming the field, the value and
the expected form, instead of a traceback in whatever reads it later.

Pure: `problem(data)` returns that line's text (without the file name) or None.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping

from bench.errors import shown

KERAS_SOURCES = ("nightly", "pinned", "git")
WORKER_STATUSES = ("ok", "failed")

Check = Callable[[Any], bool]

# Every number a result carries lies in [-LARGEST, LARGEST], and a nonzero
# one is at least SMALLEST in size. Real figures sit far inside (samples/s,
# ms, bytes up to a petabyte, unix seconds); the bounds keep every sum,
# square, ratio and quantile the statistics take finite (1e308 + 1e308 is
# inf, and a site index holding inf is not JSON).
LARGEST = 1e15
SMALLEST = 1e-12


NUMBER = f"0 or a number in [{SMALLEST:g}, {LARGEST:g}]"  # how the forms below say it
INTEGER = f"an integer in [0, {LARGEST:g}]"


def bounded(v: float) -> bool:
    """A finite number within the bounds above."""
    return math.isfinite(v) and abs(v) <= LARGEST and (v == 0 or abs(v) >= SMALLEST)


def _number(minimum: float = 0.0) -> Check:
    return lambda v: (isinstance(v, (int, float)) and not isinstance(v, bool)
                      and bounded(v) and v >= minimum)


def _integer(minimum: int) -> Check:
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and minimum <= v <= LARGEST


def _optional(check: Check) -> Check:
    return lambda v: v is None or check(v)


def _string(v: Any) -> bool:
    return isinstance(v, str)


def _bool(v: Any) -> bool:
    return isinstance(v, bool)


def _str_map(v: Any) -> bool:
    return isinstance(v, dict) and all(isinstance(x, str) for x in v.values())


def _reasons(v: Any) -> bool:
    """'source: reason', or {source: reason} (both shapes are in use)."""
    return isinstance(v, str) or _str_map(v)


def _numbers(v: Any) -> bool:
    return isinstance(v, list) and all(_number()(x) for x in v)


def _native_protocol(v: Any) -> bool:
    """run.protocol.native (bench/measure/native.py): its version and pairs per worker."""
    return isinstance(v, dict) and _integer(1)(v.get("version")) and _integer(1)(v.get("pairs"))


def _span(v: Any) -> bool:
    """[start, end], unix seconds, start <= end."""
    return _numbers(v) and len(v) == 2 and v[0] <= v[1]


def _spans(v: Any) -> bool:
    """A list of [start, end] spans."""
    return isinstance(v, list) and all(_span(x) for x in v)


STEPS_SOURCES = ("calibrated", "stored", "recalibrated", "fixed")


# field -> (check, expected form), for run, environment and each result.
RUN: Mapping[str, tuple[Check, str]] = {
    "protocol": (lambda v: isinstance(v, dict) and _string(v.get("name")) and _integer(1)(v.get("version"))
                 and ("native" not in v or _native_protocol(v["native"])),
                 'an object {"name": str, "version": int >= 1}, with "native": {"version": int >= 1, '
                 '"pairs": int >= 1} where the run timed native code'),
}
ENVIRONMENT: Mapping[str, tuple[Check, str]] = {
    "keras_source": (lambda v: v in KERAS_SOURCES, f"one of {', '.join(KERAS_SOURCES)}"),
    "keras_commit": (_string, "a git SHA as a string"),
}
RESULT: Mapping[str, tuple[Check, str]] = {
    "steps_per_call": (_integer(1), "an integer >= 1"),
    "setup_seconds": (_number(), NUMBER),
    "spread": (_number(), NUMBER),
    "unstable": (_bool, "true or false"),
    "workers": (lambda v: isinstance(v, list), "a list of worker objects"),
    "latency": (lambda v: isinstance(v, dict), "an object with p50_ms, p90_ms, p99_ms, mean_ms, calls, path"),
    "memory": (lambda v: isinstance(v, dict), "an object with host_peak_bytes, device_peak_bytes, unavailable"),
    "energy": (lambda v: isinstance(v, dict), 'an object {"joules_per_1000_samples": number} or {"unavailable": str}'),
    "reference": (lambda v: isinstance(v, dict), "an object with value, ratio, pairs"),
    # workers v13 (bench/measure/steps.py): where the steps per call came from, and why recalibrated
    "steps_source": (lambda v: v in STEPS_SOURCES, f"one of {', '.join(STEPS_SOURCES)}"),
    "steps_why": (_string, "a string"),
    "min_repeat_seconds": (_number(), NUMBER),  # what the work was calibrated or checked for
    "repeat_windows": (_spans, "a list of [start, end] in unix seconds"),
    "sync": (lambda v: isinstance(v, dict), 'an object {"waits", "alone", "waited_seconds"}'),
    "native": (lambda v: isinstance(v, dict), 'an object with ratio, or error {"kind", "message"}, or unavailable'),
    # since 2026-12-07: one profiled call's summary (bench/measure/profiling.py, docs/profiles.md)
    "profile": (lambda v: isinstance(v, dict), 'an object: a summary with "ops", {"unavailable": str} '
                                               'or {"error": {"kind": str, "message": str}}'),
}
WORKER: Mapping[str, tuple[Check, str]] = {
    "value": (_optional(_number()), f"{NUMBER}, or null"),
    "samples": (_numbers, f"a list of numbers, each {NUMBER}"),
    "status": (lambda v: v in WORKER_STATUSES, f"one of {', '.join(WORKER_STATUSES)}"),
    "disturbed": (_bool, "true or false"),
    "calibration": (_bool, "true or false"),
    "alone": (_bool, "true or false"),
    "timed_window": (_span, f"[start, end] in unix seconds, start <= end, each {NUMBER}"),
    # workers v13: each kept timed repeat's (latency: round's) window, and the duet barrier's counts
    "repeat_windows": (_spans, "a list of [start, end] in unix seconds"),
    "sync": (lambda v: isinstance(v, dict), 'an object {"waits", "alone", "waited_seconds"}'),
    "host_peak_bytes": (_integer(0), INTEGER),  # this worker's peak RSS for the benchmark
    "position": (_integer(0), INTEGER),  # benchmarks its process ran before this one
    # its fastest run of the reference workload (the canary), the host's speed (bench/analyse/host.py)
    "reference_seconds": (_number(), NUMBER),
    # since 2026-12-06: the median of its canaries around the kept timed repeats
    "reference_median_seconds": (_number(), NUMBER),
    "error": (lambda v: isinstance(v, dict) and _string(v.get("kind")) and _string(v.get("message")),
              'an object {"kind": str, "message": str}'),
    "native": (lambda v: isinstance(v, dict), 'an object with ratio, or error {"kind", "message"}, or unavailable'),
}
LATENCY: Mapping[str, tuple[Check, str]] = {
    **{k: (_optional(_number()), f"{NUMBER}, or null") for k in ("p50_ms", "p90_ms", "p99_ms", "mean_ms")},
    "calls": (_integer(0), INTEGER),
    "path": (_string, "a string"),
    "rounds": (_integer(0), INTEGER),  # workers v3 on: the timed rounds the calls came from
}
MEMORY: Mapping[str, tuple[Check, str]] = {
    "host_peak_bytes": (_optional(_integer(0)), f"{INTEGER}, or null"),
    "device_peak_bytes": (_optional(_integer(0)), f"{INTEGER}, or null"),
    "unavailable": (_reasons, "a string or an object of strings {source: reason}"),
}
ENERGY: Mapping[str, tuple[Check, str]] = {
    "joules_per_1000_samples": (_number(), NUMBER),
    "unavailable": (_reasons, "a string (the reason) or an object of strings {source: reason}"),
}



def _names(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _op_columns(v: Any) -> bool:
    """{"name": [str], "ms": [number], "calls": [number]}, the three of one length."""
    return (isinstance(v, dict) and _names(v.get("name")) and _numbers(v.get("ms")) and _numbers(v.get("calls"))
            and len(v["name"]) == len(v["ms"]) == len(v["calls"]))


PROFILE: Mapping[str, tuple[Check, str]] = {
    "profiler": (_string, "a string"),
    "steps": (_integer(1), "an integer >= 1"),
    **{k: (_number(), NUMBER) for k in ("wall_ms", "device_ms", "host_ms", "other_ms", "seconds")},
    **{k: (_optional(_integer(0)), f"{INTEGER}, or null") for k in ("compiles", "retraces")},
    "ops": (_op_columns, '{"name": [str], "ms": [number], "calls": [number]}, three lists of one length'),
    "other_ops": (_names, "a list of strings"),
    "unavailable": (_string, "a string (the reason)"),
    "error": (lambda v: isinstance(v, dict) and _string(v.get("kind")) and _string(v.get("message")),
              'an object {"kind": str, "message": str}'),
}

# bench run --reference (bench/measure/reference.py): the reference build's
# headline, this build's ratio to it pair by pair, and how many pairs.
REFERENCE: Mapping[str, tuple[Check, str]] = {
    "value": (_number(), NUMBER),
    "ratio": (_number(), NUMBER),
    "pairs": (_integer(1), "an integer >= 1"),
}

# Keras against native code (bench/measure/native.py), on a result (its workers'
# median) and on each worker (its pairs'): ratio = Keras seconds / native seconds
# for the same steps (> 1: Keras slower); or why there is none.
NATIVE: Mapping[str, tuple[Check, str]] = {
    "ratio": (_number(SMALLEST), f"a number in [{SMALLEST:g}, {LARGEST:g}]"),
    "workers": (_integer(1), "an integer >= 1"),
    "pairs": (_integer(1), "an integer >= 1"),
    "log_se": (_number(), NUMBER),
    "version": (_integer(1), "an integer >= 1"),
    "unavailable": (_string, "a string (the reason)"),
    "error": (WORKER["error"][0], WORKER["error"][1]),
    "keras_seconds": (_numbers, f"a list of numbers, each {NUMBER}"),
    "native_seconds": (_numbers, f"a list of numbers, each {NUMBER}"),
    "seconds": (_number(), NUMBER),
}


# -- readers of run.ab (bench run --ab / --reference), for every stage ----------------

def ab_side(record_data: Mapping[str, Any]) -> tuple[str, str] | None:
    """(A/B run id, side 'a' or 'b'), or None when the record is no A/B side."""
    ab = record_data.get("run", {}).get("ab")
    if not isinstance(ab, Mapping):
        return None
    run_id, side = ab.get("id"), ab.get("side")
    if isinstance(run_id, str) and run_id and side in ("a", "b"):
        return run_id, side
    return None


def reference_side(record_data: Mapping[str, Any]) -> str | None:
    """'a' for the reference build's record of a `bench run --reference`, 'b'
    for the nightly's beside it (run.ab.reference: true), else None."""
    side = ab_side(record_data)
    return side[1] if side is not None and record_data["run"]["ab"].get("reference") is True else None


def problem(data: Mapping[str, Any]) -> str | None:
    """The first optional field of the wrong type, as 'field X is V; expected F', or None.

    `data` has passed the schema (run, environment and results are objects).
    """
    found = (_fields(data["run"], RUN, "run") or _fields(data["environment"], ENVIRONMENT, "environment"))
    if found:
        return found
    for i, r in enumerate(data["results"]):
        found = _result(r, f"results[{i}]")
        if found:
            return found
    return None


def _result(r: Mapping[str, Any], where: str) -> str | None:
    found = _fields(r, RESULT, where)
    if found:
        return found
    for name, spec in (("latency", LATENCY), ("memory", MEMORY), ("energy", ENERGY), ("reference", REFERENCE),
                       ("native", NATIVE), ("profile", PROFILE)):
        if name in r:
            found = _fields(r[name], spec, f"{where}.{name}")
            if found:
                return found
    for j, w in enumerate(r.get("workers", ())):
        if not isinstance(w, dict):
            return f"field {where}.workers[{j}] is {shown(w)}; expected a worker object"
        found = _fields(w, WORKER, f"{where}.workers[{j}]") or (
            _fields(w["native"], NATIVE, f"{where}.workers[{j}].native") if "native" in w else None)
        if found:
            return found
    return None


def _fields(obj: Mapping[str, Any], spec: Mapping[str, tuple[Check, str]], where: str) -> str | None:
    if obj.keys().isdisjoint(spec):  # most records have none of them: one C-level check
        return None
    for name, (check, expected) in spec.items():  # in spec order: the same field named every time
        if name in obj and not check(obj[name]):
            return f"field {where}.{name} is {shown(obj[name])}; expected {expected}"
    return None

