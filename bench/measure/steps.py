"""Fixed work per series: the steps per call a series settled on, read back from its records.

Workers v13 chooses a series' steps per call once, the first time it runs
under the protocol, and reuses them every night after: the work one timed
call does is then the same from night to night, so a change in samples/s is
not a change in how much work a call holds (halving or doubling it moved
samples/s by -3.6 to +2.8 %, docs/measurements.md "Workers and fixed work").
Before each run's repeats the first worker checks the stored work with one
call (bench/measure/harness.py STEPS_BAND) and calibrates afresh only when it
falls outside the band; the result then says so (`steps_source`).

Where they are stored: in the records themselves, so no state file has to
survive between nightly jobs on a runner that starts each job from an empty
workspace. A series' stored work is the `steps_per_call` of its newest ok
result among the records `bench run` is pointed at (`--steps-from`: the data
branch's checkout in the nightly job, `.local/data` for scripts/local-nightly.sh;
and always the records directly in its own `--out` folder, where repeated local
runs such as studies/bench_turns.sh's go).
A record counts when it has the same device, backend label and protocol
(`run.protocol`: name, version and memory rule; what else a record's protocol
names, such as the native pairs timed after the repeats, does not touch the
timed work and is not compared), and its result the same
model, mode, batch size and `min_repeat_seconds` (the nightly's and --quick's
differ). Newest: by `run.started_at`, then attempt (bench/records/newest.py).
"""

from __future__ import annotations

import json
import os
from typing import Iterable, Mapping

from bench.records.record import safe

Key = tuple  # (model, mode)


def candidates(folders: Iterable[str], backend: str, device: str, flat: Iterable[str] = ()) -> list[str]:
    """The record files below `folders` (and directly in `flat`: --out, by default
    the working folder, is not walked) whose name says they are `backend` on
    `device` (records are named <backend>--<device>--<run id>-<attempt>.json,
    record.RunRecord.relpath), so a data branch of other series is not read."""
    prefix = f"{safe(backend)}--{safe(device)}--"

    def ours(names):
        return [n for n in names if n.startswith(prefix) and n.endswith(".json")]

    out = []
    for top in folders:
        for folder, _, names in os.walk(top):
            out.extend(os.path.join(folder, n) for n in ours(names))
    for folder in flat:
        try:
            out.extend(os.path.join(folder, n) for n in ours(os.listdir(folder)))
        except OSError:
            continue
    return sorted(set(out))


def stored(records: Iterable[Mapping], *, backend: str, device: str, protocol: Mapping,
           wanted: Mapping[Key, tuple[int, float]]) -> dict[Key, int]:
    """{(model, mode): steps} from the newest matching record of each series.

    `wanted`: {(model, mode): (batch_size, min_repeat_seconds)} of this run.
    A record or result that does not match (module docstring) is passed over;
    malformed ones too (a folder may hold other JSON)."""
    best: dict[Key, tuple[tuple, int]] = {}
    for rec in records:
        try:
            run, target = rec["run"], rec["target"]
            if target.get("backend") != backend or target.get("device") != device:
                continue
            if not _same_protocol(run.get("protocol"), protocol):
                continue
            when = (str(run["started_at"]), int(run.get("attempt", 1)))
            results = rec["results"]
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
        for r in results:
            if not isinstance(r, Mapping) or r.get("status") != "ok":
                continue
            key = (r.get("model"), r.get("mode"))
            steps = r.get("steps_per_call")
            if key not in wanted or not isinstance(steps, int) or isinstance(steps, bool) or steps < 1:
                continue
            if (r.get("batch_size"), r.get("min_repeat_seconds")) != tuple(wanted[key]):
                continue
            if key not in best or when > best[key][0]:
                best[key] = (when, steps)
    return {k: steps for k, (_, steps) in best.items()}


def load(folders: Iterable[str], *, backend: str, device: str, protocol: Mapping,
         wanted: Mapping[Key, tuple[int, float]], flat: Iterable[str] = ()) -> dict[Key, int]:
    """`stored` over the record files below `folders` and directly in `flat`
    (a file that does not read as JSON is passed over: the figures never depend on it)."""
    def read():
        for path in candidates(folders, backend, device, flat):
            try:
                with open(path, encoding="utf-8") as f:
                    yield json.load(f)
            except (OSError, ValueError):
                continue

    return stored(read(), backend=backend, device=device, protocol=protocol, wanted=wanted)


def _same_protocol(found, protocol: Mapping) -> bool:
    """Whether a record's `run.protocol` holds every key of `protocol` with the same value."""
    return isinstance(found, Mapping) and all(found.get(k) == v for k, v in protocol.items())
