"""Probes for `bench bisect`: the verdict rule every probe shares, and the
real probe that installs a Keras commit and runs a same-machine A/B.

probe_from_pairs: worker i of good and worker i of the probe ran back to
back (`bench run --ab`), so the pairs go to bench.compare's paired test
(compare_pairs) and its one rule (judge): 'slower' needs at least
compare.min_change, p < compare.alpha and an interval wholly on the slow
side. A fake runner in the tests feeds the same function.

RealProbe: one venv per commit under --work (good's made once), made by
the project's one install path, scripts/install-backend.sh with
BENCH_KERAS_REF=<sha> (the backend from the job's BENCH_INSTALL and
BENCH_PLUGINS, Keras at that commit from --keras-repo through
BENCH_KERAS_REPO: a local clone becomes a file:/// URL),
then GOOD_PYTHON -m bench run --protocol 2 --ab GOOD_PYTHON PROBE_PYTHON
from the repository root for the one (backend, device, model, mode), and
the two records' worker values.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Sequence

from bench.config import Compare
from bench.records.history import json_files
from bench.compare.bisect import BisectError, Probe
from bench.records.workers import worker_values
from bench.records.extensions import ab_side
from bench.compare.stats import compare_pairs
from bench.compare.verdicts import judge

INSTALL_TIMEOUT = 1800
RUN_TIMEOUT = 3600
ROOT = Path(__file__).resolve().parents[2]  # the repository: scripts/ and `python -m bench`


def probe_from_pairs(commit: str, good: Sequence[float | None], probe: Sequence[float | None],
                     better: str, settings: Compare) -> Probe:
    """The verdict of `probe` against `good`, worker by worker (a worker that
    failed on either side, None, pairs with nothing)."""
    pairs = [(g, p) for g, p in zip(good, probe) if g is not None and p is not None]
    if len(pairs) < 2:
        raise BisectError(f"probe {commit[:12]}: {len(pairs)} usable worker pair(s); expected at least 2 "
                          "(a failed install or benchmark on one side?)")
    g, p = [a for a, _ in pairs], [b for _, b in pairs]
    c = compare_pairs(p, g, settings.alpha)
    verdict, _ = judge(c, better, settings.min_change, settings.alpha)
    return Probe(commit, verdict, c.delta, c.interval, c.p_value, len(pairs))


class RealProbe:
    """Install a commit and A/B it against good on this machine."""

    def __init__(self, *, repo: str, good: str, series: tuple[str, str, str, str], work: Path,
                 settings: Compare, config: str | None = None):
        self.repo, self.good, self.series, self.work = repo, good, series, work
        self.settings, self.config = settings, config

    def __call__(self, commit: str) -> Probe:
        good_py = self._venv(self.good)
        probe_py = self._venv(commit)
        out = self.work / "runs" / commit[:12]
        backend, device, model, mode = self.series
        cmd = [str(good_py), "-m", "bench", *(["--config", self.config] if self.config else []), "run",
               "--backend", backend, "--device", device, "--models", model, "--modes", mode,
               "--protocol", "2", "--ab", str(good_py), str(probe_py), "--out", str(out)]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT, cwd=ROOT)
        if done.returncode not in (0, 1):
            raise BisectError(f"probe {commit[:12]}: bench run --ab exited {done.returncode}: "
                              f"{(done.stderr.strip().splitlines() or ['no message'])[-1]}")
        sides = read_ab(out, model, mode)
        better = sides.pop("better")
        return probe_from_pairs(commit, sides["a"], sides["b"], better, self.settings)

    def _venv(self, commit: str) -> Path:
        where = (self.work / "venvs" / commit[:12]).resolve()
        python = where / "bin" / "python"
        if python.exists():
            return python
        log = where.with_suffix(".install.json")
        env = {**os.environ, "BENCH_VENV": str(where), "BENCH_KERAS_REF": commit, "BENCH_KERAS_VERSION": "",
               "BENCH_INSTALL_LOG": str(log), "BENCH_KERAS_REPO": keras_url(self.repo)}
        done = subprocess.run(["bash", str(ROOT / "scripts" / "install-backend.sh")], capture_output=True,
                              text=True, timeout=INSTALL_TIMEOUT, env=env, cwd=ROOT)
        if done.returncode != 0 or not python.exists():
            raise BisectError(f"installing Keras {commit[:12]} failed (see {log}): "
                              f"{(done.stderr.strip().splitlines() or ['no message'])[-1]}")
        return python


def read_ab(folder: Path, model: str, mode: str) -> dict:
    """{'a': worker values, 'b': worker values, 'better': ...} from the two
    records of one `bench run --ab` in `folder`."""
    sides: dict = {}
    for path in map(Path, json_files(folder)):  # the one record-folder walker
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        side = ab_side(data) if isinstance(data, dict) else None
        if side is None:
            continue
        for r in data.get("results", []):
            if isinstance(r, dict) and r.get("model") == model and r.get("mode") == mode:
                sides[side[1]] = worker_values(r)
                sides["better"] = r.get("better", "bigger")
    if "a" not in sides or "b" not in sides:
        raise BisectError(f"{folder}: no A/B pair of records with {model}/{mode}; "
                          "expected the two records of bench run --ab")
    return sides


def keras_url(repo: str) -> str:
    """--keras-repo as the git URL pip installs from: URLs as given, a local
    clone as an absolute file:/// URL."""
    if "://" in repo:
        return repo
    return Path(repo).expanduser().resolve().as_uri()

