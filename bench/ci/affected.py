"""Which backends a pull request's changed files can affect (pr-bench.yml).

A PR benchmark costs an hour of a shared homelab, so it runs only the
backends whose numbers the change could move:

- a backend module (``bench/measure/backends/<keras_backend>.py``) affects the
  backends that run under that KERAS_BACKEND;
- files that cannot change a measurement affect none: docs, tests, CI glue
  other than the install/run steps, and the stages of bench/ that run after
  the timing ends (records, analyse, compare, present, ci; every verb but run);
- anything else (bench/measure/, the run verb, the config, the install
  script, an unknown file or a new stage folder) affects every backend: when
  unsure, measure.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Iterable

from bench.config import Config

# bench/'s stage folders and whether their code runs inside a benchmark job's
# measurement. A new folder must be added here (tests/test_matrix.py checks).
STAGES = {"measure": True, "records": False, "analyse": False, "compare": False,
          "present": False, "ci": False, "commands": False}
# Paths that never change what a benchmark measures. fnmatch patterns, where
# "*" also crosses "/".
NEUTRAL = (
    "*.md", "docs/*", "LICENSE*", "tests/*", ".github/*", ".notes/*", ".gitignore", "scripts/*", "studies/*",
    "gh-pages-template/*",
    *(f"bench/{stage}/*" for stage, measured in STAGES.items() if not measured),
)
# ... except these, which a benchmark job runs.
MEASURED = ("scripts/install-backend.sh", "scripts/run-bench.sh", "bench/commands/run.py")
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
    if path in MEASURED:
        return everything
    if any(fnmatchcase(path, pattern) for pattern in NEUTRAL):
        return set()
    if path.startswith(BACKEND_MODULE) and path.endswith(".py"):
        module = path[len(BACKEND_MODULE):-len(".py")]
        named = {b.label for b in config.backends.values() if b.keras_backend == module}
        # __init__.py, a shared helper or a new backend: all of them.
        return named or everything
    return everything
