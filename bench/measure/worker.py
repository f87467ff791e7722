"""One protocol-2 worker process: `python -m bench.measure.worker WORKER_JSON`.

Runs several benchmarks of one backend in one process (one Keras import),
each through bench/measure/child.py's `execute` (import, build, compile, gate,
timing, verify), in the order the parent gives (bench/measure/schedule.py).
Before anything is imported it pins itself to `cpus` (os.sched_setaffinity,
inherited by every thread the backend starts later). Each benchmark gets the
fastest canary seen so far, by the parent's earlier workers or by this process
(`Spec.canary_floor`), as its full-speed figure.

It appends to `result_path`, one JSON line per event, flushed at once, so the
parent knows which benchmark is running (for its per-benchmark timeout) and
keeps every result finished before a crash:
  {"start": [model, mode], "time": <unix seconds>}
  {"done": [model, mode], "payload": {"result": ..., "environment": ...}, "window": [t0, t1],
   "position": <benchmarks this process ran before it>}
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import asdict, dataclass, replace


@dataclass(frozen=True)
class WorkerSpec:
    specs: tuple  # child.Spec, in order
    result_path: str
    cpus: tuple[int, ...] | None = None

    def to_json(self) -> str:
        return json.dumps({"specs": [_sent(s) for s in self.specs], "result_path": self.result_path,
                           "cpus": list(self.cpus) if self.cpus else None}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "WorkerSpec":
        from bench.measure.child import Spec

        d = json.loads(text)
        return cls(tuple(Spec(**s) for s in d["specs"]), d["result_path"],
                   tuple(d["cpus"]) if d.get("cpus") else None)


def _sent(spec) -> dict:
    """The spec's fields but the newer optional ones left at their default
    (native off, no stored work, no barrier, no profile): pr-ab's base side is
    an older bench whose Spec lacks them."""
    return {k: v for k, v in asdict(spec).items() if not (k in _OPTIONAL and v == _OPTIONAL[k])}


_OPTIONAL = {"native": 0, "stored_steps": None, "sync_dir": None, "sync_side": "", "profile": False}


def pin(cpus) -> None:
    if cpus and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, set(cpus))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m bench.measure.worker WORKER_JSON", file=sys.stderr)
        return 2
    w = WorkerSpec.from_json(argv[0])
    pin(w.cpus)
    from bench.measure import child  # after pinning: the backend's threads inherit it
    from bench.measure.harness import faster

    with open(w.result_path, "a", encoding="utf-8") as out:
        def emit(event: dict) -> None:
            out.write(json.dumps(event, sort_keys=True, allow_nan=False) + "\n")
            out.flush()

        floor = None  # the fastest canary this process has seen: the next benchmark's floor
        for position, spec in enumerate(w.specs):
            key = [spec.model, spec.mode]
            t0 = time.time()
            emit({"start": key, "time": t0})
            payload = child.execute(replace(spec, canary_floor=faster(spec.canary_floor, floor)))
            floor = faster(floor, payload["result"].get("canary", {}).get("baseline_seconds"))
            emit({"done": key, "payload": payload, "window": [round(t0, 3), round(time.time(), 3)],
                  "position": position})
    return 0


if __name__ == "__main__":
    sys.exit(main())
