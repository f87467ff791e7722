"""The parent side of protocol 2: worker processes, fixed work, disturbance, headline.

For one backend (or two sides of an A/B run) `run_backend` walks the
schedule (bench/measure/schedule.py). Each task is one worker process
(bench/measure/worker.py) running the backend's benchmarks in rotated order:

- fixed work: the first worker to finish a benchmark calibrates its steps per
  call; every later worker of that series (both sides of an A/B run) gets
  exactly that `steps`, so every worker's figure is the same work (and every
  timed train call starts from the same weights: workers v11, child._start_state).
- a worker process that dies keeps the results it finished; the benchmark it
  was in fails with its kind (timeout, crash, oom); the ones it had not
  reached run in a fresh process. An install failure stops that side.
- disturbance: after all workers, each benchmark's workers are compared
  (bench/measure/disturbance.py); a disturbed worker is rerun once, at the end.
  Every worker gets its side's fastest canary so far (`Spec.canary_floor`):
  a worker that runs in a slow CPU state throughout then reads its repeats as
  slow (`canary.kept: all`) and is flagged, instead of taking that state for
  full speed (workers v3; bench/measure/latency.py says why), when its figure
  is also slower than its clean peers' (workers v12; disturbance.CANARY_SLOWER).
- headline: estimate.of_workers over the clean workers (`clean`: all ok ones when none
  is clean; workers v9: the trimmed mean of their figures), `spread` (around the
  workers' median), and `unstable` with its reason.
- duet (A/B only, schedule.duet): A's calibration worker runs alone, then
  worker i of A and of B run at the same time (spawn_fn is called from two
  threads); what a died worker had left runs after, alone. Disturbed workers
  rerun as duets too. The calibration entry (`calibration: true`) and a died
  duet worker's leftovers (`alone: true`, run without their partner) are kept
  in the record but count in no headline, flag or pair.

`spawn_fn(task, specs) -> WorkerOutcome` is injected: tests use fake workers.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from bench.measure import barrier, disturbance, estimate, failures, harness, native, schedule, usage
from bench.measure.child import Spec, backend_mode
from bench.measure.runner import _kill_group  # one way to end a worker and its children
from bench.measure.worker import WorkerSpec

REPO_ROOT = Path(__file__).resolve().parents[2]
STDERR_TAIL = 4000
POLL_SECONDS = 0.5
Key = tuple  # (model, mode)


@dataclass(frozen=True)
class WorkerOutcome:
    """What a finished worker process left behind."""

    returncode: int | None
    timed_out: bool
    seconds: float
    events: tuple[dict, ...] = ()  # the worker's JSON lines
    stderr_tail: str = ""
    oom_killed: bool | None = None
    timeout: float = 0.0  # the per-benchmark limit it ran under

    def failure(self) -> failures.Failure:
        return failures.from_exit(self.returncode, self.timed_out, self.timeout, self.stderr_tail, self.oom_killed)

    def payloads(self) -> dict:
        return {tuple(e["done"]): e for e in self.events if "done" in e}

    def stuck(self) -> Key | None:
        """The benchmark it started and never finished, if any."""
        started = [tuple(e["start"]) for e in self.events if "start" in e]
        done = self.payloads()
        return next((k for k in reversed(started) if k not in done), None)


def spawn_worker(task: schedule.Task, specs: list[Spec], *, timeout: float, python: str = sys.executable,
                 cpus=None, echo: bool = False, clock: Callable[[], float] = time.monotonic,
                 on_event: Callable[[dict], None] = lambda event: None,
                 root: str | Path | None = None) -> WorkerOutcome:
    """Run one worker process; kill its process group when one benchmark
    exceeds `timeout` seconds (measured from the worker's own start line).
    on_event: called with each of the worker's JSON lines as it appears (progress).
    root: the checkout whose bench the worker runs (default: this one); an
    A/B of two bench versions (pr-bench: the default branch's beside the pull
    request's) gives each side its own."""
    from bench.measure.runner import oom_kill_count

    with tempfile.TemporaryDirectory(prefix="bench-worker-") as tmp:
        events_path, log_path = Path(tmp) / "events.jsonl", Path(tmp) / "worker.log"
        wspec = WorkerSpec(tuple(specs), str(events_path), tuple(cpus) if cpus else None)
        env = dict(os.environ)
        env.update(specs[0].env)
        env["KERAS_BACKEND"] = specs[0].keras_backend
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root or REPO_ROOT), env.get("PYTHONPATH")]))
        oom_before, t0 = oom_kill_count(), clock()
        timed_out, seen, since = False, 0, t0
        with open(log_path, "wb") as log:
            out = None if echo else log
            proc = subprocess.Popen([python, "-m", "bench.measure.worker", wspec.to_json()], stdout=out,
                                    stderr=out, stdin=subprocess.DEVNULL, env=env, start_new_session=True)
            try:
                while True:
                    try:
                        proc.wait(timeout=POLL_SECONDS)
                        break
                    except subprocess.TimeoutExpired:
                        new = _events(events_path)[seen:]
                        if new:
                            seen, since = seen + len(new), clock()  # a new start or done line: the clock restarts
                            for event in new:
                                on_event(event)
                        if clock() - since > timeout:
                            timed_out = True
                            _kill_group(proc)
                            break
            except BaseException:
                _kill_group(proc)  # Ctrl-C: leave no orphan behind
                raise
        events = _events(events_path)
        tail = log_path.read_text(errors="replace")[-STDERR_TAIL:]
    oom_after = oom_kill_count()
    oom = None if oom_before is None or oom_after is None else oom_after > oom_before
    return WorkerOutcome(proc.returncode, timed_out, clock() - t0, tuple(events), tail, oom, timeout)


def _events(path: Path) -> list[dict]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            break  # a line cut by a crash: everything before it stands
    return out


# -- worker entries and results ----------------------------------------------------

def entry_of(payload: dict | None, failure: failures.Failure | None = None, *, rerun: bool = False,
             window=None, calibration: bool = False, alone: bool = False, position: int | None = None) -> dict:
    """One worker's entry in a result's `workers` list (the record contract).
    position: how many benchmarks its process ran before this one (a peak RSS
    includes what they left behind)."""
    if payload is None or payload["result"].get("status") != "ok":
        err = (payload or {}).get("result", {}).get("error") or (failure.as_error() if failure else
                                                                 {"kind": "crash", "message": "no result"})
        e = {"value": None, "samples": [], "status": "failed", "disturbed": False, "error": err}
    else:
        r = payload["result"]
        e = {"value": r["value"], "samples": list(r.get("samples", [])), "status": "ok", "disturbed": False}
        for k in ("steps_per_call", "setup_seconds", "disturbance", "timed_window", "repeat_windows", "sync", "native"):
            if k in r:
                e[k] = r[k]
        if "canary" in r:  # the interleaved reference workload (bench/analyse/host.py)
            e["reference_seconds"] = r["canary"]["baseline_seconds"]  # this process's fastest canary
            if r["canary"].get("seconds"):  # and the state its kept repeats ran in
                e["reference_median_seconds"] = round(statistics.median(r["canary"]["seconds"]), 6)
        if isinstance(r.get("memory"), dict) and isinstance(r["memory"].get("host_peak_bytes"), int):
            e["host_peak_bytes"] = r["memory"]["host_peak_bytes"]
    if rerun:
        e["rerun"] = True
    if calibration:
        e["calibration"] = True
    if alone:
        e["alone"] = True
    if window:
        e["window"] = list(window)
    if position is not None:
        e["position"] = position
    return e


@dataclass
class _Series:
    """Everything gathered for one (side, benchmark)."""

    spec: Spec
    entries: list = field(default_factory=list)
    payloads: list = field(default_factory=list)  # the ok workers' payloads, in order


def counted(entries: list) -> list:
    """The entries a headline or flag may use: all but those that ran outside
    the duets (the calibration worker, a died worker's leftovers: `alone`)."""
    return [e for e in entries if not (e.get("calibration") or e.get("alone"))]


def clean(ok: list[dict]) -> list[dict]:
    """The ok entries the headline comes from: the undisturbed ones, or all of
    them when every one was disturbed (a night that was slow throughout still
    gets a figure, and its `disturbed_workers` says so)."""
    return [e for e in ok if not e["disturbed"]] or ok


def flag(series: _Series) -> int:
    """Mark disturbed entries (in place); returns how many newly marked ones are not reruns."""
    ok = [e for e in counted(series.entries) if e["status"] == "ok"]
    why = disturbance.flag_workers([e.get("disturbance") for e in ok])
    peers = [e["value"] for e, reason in zip(ok, why)
             if reason is None and not (e["disturbed"] or e.get("canary_all") or e.get("rerun"))]
    centre = statistics.median(peers) if peers else None
    better = series.spec.base_result()["better"]
    fresh = 0
    for e, reason in zip(ok, why):
        if reason is None and e.get("canary_all") and disturbance.canary_confirmed(e["value"], centre, better):
            reason = disturbance.WHY["canary"]
        if reason and not e["disturbed"]:
            e["disturbed"], e["disturbed_why"] = True, reason
            fresh += 0 if e.get("rerun") else 1
    return fresh


def result_of(series: _Series, unstable_limit: float) -> dict:
    """The record's result for one benchmark from its workers' entries."""
    spec, entries = series.spec, series.entries
    ok = [e for e in counted(entries) if e["status"] == "ok"]
    if not ok:
        first = next(e for e in entries if e["status"] == "failed")
        return dict(spec.base_result(), status="failed", error=first["error"], workers=entries)
    used = clean(ok)
    better = spec.base_result()["better"]
    values = [e["value"] for e in used]
    how = estimate.HEADLINE
    value = estimate.of_workers(used, better, how)
    first = series.payloads[0]["result"]
    result = {k: v for k, v in first.items()
              if k not in ("samples", "value", "child_seconds", "repeat_seconds", "profile")}
    why = estimate.unstable(values, None, unstable_limit)
    result.update(status="ok", value=value, samples=[s for e in used for s in e["samples"]], workers=entries,
                  spread=round(estimate.spread(values), 6), unstable=why is not None,
                  disturbed_workers=sum(e["disturbed"] for e in entries),
                  failed_workers=sum(e["status"] == "failed" for e in entries),
                  estimator=how)
    if why:
        result["unstable_why"] = why
    # latency percentiles and energy: the median clean worker's (issue 13; so a latency
    # result's p50_ms is the median worker's, its `value` the trimmed mean); peak memory:
    # the least of the first-round workers' (see memory_workers)
    every = [p["result"] for p in series.payloads]
    clean_payloads = [p["result"] for e, p in zip(ok, series.payloads) if not e["disturbed"]]
    result.update(usage.combine(clean_payloads or every, memory_from=[every[i] for i in memory_workers(ok)]))
    profiled = [p["result"]["profile"] for p in series.payloads if "profile" in p["result"]]
    if profiled:  # the one worker that profiled (schedule.profiled_worker), whichever it is
        result["profile"] = profiled[0]
    setups = [e["setup_seconds"] for e in used if "setup_seconds" in e]
    if setups:
        result["setup_seconds"] = round(statistics.median(setups), 6)
    # Keras against native code (bench/measure/native.py): each worker's pairs held the
    # host alike on both sides, so every counted ok worker counts, disturbed or not
    result.pop("native", None)
    found = native.combine([e.get("native") for e in ok])
    if found is not None:
        result["native"] = found
    return result


def memory_workers(ok: list[dict]) -> list[int]:
    """Indices of the ok worker entries whose least peak memory is the result's
    (schedule.MEMORY "least"): the first-round ones. A rerun is a fresh process,
    and a night has as many as it happens to need, so counting them would let
    the figure move with how busy the night was.

    Why the least, not a median: what moves a worker's peak RSS only ever adds
    to it. Its process keeps what earlier benchmarks left behind (up to 30 %
    more, with the benchmark's place in the rotated order), and glibc keeps
    freed memory mapped by chance (torch cnn/predict's workers read 711-1002
    MiB in one run at fixed work). Over the 5 nightly jax+torch invocations
    of 2026-12-04 (studies/bench_stability.py --from DIR), the least peak
    moved ±0.3-2.5 % against ±0.3-15.4 % for the median of the workers that
    ran the benchmark first in their process (the estimator before), 6 of 8
    within 2 % against 5; on 5 later invocations with latency too, ±0.2-4.7 %
    against ±0.2-5.3 %. A malloc mmap threshold fixed at 128 KiB
    (MALLOC_MMAP_THRESHOLD_, studies/bench_malloc.py's first form) held torch's
    worker peaks within 3 % but cost it 40-66 % of its samples/s; the thresholds
    workers v4 fixes for speed (harness.malloc_*, the heap kept) leave the peaks
    to the same luck (torch cnn/predict 723-1096 MiB in one run). So each worker
    settles before a benchmark instead (usage.settle, "least, settled"), which
    drops what earlier benchmarks left."""
    return [i for i, e in enumerate(ok) if not e.get("rerun")] or list(range(len(ok)))


@dataclass(frozen=True)
class SideRun:
    results: tuple[dict, ...]
    environments: tuple[dict, ...]


def run_backend(specs: list[Spec], workers: int, spawn_fn: Callable, *, sides: tuple[str, ...] = ("",),
                supports: Callable[[str], bool] = lambda mode: True, install_error: str | None = None,
                unstable_limit: float = 0.10, progress: Callable[[str, str], None] = lambda side, line: None,
                duet: bool = False, together: int = 1, rerun: bool = True,
                stored: dict | None = None, profile: str | None = None, aligned: bool = True,
                native_side: str | None = None) -> dict[str, SideRun]:
    """Protocol 2 for one backend: {side: SideRun}, results in `specs` order.
    stored: {(model, mode): steps}, each series' stored work (workers v13,
    bench/measure/steps.py): the first worker checks it against
    harness.STEPS_BAND instead of calibrating, and every later worker of both
    sides does the work it settled on; each ok result says where its work came
    from (`steps_source`, and `steps_why` when recalibrated).
    duet: the A/B workers run as duets (schedule.duet), else in turns.
    together: how many workers of one side run at the same time (`bench run --quick`
    on a device that gives each its own CPUs: a demo, each of them calibrating its
    own work); rerun: whether disturbed workers are rerun (--quick: no, they are
    only flagged); profile: the side whose benchmarks get one profiled call
    each, in the first-round worker schedule.profiled_worker picks (None: none).
    aligned: a duet's sides meet at the barrier before each repeat (False when a
    side's checkout predates bench/measure/barrier.py: the other side would wait
    for it at every benchmark). native_side: the only side whose workers time the
    native pairs its specs ask for (None: every side); beside a reference build,
    this build's: the reference's own vs-native is read by no one."""
    keys = tuple((s.model, s.mode) for s in specs)
    by_key = {(s.model, s.mode): s for s in specs}
    series = {(side, k): _Series(by_key[k]) for side in sides for k in keys}
    skipped = {k for k in keys if not supports(backend_mode(k[1]))}  # latency asks for predict
    broken: dict[str, dict] = {side: {"kind": "install", "message": install_error} for side in sides} \
        if install_error else {}
    steps: dict[Key, int] = {}
    stored = dict(stored or {})
    sources: dict[Key, dict] = {}  # how each series' work was settled (the worker that settled it)
    # per side (each side is its own venv; one whose numpy differs gets its ratio refused,
    # reference.mismatch, but its canary is its own all the same): the fastest canary any of its
    # workers has seen, every later worker's floor (workers v3)
    floors: dict[str, float | None] = {}
    envs: dict[str, list] = {side: [] for side in sides}
    runnable = tuple(k for k in keys if k not in skipped)

    def profiled(task: schedule.Task, k: Key) -> bool:
        return (task.side == profile and not (task.rerun or task.calibration)
                and task.worker == schedule.profiled_worker(runnable.index(k), len(runnable), workers))

    def todo(task: schedule.Task, pending, sync_dir: str | None = None) -> list[Spec]:
        """The specs a worker runs; sync_dir: its duet's barrier folder (both processes at once)."""
        return [replace(by_key[k], steps=steps.get(k), stored_steps=None if k in steps else stored.get(k),
                        canary_floor=floors.get(task.side), profile=profiled(task, k),
                        **({"native": 0} if native_side is not None and task.side != native_side else {}),
                        **({"sync_dir": sync_dir, "sync_side": task.side} if sync_dir else {}))
                for k in pending]

    def absorb(task: schedule.Task, out: WorkerOutcome, pending: list, alone: bool = False) -> None:
        """Take what one worker process left behind; `pending` loses what it settled.
        alone: a duet worker's leftovers, run after its process died, without its partner."""
        done, stuck = out.payloads(), out.stuck()
        before = len(pending)
        for k in list(pending):
            if k in done:
                ev = done[k]
                s = series[(task.side, k)]
                entry = entry_of(ev["payload"], rerun=task.rerun, window=ev.get("window"),
                                 calibration=task.calibration, alone=alone, position=ev.get("position"))
                if entry["status"] == "ok":
                    if not (task.calibration or alone):
                        s.payloads.append(ev["payload"])
                    steps.setdefault(k, ev["payload"]["result"].get("steps_per_call"))
                    got = ev["payload"]["result"]
                    if got.get("steps_source") not in (None, "fixed") and k not in sources:
                        sources[k] = {f: got[f] for f in ("steps_source", "steps_why") if f in got}
                    if ev["payload"]["result"].get("canary", {}).get("kept") == "all":
                        entry["canary_all"] = True
                floors[task.side] = harness.faster(
                    floors.get(task.side), ev["payload"]["result"].get("canary", {}).get("baseline_seconds"))
                if ev["payload"].get("environment"):
                    envs[task.side].append(ev["payload"]["environment"])
                s.entries.append(entry)
                if entry.get("error", {}).get("kind") == "install":
                    broken[task.side] = entry["error"]
                pending.remove(k)
                progress(task.side, _line(task, k, entry))
            elif k == stuck:
                break
        if stuck in pending or len(pending) == before:
            # the benchmark it died in (or, dead before its first line, the first one)
            k = stuck if stuck in pending else pending[0]
            entry = entry_of(None, out.failure(), rerun=task.rerun, calibration=task.calibration)
            series[(task.side, k)].entries.append(entry)
            pending.remove(k)
            progress(task.side, _line(task, k, entry))

    def run_task(task: schedule.Task, started: WorkerOutcome | None = None) -> None:
        """One task to the end; `started`: its first process's outcome, when a duet ran it."""
        pending, first = list(task.keys), True
        while pending:
            if task.side in broken:
                for k in pending:
                    series[(task.side, k)].entries.append(entry_of(None, failures.Failure(
                        broken[task.side]["kind"], f"not run: {broken[task.side]['message']}"), rerun=task.rerun,
                        calibration=task.calibration))
                return
            out = started if first and started is not None else spawn_fn(task, todo(task, pending))
            # the rest of `pending` runs in a fresh worker process; in a duet that one runs
            # without its partner, at another speed: its entries count nowhere (`alone`)
            absorb(task, out, pending, alone=started is not None and not first)
            first = False

    def run_group(group: tuple[schedule.Task, ...]) -> None:
        if len(group) == 1 or any(t.side in broken for t in group):
            for task in group:
                run_task(task)
            return
        with tempfile.TemporaryDirectory(prefix="bench-duet-") as folder:  # a duet's barrier (workers v13)
            def spawn_then_leave(t: schedule.Task) -> WorkerOutcome:
                if not duet or not aligned:  # --quick's workers side by side, or a side without a barrier
                    return spawn_fn(t, todo(t, t.keys))
                try:
                    return spawn_fn(t, todo(t, t.keys, folder))
                finally:
                    barrier.gone(folder, t.side)  # its partner stops waiting for it

            with ThreadPoolExecutor(len(group)) as together:  # a duet: both processes at once
                outs = list(together.map(spawn_then_leave, group))
        for task, out in zip(group, outs):
            run_task(task, out)

    if duet and sides != ("a", "b"):
        raise ValueError(f"run_backend: duet needs the sides ('a', 'b'); got {sides!r}")
    groups = (schedule.duet(runnable, workers) if duet else schedule.together(schedule.plan(runnable, workers, sides),
                                                                              together)) if runnable else []
    for group in groups:
        run_group(group)
    fresh = {(side, k): flag(series[(side, k)]) for side in sides for k in runnable}
    for group in (() if not rerun else schedule.duet_reruns(fresh, workers, runnable) if duet else
                  [(t,) for t in schedule.reruns(fresh, workers, runnable, sides)]):
        run_group(group)
    for side in sides:
        for k in runnable:
            flag(series[(side, k)])

    out = {}
    for side in sides:
        results = []
        for k in keys:
            s = series[(side, k)]
            if k in skipped:
                results.append(dict(s.spec.base_result(), status="skipped", error={
                    "kind": "unsupported", "message": f"the {s.spec.keras_backend} backend cannot {k[1]} "
                                                      f"(bench/measure/backends/{s.spec.keras_backend}.py)"}))
            else:
                for e in s.entries:
                    e.pop("canary_all", None)
                result = result_of(s, unstable_limit)
                if result.get("status") == "ok" and k[1] != "latency":  # latency calls have no work to store
                    result.pop("steps_why", None)
                    result.update(sources.get(k, {}))
                results.append(result)
        out[side] = SideRun(tuple(results), tuple(envs[side]))
    return out


def _line(task: schedule.Task, key: Key, entry: dict) -> str:
    side = f"{task.side} " if task.side else ""
    which = "calibration worker" if task.calibration else f"worker {task.worker + 1}"
    tag = f"{side}{which}{' (rerun)' if task.rerun else ''} {key[0]} {key[1]}"
    if entry["status"] == "ok":
        return f"{tag}: {entry['value']:,.6g}"
    return f"{tag}: failed ({entry['error']['kind']}): {entry['error']['message']}"
