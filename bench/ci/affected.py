"""Which backends a pull request's changed files can affect (pr-bench.yml).

A PR benchmark costs an hour of a shared homelab, so it runs only the
backends whose numbers the change could move:

- a backend module (``bench/measure/backends/<keras_backend>.py``) affects the
  backends that run under that KERAS_BACKEND;
- files that cannot change a measurement (docs, tests, the dashboard, the
  report side of bench, CI glue other than the install/run steps) affect none;
- anything else (the harness, the workloads, benchmarks.yaml, the install
  script, an unknown file) affects every backend: when unsure, measure.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Iterable

from bench.config import Config

# Paths that never change what a benchmark measures. fnmatch patterns, where
# "*" also crosses "/".
NEUTRAL = (
    "*.md", "docs/*", "LICENSE*", "tests/*", "bench/present/template/*",
    ".github/*", ".notes/*", ".gitignore",
    "bench/present/*", "bench/commands/report.py", "bench/commands/site.py",
    "bench/commands/compare.py", "bench/commands/publish.py",
    "bench/commands/matrix.py", "bench/commands/serve.py",
    "bench/commands/export_gab.py", "bench/commands/import_gab.py",
    "bench/analyse/trends.py", "bench/analyse/series.py", "bench/records/history.py", "bench/records/store.py",
    "bench/records/synthetic.py", "bench/ci/matrix.py", "bench/ci/affected.py",
    "scripts/*",
)
# ... except these scripts, which a benchmark job runs.
MEASURED_SCRIPTS = ("scripts/install-backend.sh", "scripts/run-bench.sh")
BACKEND_MODULE = "bench/measure/backends/"


def affected_backends(config: Config, changed: Iterable[str]) -> tuple[str, ...]:
    """Backend labels (config order) that the changed repository paths can affect."""
    hit: set[str] = set()
    for path in (p.strip().removeprefix("./") for p in changed):
        if not path:
            continue
        hit |= _backends_of(config, path)
        if len(hit) == len(config.backends):
            break
    return tuple(b for b in config.backends if b in hit)


def _backends_of(config: Config, path: str) -> set[str]:
    everything = set(config.backends)
    if path in MEASURED_SCRIPTS:
        return everything
    if any(fnmatchcase(path, pattern) for pattern in NEUTRAL):
        return set()
    if path.startswith(BACKEND_MODULE) and path.endswith(".py"):
        module = path[len(BACKEND_MODULE):-len(".py")]
        named = {b.label for b in config.backends.values() if b.keras_backend == module}
        # __init__.py, a shared helper or a new backend: all of them.
        return named or everything
    return everything
