"""pr-bench's A/B of two bench versions: `bench run --ab-root` gives each side
its own checkout, and scripts/pr-ab.sh runs it (or the PR alone when it cannot)."""

import os
import subprocess
import sys
import threading
from pathlib import Path


from bench import cli

ROOT = Path(__file__).resolve().parent.parent


def test_each_side_runs_the_bench_of_its_own_checkout(tmp_path, monkeypatch):
    from bench.commands import run as run_cmd
    from bench.measure import pool
    from tests.helpers import ok

    monkeypatch.delenv("GITHUB_RUN_ID", raising=False)
    monkeypatch.setattr(run_cmd, "_available_cpus", lambda: {0, 1})
    base = tmp_path / "base-bench"
    (base / "bench" / "measure").mkdir(parents=True)
    (base / "bench" / "measure" / "worker.py").write_text("")
    seen, lock = set(), threading.Lock()

    def spawn_worker(task, specs, *, timeout, python, cpus=None, echo=False, root=None, on_event=None):
        with lock:
            seen.add((task.side, root))
        s = specs[0]
        events = ({"start": [s.model, s.mode]}, {"done": [s.model, s.mode], "payload": {
            "result": dict(ok(s.model, s.mode, 100.0), steps_per_call=s.steps or 9), "environment": {}}})
        return pool.WorkerOutcome(0, False, 1.0, events, timeout=timeout)

    monkeypatch.setattr(pool, "spawn_worker", spawn_worker)
    assert cli.main(["run", "--backend", "jax", "--models", "mlp", "--modes", "predict", "--out", str(tmp_path / "o"),
                     "--workers", "2", "--ab", sys.executable, sys.executable, "--ab-root", str(base), str(ROOT)]) == 0
    assert seen == {("a", str(base)), ("b", str(ROOT))}


def test_ab_root_needs_ab_and_a_checkout(tmp_path, capsys):
    assert cli.main(["run", "--ab-root", str(ROOT), str(ROOT)]) == 2
    assert "--ab-root names the two sides of an --ab run" in capsys.readouterr().err
    assert cli.main(["run", "--ab", sys.executable, sys.executable, "--ab-root", str(tmp_path), str(ROOT)]) == 2
    assert f"--ab-root A_ROOT is '{tmp_path}'; expected a checkout of this project" in capsys.readouterr().err


FAKE_PY = """#!/bin/bash
if [ "$*" = "-m bench run --help" ]; then echo "  --ab-root A_ROOT B_ROOT"; exit 0; fi
printf '%s\\n' "$*" >> "$ARGS_LOG"
"""


def test_pr_ab_runs_the_default_branchs_bench_as_side_a(tmp_path):
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").write_text(FAKE_PY)
    (venv / "python").chmod(0o755)
    base = tmp_path / "base-bench" / "bench" / "measure"
    base.mkdir(parents=True)
    (base / "worker.py").write_text("")
    log = tmp_path / "args.log"
    env = {**os.environ, "BENCH_VENV": str(tmp_path / "venv"), "BENCH_BACKEND": "jax", "BENCH_DEVICE": "local-cpu",
           "BENCH_OUT": str(tmp_path / "out"), "BASE_BENCH": str(tmp_path / "base-bench"), "ARGS_LOG": str(log),
           "BENCH_MODELS": "mlp"}
    done = subprocess.run(["bash", str(ROOT / "scripts" / "pr-ab.sh")], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    py = tmp_path / "venv" / "bin" / "python"
    assert log.read_text() == (f"-m bench run --backend jax --device local-cpu --out {tmp_path / 'out'} "
                               f"--ab {py} {py} --ab-root {tmp_path / 'base-bench'} . --models mlp\n")
    assert "the default branch's bench" in done.stderr


def test_pr_ab_without_the_default_branch_falls_back_to_the_pr_alone(tmp_path):
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").write_text(FAKE_PY)
    (venv / "python").chmod(0o755)
    log = tmp_path / "args.log"
    env = {**os.environ, "BENCH_VENV": str(tmp_path / "venv"), "BENCH_BACKEND": "jax", "BENCH_DEVICE": "local-cpu",
           "BENCH_OUT": str(tmp_path / "out"), "BASE_BENCH": str(tmp_path / "nothing"), "ARGS_LOG": str(log)}
    done = subprocess.run(["bash", str(ROOT / "scripts" / "pr-ab.sh")], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "no A/B here" in done.stderr
    assert log.read_text() == f"-m bench run --backend jax --device local-cpu --out {tmp_path / 'out'}\n"
