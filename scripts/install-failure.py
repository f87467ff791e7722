#!/usr/bin/env python3
"""Write the record of a benchmark job whose set-up failed: every benchmark failed/install.

    python3 scripts/install-failure.py

scripts/run-bench.sh runs this when the job's virtual environment is missing
(the runner's prerequisites or bench's own requirements did not install), so
the night still gets a record naming the failure instead of nothing. Standard
library only, Python 3.8 or newer: it runs with whatever python3 the runner
has (macOS's own /usr/bin/python3 too). The record is schema_version 1 and
named like bench's (<backend>--<device>--<run id>-<attempt>.json).

Environment: BENCH_BACKEND, BENCH_KERAS_BACKEND, BENCH_DEVICE, BENCH_OUT
(required); BENCH_MODELS/BENCH_MODES, else BENCH_ALL_MODELS/BENCH_ALL_MODES
(the matrix entry's every model and mode); BENCH_INSTALL_LOG (its error is the
message); BENCH_NIGHT; BENCH_KERAS_VERSION / BENCH_KERAS_REF (keras_source);
the GitHub variables of the run. Prints the record's path. Exit 2 with one
line when a required variable is missing.
"""

from __future__ import annotations

import json
import os
import platform
import re
import sys
import tempfile
from datetime import datetime, timezone

MESSAGE_CHARS = 4000


def main() -> int:
    env = os.environ
    try:
        backend, device, out = _need("BENCH_BACKEND"), _need("BENCH_DEVICE"), _need("BENCH_OUT")
        keras_backend = env.get("BENCH_KERAS_BACKEND") or backend.split("-")[0]
        models = _names(env.get("BENCH_MODELS") or _need("BENCH_ALL_MODELS"))
        modes = _names(env.get("BENCH_MODES") or _need("BENCH_ALL_MODES"))
    except KeyError as e:
        print(f"install-failure: error: {e.args[0]}", file=sys.stderr)
        return 2
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    message = _message(env.get("BENCH_INSTALL_LOG", ""))
    run = {"id": env.get("GITHUB_RUN_ID") or f"local-{now}", "attempt": int(env.get("GITHUB_RUN_ATTEMPT") or 1),
           "event": env.get("GITHUB_EVENT_NAME") or "local", "started_at": now, "finished_at": now}
    if env.get("BENCH_NIGHT"):
        run["night"] = env["BENCH_NIGHT"]
    if env.get("GITHUB_REPOSITORY") and env.get("GITHUB_RUN_ID"):
        server = env.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/")
        run["repository"] = env["GITHUB_REPOSITORY"]
        run["url"] = f"{server}/{env['GITHUB_REPOSITORY']}/actions/runs/{env['GITHUB_RUN_ID']}"
    if env.get("GITHUB_SHA"):
        run["commit"] = env["GITHUB_SHA"]
    source = "git" if env.get("BENCH_KERAS_REF") else "pinned" if env.get("BENCH_KERAS_VERSION") else "nightly"
    record = {
        "schema_version": 1,
        "run": run,
        "target": {"backend": backend, "keras_backend": keras_backend, "device": device},
        "environment": {"keras_version": env.get("BENCH_KERAS_VERSION") or None, "keras_source": source,
                        "python": platform.python_version(), "os": platform.platform(),
                        "runner": env.get("RUNNER_NAME") or "local", "install": {"ok": False, "error": message}},
        "results": [{"model": m, "mode": mode, "status": "failed", "error": {"kind": "install", "message": message}}
                    for m in models for mode in modes],
    }
    name = f"{_safe(backend)}--{_safe(device)}--{_safe(run['id'])}-{run['attempt']}.json"
    os.makedirs(out, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=2, sort_keys=True, ensure_ascii=False)
        f.write("\n")
    path = os.path.join(out, name)
    os.replace(tmp, path)
    print(path)
    print(f"install-failure: {path}: {len(record['results'])} benchmark(s) failed/install: "
          f"{message.splitlines()[0]}", file=sys.stderr)
    return 0


def _need(name: str) -> str:
    value = os.environ.get(name, "")
    if not value:
        raise KeyError(f"{name} is not set; expected it from the workflow's matrix entry")
    return value


def _names(text: str) -> list:
    return [n for n in re.split(r"[,\s]+", text) if n]


def _message(log_path: str) -> str:
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


if __name__ == "__main__":
    sys.exit(main())
