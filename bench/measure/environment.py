"""What ran, captured for every record: run metadata and the environment.

`run_info` reads the GitHub Actions variables when set (a local run gets a
local id); `capture` combines the host (python, OS, CPU), the backend's
package versions, what the children reported (Keras version, device, driver,
jit) and the install log. Pure given their inputs, except the small host
readers at the bottom.
"""

from __future__ import annotations

import json
import os
import platform
import secrets
import socket
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Mapping

from bench.records.record import NIGHTLY, format_time, parse_night


def run_info(environ: Mapping[str, str], now: datetime, token: str | None = None) -> dict:
    """The record's `run` block (without finished_at).

    GITHUB_RUN_ID -> id, GITHUB_RUN_ATTEMPT -> attempt, GITHUB_EVENT_NAME ->
    event, GITHUB_REPOSITORY, GITHUB_SHA -> commit, the run's URL, and
    BENCH_NIGHT -> night (the night a rerun is for, docs/DESIGN.md 'Points').
    Otherwise id "local-<UTC yyyymmddThhmmss>-<6 hex>", attempt 1, event "local".
    """
    run_id = environ.get("GITHUB_RUN_ID")
    night = _night(environ)
    if not run_id:
        token = token or secrets.token_hex(3)
        return {"id": f"local-{now:%Y%m%dT%H%M%S}-{token}", "attempt": 1, "event": "local",
                "started_at": format_time(now), **night}
    attempt = environ.get("GITHUB_RUN_ATTEMPT", "1")
    if not attempt.isdigit() or int(attempt) < 1:
        raise ValueError(f"GITHUB_RUN_ATTEMPT is {attempt!r}; expected a positive integer")
    info = {"id": run_id, "attempt": int(attempt), "event": environ.get("GITHUB_EVENT_NAME", "unknown"),
            "started_at": format_time(now), **night}
    repo = environ.get("GITHUB_REPOSITORY")
    if repo:
        info["repository"] = repo
        server = environ.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/")
        info["url"] = f"{server}/{repo}/actions/runs/{run_id}"
    if environ.get("GITHUB_SHA"):
        info["commit"] = environ["GITHUB_SHA"]
    return info


def _night(environ: Mapping[str, str]) -> dict:
    """{"night": "YYYY-MM-DD"} from BENCH_NIGHT (the workflow's setup job
    decides the night once for every job of the run: `bench night`), or {}."""
    text = environ.get("BENCH_NIGHT", "")
    if not text:
        return {}
    parse_night(text, "BENCH_NIGHT")  # RecordError: one line naming BENCH_NIGHT
    return {"night": text}


def capture(*, versions: Mapping[str, str], children: list[dict], accelerator: str,
            keras_source: str | None, install_log: dict | None, device_env: Mapping[str, str],
            environ: Mapping[str, str], host: Mapping[str, object]) -> dict:
    """The record's `environment` block.

    versions: {package: version} from the backend module (package metadata),
    where no child reported its own (`versions`, from the venv it ran in);
    children: the `environment` each child reported (first one wins per key);
    host: python / os / cpu from `host_info()`.
    """
    first = _merge(children)
    device = first.get("device", {})
    env = {
        "keras_version": first.get("keras_version") or versions.get("keras-nightly") or versions.get("keras"),
        "keras_source": keras_source or NIGHTLY,
        "backend_versions": dict(first.get("versions") or versions),
        **host,
        "accelerator": {"kind": accelerator, **{k: v for k, v in device.items() if k != "driver"}},
        "driver": device.get("driver") or host_driver(accelerator),
        "jit": first.get("jit"),
        "runner": environ.get("RUNNER_NAME") or f"local:{socket.gethostname()}",
    }
    settings = {**device_env, **first.get("settings", {})}
    if settings:
        env["settings"] = settings
    if install_log is not None:
        env["install"] = install_log
        # A Keras installed from git: the exact commit pip resolved the ref to.
        if isinstance(install_log.get("keras_commit"), str) and install_log["keras_commit"]:
            env["keras_commit"] = install_log["keras_commit"]
    return env


def _merge(children: list[dict]) -> dict:
    out: dict = {}
    for c in children:
        for k, v in c.items():
            out.setdefault(k, v)
    return out


def read_install_log(path: str | Path) -> dict:
    """The JSON that scripts/install-backend.sh wrote; ValueError naming the file."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ValueError(f"--install-log {path}: cannot read: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"--install-log {path}: not valid JSON ({e.msg} at line {e.lineno}); "
                         f"expected the JSON object scripts/install-backend.sh writes") from None
    if not isinstance(data, dict):
        raise ValueError(f"--install-log {path}: a JSON {type(data).__name__}; expected an object")
    return data


# -- host readers -------------------------------------------------------------

def host_info() -> dict:
    return {
        "python": platform.python_version(),
        "os": platform.platform(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
    }


def cpu_model() -> str:
    """The CPU's marketing name, from py-cpuinfo (bench/measure/telemetry/cpu.py,
    read once per process); the platform's own words when it cannot say."""
    from bench.measure.telemetry import cpu

    try:
        return cpu.model()
    except Exception:  # noqa: BLE001 - py-cpuinfo missing or failing: a name is still owed
        return platform.processor() or platform.machine() or "unknown"


def host_driver(accelerator: str) -> str | None:
    """The NVIDIA driver version on a GPU device, when nvidia-smi is there."""
    if accelerator != "gpu":
        return None
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else None
