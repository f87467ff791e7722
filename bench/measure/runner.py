"""The parent side of `bench run`: one child process per (model, mode).

Each child (bench/measure/child.py) gets KERAS_BACKEND, the device's env and a timeout.
The parent never imports Keras; it turns whatever the child left behind into a
result: the child's own JSON when there is one, otherwise a failure from the
exit (bench/measure/failures.py). A mode the backend cannot do is `skipped` without
starting a child; once a backend fails to import, its remaining benchmarks
get the same `install` failure without another try.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from bench.measure import backends, failures
from bench.measure.child import Spec, backend_mode

REPO_ROOT = Path(__file__).resolve().parents[2]
STDERR_TAIL = 4000  # characters of a dead child's output kept for classifying it


@dataclass(frozen=True)
class Outcome:
    """What a finished child left behind."""

    returncode: int | None
    timed_out: bool
    seconds: float
    stderr_tail: str = ""
    payload: dict | None = None  # the child's result file, when it wrote one
    oom_killed: bool | None = None


@dataclass(frozen=True)
class Job:
    """One (model, mode) of one backend on one device."""

    spec: Spec  # spec.env: the device's env settings, set in the child's environment too
    timeout: float


def result_of(job: Job, outcome: Outcome) -> dict:
    """The record's result for a finished child (pure)."""
    if outcome.payload is not None:
        return dict(outcome.payload["result"])  # the child's own verdict, even if it hung at exit
    f = failures.from_exit(outcome.returncode, outcome.timed_out, job.timeout,
                           outcome.stderr_tail, outcome.oom_killed)
    return dict(job.spec.base_result(), status="failed", error=f.as_error(),
                child_seconds=round(outcome.seconds, 3))


def skipped(spec: Spec) -> dict:
    return dict(spec.base_result(), status="skipped", error={
        "kind": "unsupported", "message": f"the {spec.keras_backend} backend cannot {spec.mode} "
                                          f"(bench/measure/backends/{spec.keras_backend}.py)"})


def not_attempted(spec: Spec, cause: dict) -> dict:
    """After an install failure: the same failure, without starting another child."""
    return dict(spec.base_result(), status="failed", error={
        "kind": cause["error"]["kind"],
        "message": f"not run: {cause['error']['message']} (seen in {cause['model']}/{cause['mode']})"})


def oom_kill_count() -> int | None:
    """The kernel's OOM-kill counter for this process's cgroup, None if unknown.

    cgroup v2: memory.events `oom_kill` (counts kills by any OOM killer);
    cgroup v1: memory.oom_control `oom_kill`.
    """
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            candidates = [Path("/sys/fs/cgroup") / path.lstrip("/") / "memory.events"]
        elif "memory" in controllers.split(","):
            candidates = [Path("/sys/fs/cgroup/memory") / path.lstrip("/") / "memory.oom_control"]
        else:
            continue
        for c in candidates:
            try:
                for row in c.read_text().splitlines():
                    key, _, value = row.partition(" ")
                    if key == "oom_kill":
                        return int(value)
            except (OSError, ValueError):
                continue
    return None


def spawn(job: Job, echo: bool = False, clock: Callable[[], float] = time.monotonic) -> Outcome:
    """Run one child to completion or to its timeout (then kill its process group)."""
    with tempfile.TemporaryDirectory(prefix="bench-child-") as tmp:
        result_path = Path(tmp) / "result.json"
        spec = Spec(**{**job.spec.__dict__, "result_path": str(result_path)})
        env = dict(os.environ)
        env.update(spec.env)
        env["KERAS_BACKEND"] = spec.keras_backend
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
        log_path = Path(tmp) / "child.log"
        oom_before = oom_kill_count()
        t0 = clock()
        with open(log_path, "wb") as log:
            out = None if echo else log
            proc = subprocess.Popen([sys.executable, "-m", "bench.measure.child", spec.to_json()],
                                    stdout=out, stderr=out, stdin=subprocess.DEVNULL, env=env,
                                    start_new_session=True)  # its own group: a timeout kills all of it
            timed_out = False
            try:
                proc.wait(timeout=job.timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill_group(proc)
            except BaseException:
                _kill_group(proc)  # Ctrl-C: leave no orphan behind
                raise
        seconds = clock() - t0
        oom_after = oom_kill_count()
        # A result written before a hang at exit still counts (it is written atomically).
        payload = json.loads(result_path.read_text()) if result_path.exists() else None
        tail = log_path.read_text(errors="replace")[-STDERR_TAIL:]
    oom = None if oom_before is None or oom_after is None else oom_after > oom_before
    return Outcome(proc.returncode, timed_out, seconds, tail, payload, oom)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


@dataclass(frozen=True)
class BackendRun:
    """The results of one backend's jobs, and what its children said about the environment."""

    results: tuple[dict, ...]
    environments: tuple[dict, ...]


def install_failed(install_log: dict | None) -> str | None:
    """The error of a failed install step (scripts/install-backend.sh's log,
    `ok: false`), or None when the install went through or was not logged."""
    if not install_log or install_log.get("ok", True) is not False:
        return None
    step = install_log.get("failed_step") or "install"
    return f"pip install ({step}) failed: {install_log.get('error') or 'no error text in the install log'}"


def run_jobs(jobs: list[Job], progress: Callable[[Job, dict], None] = lambda j, r: None,
             spawn_fn: Callable[[Job], Outcome] = spawn, install_error: str | None = None) -> BackendRun:
    """Run `jobs` (one backend) in order; every job yields a result.

    With `install_error` (the backend's install step failed) no child is
    started: every benchmark the backend supports is failed/install.
    """
    results, envs = [], []
    install_failure = None
    for job in jobs:
        backend = backends.get(job.spec.keras_backend)
        if not backend.supports(backend_mode(job.spec.mode)):
            result = skipped(job.spec)
        elif install_error is not None:
            result = dict(job.spec.base_result(), status="failed",
                          error={"kind": "install", "message": install_error})
        elif install_failure is not None:
            result = not_attempted(job.spec, install_failure)
        else:
            outcome = spawn_fn(job)
            result = result_of(job, outcome)
            if outcome.payload and outcome.payload.get("environment"):
                envs.append(outcome.payload["environment"])
            if result.get("error", {}).get("kind") == "install":
                install_failure = result
        results.append(result)
        progress(job, result)
    return BackendRun(tuple(results), tuple(envs))
