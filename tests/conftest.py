"""Shared fixtures: the tests' own benchmarks.yaml, a made-up data folder, the fake gh.

$BENCH_CONFIG is set here, at import, so every `config.load()` and every
`python -m bench` subprocess reads tests/fixtures/benchmarks.yaml: renaming the
devices in the repository's benchmarks.yaml to your own homelab fails no test.
A test about the shipped file loads `bench.config.DEFAULT_PATH` explicitly.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pytest

from bench import config
from tests.helpers import T0, failed, fake_gh, make_record, ok, write_data

FIXTURE_CONFIG = Path(__file__).resolve().parent / "fixtures" / "benchmarks.yaml"
os.environ[config.ENV_VAR] = str(FIXTURE_CONFIG)
REPO = "octo/keras-nightly-bench"


@pytest.fixture
def data_folder(tmp_path) -> Path:
    """A made-up data branch: 6 nights of jax and torch on local-cpu (cnn train,
    mlp predict), torch's mlp failing with an oom on the last night."""
    records = []
    for night in range(6):
        at = T0 + timedelta(days=night)
        records.append(make_record([ok("cnn", "train", 1000.0 + night), ok("mlp", "predict", 5000.0)],
                                   backend="jax", started_at=at))
        mlp = failed("mlp", "predict", "oom", "out of memory") if night == 5 else ok("mlp", "predict", 4000.0)
        records.append(make_record([ok("cnn", "train", 800.0), mlp], backend="torch", started_at=at))
    return write_data(records, tmp_path / "data")


@pytest.fixture
def gh(tmp_path) -> tuple[Path, dict]:
    """A fake GitHub: (FAKE_GH_ROOT, the environment for a subprocess whose
    `gh` is tests/fake_gh.py)."""
    root, bindir = fake_gh(tmp_path)
    env = {"FAKE_GH_ROOT": str(root), "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
           "GITHUB_REPOSITORY": REPO, "GH_TOKEN": "fake-token"}
    return root, env


@pytest.fixture
def gh_here(tmp_path, monkeypatch) -> Path:
    """A fake GitHub for commands run in this process: FAKE_GH_ROOT and PATH
    set here (tests/fake_gh.py); its root, where the issues and calls land."""
    root, bindir = fake_gh(tmp_path)
    monkeypatch.setenv("FAKE_GH_ROOT", str(root))
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    return root


@pytest.fixture(autouse=True)
def _own_cache(tmp_path_factory, monkeypatch):
    """Each test its own cache folder ($XDG_CACHE_HOME; bench.records.checked
    remembers summary checks there): nothing written to the user's ~/.cache,
    nothing remembered from another test."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture(autouse=True)
def _own_machine_lock(tmp_path_factory, monkeypatch):
    """Each test its own machine lock (bench/measure/lock.py, $BENCH_LOCK): a
    test's `bench run` never waits for another engineer's real run on this host."""
    monkeypatch.setenv("BENCH_LOCK", str(tmp_path_factory.mktemp("lock") / "bench.lock"))
