"""The record of a benchmark job that ended without one (`bench failure-record`).

Two ways a job can end so: its set-up failed (no virtual environment, or
bench's own requirements did not install: kind "install", the install log's
error as the message; scripts/run-bench.sh runs it), or its Benchmark step ran
past its timeout-minutes and was killed (kind "timeout"; the workflow's
fallback step runs it when that step did not succeed). Every benchmark of the
job is then failed with that kind, so the night still has a record naming the
failure instead of a blank cell.

Standard library only, Python 3.8 or newer: the verb runs with whatever
python3 the runner has (macOS's own /usr/bin/python3 too) from the checkout.
The record is schema_version 1 and named like bench's
(<backend>--<device>--<run id>-<attempt>.json).

Environment: BENCH_BACKEND, BENCH_KERAS_BACKEND, BENCH_DEVICE, BENCH_OUT
(required); BENCH_MODELS/BENCH_MODES, else BENCH_ALL_MODELS/BENCH_ALL_MODES
(the matrix entry's every model and mode); BENCH_INSTALL_LOG (its error is the
install message); BENCH_STEP_MINUTES (the Benchmark step's limit, for the
timeout message); BENCH_NIGHT; BENCH_KERAS_VERSION / BENCH_KERAS_REF
(keras_source); the GitHub variables of the run.
"""

from __future__ import annotations

import json
import os
import platform
import re
import tempfile
from datetime import datetime, timezone
from typing import Mapping

from bench.errors import UsageError

KINDS = ("install", "timeout")
MESSAGE_CHARS = 4000


def failure_record(env: Mapping[str, str], kind: str, now: datetime) -> tuple[str, dict]:
    """(file name, record) of a job whose every benchmark failed with `kind`.
    UsageError when a required variable is missing or the kind is unknown."""
    if kind not in KINDS:
        raise UsageError(f"--kind {kind!r}; expected one of {', '.join(KINDS)}")
    backend, device, _ = _need(env, "BENCH_BACKEND"), _need(env, "BENCH_DEVICE"), _need(env, "BENCH_OUT")
    keras_backend = env.get("BENCH_KERAS_BACKEND") or backend.split("-")[0]
    models = _names(env.get("BENCH_MODELS") or _need(env, "BENCH_ALL_MODELS"))
    modes = _names(env.get("BENCH_MODES") or _need(env, "BENCH_ALL_MODES"))
    stamp = now.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    message = _install_message(env.get("BENCH_INSTALL_LOG", "")) if kind == "install" else _timeout_message(env)
    run = {"id": env.get("GITHUB_RUN_ID") or f"local-{stamp}", "attempt": int(env.get("GITHUB_RUN_ATTEMPT") or 1),
           "event": env.get("GITHUB_EVENT_NAME") or "local", "started_at": stamp, "finished_at": stamp}
    if env.get("BENCH_NIGHT"):
        run["night"] = env["BENCH_NIGHT"]
    if env.get("GITHUB_REPOSITORY") and env.get("GITHUB_RUN_ID"):
        server = env.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/")
        run["repository"] = env["GITHUB_REPOSITORY"]
        run["url"] = f"{server}/{env['GITHUB_REPOSITORY']}/actions/runs/{env['GITHUB_RUN_ID']}"
    if env.get("GITHUB_SHA"):
        run["commit"] = env["GITHUB_SHA"]
    source = "git" if env.get("BENCH_KERAS_REF") else "pinned" if env.get("BENCH_KERAS_VERSION") else "nightly"
    environment = {"keras_version": env.get("BENCH_KERAS_VERSION") or None, "keras_source": source,
                   "python": platform.python_version(), "os": platform.platform(),
                   "runner": env.get("RUNNER_NAME") or "local"}
    if kind == "install":
        environment["install"] = {"ok": False, "error": message}
    record = {
        "schema_version": 1,
        "run": run,
        "target": {"backend": backend, "keras_backend": keras_backend, "device": device},
        "environment": environment,
        "results": [{"model": m, "mode": mode, "status": "failed", "error": {"kind": kind, "message": message}}
                    for m in models for mode in modes],
    }
    return f"{_safe(backend)}--{_safe(device)}--{_safe(run['id'])}-{run['attempt']}.json", record


def has_record(out: str) -> bool:
    """Did the job write a record into `out` already (bench run's, or an earlier fallback's)?"""
    return os.path.isdir(out) and any(n.endswith(".json") for n in os.listdir(out))


def write(out: str, name: str, record: dict) -> str:
    """The record as sorted-key JSON in `out`, written atomically; its path.
    Not bench.records.atomic.write_text: its temporary file ends in .json,
    which has_record (and the upload) would take for a record if the job
    were killed mid-write; this one's ends in .tmp."""
    os.makedirs(out, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=2, sort_keys=True, ensure_ascii=False)
        f.write("\n")
    path = os.path.join(out, name)
    os.replace(tmp, path)
    return path


def _need(env: Mapping[str, str], name: str) -> str:
    value = env.get(name, "")
    if not value:
        raise UsageError(f"{name} is not set; expected it from the workflow's matrix entry")
    return value


def _names(text: str) -> list:
    return [n for n in re.split(r"[,\s]+", text) if n]


def _timeout_message(env: Mapping[str, str]) -> str:
    limit = env.get("BENCH_STEP_MINUTES", "")
    within = f" within its {limit} minutes" if limit.isdigit() else ""
    return (f"the Benchmark step did not finish{within} (timeout-minutes) and was stopped before writing a "
            "record, or bench ended without one; see the job log for the benchmark it was running")


def _install_message(log_path: str) -> str:
    """The install log's error (check-runner.sh or install-backend.sh), else a generic line."""
    default = "the job's set-up failed before bench could run (no virtual environment); see the job log"
    if not log_path or not os.path.isfile(log_path):
        return default
    try:
        with open(log_path, encoding="utf-8", errors="replace") as f:
            log = json.load(f)
    except ValueError:
        return default + f" (install log {log_path} is not JSON)"
    error = log.get("error") if isinstance(log, dict) else None
    step = log.get("failed_step") if isinstance(log, dict) else None
    text = f"set-up step '{step}' failed: {error}" if step and error else (str(error) if error else default)
    return text[:MESSAGE_CHARS]


def _safe(label: str) -> str:
    """As bench.records.record.safe: anything but [A-Za-z0-9._-] becomes '_'."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", label) or "_"
