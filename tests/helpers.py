"""Builders for made-up run records and data folders, shared by the tests."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
import importlib.util
import os
import sys
from pathlib import Path
from typing import Iterable, Sequence

from bench.records.record import RunRecord, format_time, write

T0 = datetime(2026, 11, 1, 2, 0, tzinfo=timezone.utc)
STUDIES = Path(__file__).resolve().parent.parent / "studies"


def load_study(name: str, monkeypatch=None):
    """studies/<name>.py as a module (studies are scripts, not a package). With `monkeypatch`
    it is also in sys.modules for the test's length, which a process pool's pickling or a
    generated sitecustomize that imports it needs."""
    spec = importlib.util.spec_from_file_location(name, STUDIES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    if monkeypatch is not None:
        monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


def ok(model: str, mode: str, value: float, samples: Sequence[float] | None = None, **extra) -> dict:
    r = {"model": model, "mode": mode, "status": "ok", "value": value, "unit": "samples/s",
         "samples": list(samples) if samples is not None else [value] * 5}
    r.update(extra)
    return r


def failed(model: str, mode: str, kind: str = "crash", message: str = "boom") -> dict:
    return {"model": model, "mode": mode, "status": "failed", "error": {"kind": kind, "message": message}}


def skipped(model: str, mode: str, message: str = "not supported") -> dict:
    return {"model": model, "mode": mode, "status": "skipped",
            "error": {"kind": "unsupported", "message": message}}


def make_record(results: Iterable[dict], *, backend: str = "jax", device: str = "local-cpu",
                keras_backend: str | None = None, started_at: datetime = T0, run_id: str | None = None,
                attempt: int = 1, event: str = "schedule", keras_version: str = "3.16.0.dev2026110102",
                environment: dict | None = None, url: str | None = None, run: dict | None = None) -> RunRecord:
    run = {"id": run_id or f"{int(started_at.timestamp())}", "attempt": attempt, "event": event,
           "started_at": format_time(started_at), **(run or {})}
    if url:
        run["url"] = url
    env = {"keras_version": keras_version, "keras_source": "nightly"}
    env.update(environment or {})
    return RunRecord.from_dict({
        "schema_version": 1,
        "run": run,
        "target": {"backend": backend, "keras_backend": keras_backend or backend.split("-")[0],
                   "device": device},
        "environment": env,
        "results": list(results),
    }, source="made-up")


def nightly_series(values: Sequence[float], *, model="cnn", mode="train", start: datetime = T0,
                   **kw) -> list[RunRecord]:
    """One record per night, one result each."""
    return [make_record([ok(model, mode, v)], started_at=start + timedelta(days=i), **kw)
            for i, v in enumerate(values)]


def write_data(records: Iterable[RunRecord], data_dir: Path) -> Path:
    """Lay records out as on the data branch: DATA/runs/YYYY/MM/DD/..."""
    for rec in records:
        write(rec, data_dir, rec.relpath())
    return data_dir


def fake_gh(tmp_path: Path) -> tuple[Path, Path]:
    """A fake GitHub for the workflow scripts: (FAKE_GH_ROOT, a folder to put
    first on PATH whose `gh` runs tests/fake_gh.py)."""
    root = tmp_path / "github"
    (root / "runs").mkdir(parents=True)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    script = Path(__file__).with_name("fake_gh.py")
    (bindir / "gh").write_text(f"#!/bin/sh\nexec {sys.executable} {script} \"$@\"\n")
    (bindir / "gh").chmod(0o755)
    return root, bindir


def chromium() -> tuple[str | None, str]:
    """(the Chromium for the browser tests, or None and why): $BENCH_CHROMIUM,
    else Debian's /usr/bin/chromium, else Playwright's own Chromium when it is
    installed (`python -m playwright install chromium`; scripts/test.sh tries)."""
    given = os.environ.get("BENCH_CHROMIUM")
    if given:
        return (given, "") if Path(given).exists() else (None, f"BENCH_CHROMIUM={given}: no such file")
    if Path("/usr/bin/chromium").exists():
        return "/usr/bin/chromium", ""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None, "playwright is not installed (pip install playwright)"
    with sync_playwright() as p:
        own = p.chromium.executable_path
    if Path(own).exists():
        return own, ""
    return None, ("no Chromium: /usr/bin/chromium is missing (apt-get install -y chromium) and "
                  "Playwright's own is not installed (python -m playwright install chromium)")
