"""Probes for `bench bisect`: the verdict rule every probe shares, and the
real probe that installs a Keras commit and runs a same-machine A/B.

probe_by_loop: each probe is the confirm loop (bench.compare.confirm):
worker pairs of good and the probe (they ran side by side, `bench run
--ab`) are added batch by batch until the loop says DIFFERENT or SAME; a
DIFFERENT on the slow side is 'slower', on the other 'faster', SAME or
UNKNOWN 'unchanged'. A fake pair source in the tests feeds the same loop.

RealProbe: one venv per commit under --work (good's made once), made by
the project's one install path, scripts/install-backend.sh with
BENCH_KERAS_REF=<sha> (the backend from the job's BENCH_INSTALL and
BENCH_PLUGINS, Keras at that commit from --keras-repo through
BENCH_KERAS_REPO: a local clone becomes a file:/// URL),
then, per batch of the loop, GOOD_PYTHON -m bench run --protocol 2 --ab
GOOD_PYTHON PROBE_PYTHON --workers K from the repository root for the one
(backend, device, model, mode), and the two records' worker pairs.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from dataclasses import replace

from bench.config import Compare
from bench.records.history import json_files
from bench.compare.bisect import BisectError, Probe
from bench.compare.baseline import pair_values
from bench.records.extensions import ab_side
from bench.compare import confirm

INSTALL_TIMEOUT = 1800
RUN_TIMEOUT = 3600
ROOT = Path(__file__).resolve().parents[2]  # the repository: scripts/ and `python -m bench`


def probe_by_loop(commit: str, source: confirm.PairSource, plan: confirm.Plan,
                  better: str | None = None) -> Probe:
    """The verdict of the probe against good by the confirm loop: `source(k)`
    gives k more (good, probe) worker pairs. better None: the direction is
    read from the source after the run (ABPairs learns it from the records)."""
    out = confirm.run(source, plan, better or "bigger")
    if out.pairs < 2:
        raise BisectError(f"probe {commit[:12]}: {out.pairs} usable worker pair(s); expected at least 2 "
                          "(a failed install or benchmark on one side?)")
    if better is None:
        out = replace(out, better=getattr(source, "better", None) or "bigger")
    return probe_from_outcome(commit, out)


def probe_from_outcome(commit: str, out: confirm.Outcome) -> Probe:
    return Probe(commit, out.direction or "unchanged", out.delta, out.interval, out.p_value, out.pairs)


class RealProbe:
    """Install a commit and A/B it against good on this machine."""

    def __init__(self, *, repo: str, good: str, series: tuple[str, str, str, str], work: Path,
                 settings: Compare, config: str | None = None):
        self.repo, self.good, self.series, self.work = repo, good, series, work
        self.settings, self.config = settings, config

    def __call__(self, commit: str) -> Probe:
        good_py = install_venv(self.work, self.good, ref=self.good, repo=self.repo)
        probe_py = install_venv(self.work, commit, ref=commit, repo=self.repo)
        source = ABPairs(good_py, probe_py, self.series, self.work / "runs" / commit[:12], self.config)
        return probe_by_loop(commit, source, confirm.plan_of(self.settings))


class ABPairs:
    """A pair source for the confirm loop: each call runs one `bench run --ab`
    of k worker pairs (A: a_py, B: b_py) for one series into a batch folder
    of its own under `out`, and returns its (A, B) worker pairs where both
    workers are ok (in a duet, disturbed ones too: bench.compare.baseline.pair_values)."""

    def __init__(self, a_py: Path, b_py: Path, series: tuple[str, str, str, str], out: Path,
                 config: str | None = None, timeout: float = RUN_TIMEOUT, extra: tuple[str, ...] = ()):
        self.a_py, self.b_py, self.series, self.out, self.config = a_py, b_py, series, out, config
        self.timeout, self.batches, self.better, self.extra = timeout, 0, None, tuple(extra)

    def __call__(self, k: int) -> list[tuple[float, float]]:
        self.batches += 1
        folder = self.out / f"batch-{self.batches:02d}"
        backend, device, model, mode = self.series
        cmd = [str(self.a_py), "-m", "bench", *(["--config", self.config] if self.config else []), "run",
               "--backend", backend, "--device", device, "--models", model, "--modes", mode,
               "--protocol", "2", "--workers", str(max(1, k)), "--ab", str(self.a_py), str(self.b_py),
               "--out", str(folder), *self.extra]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=self.timeout, cwd=ROOT)
        except subprocess.TimeoutExpired:
            raise BisectError(f"{folder}: bench run --ab gave no answer in {self.timeout:.0f}s") from None
        if done.returncode not in (0, 1):
            raise BisectError(f"{folder}: bench run --ab exited {done.returncode}: "
                              f"{(done.stderr.strip().splitlines() or ['no message'])[-1]}")
        sides = read_ab(folder, model, mode)
        self.better = sides["better"]
        return [(a, b) for a, b in zip(sides["a"], sides["b"]) if a is not None and b is not None]


def install_venv(work: Path, name: str, *, ref: str = "", version: str = "", repo: str = "") -> Path:
    """The python of a venv under work/venvs/NAME holding Keras at git `ref`
    (from `repo`) or keras-nightly `version`, made once by the project's one
    install path (scripts/install-backend.sh; the backend from the job's
    BENCH_INSTALL and BENCH_PLUGINS)."""
    where = (work / "venvs" / name[:40]).resolve()
    python = where / "bin" / "python"
    if python.exists():
        return python
    log = where.with_suffix(".install.json")
    env = {**os.environ, "BENCH_VENV": str(where), "BENCH_KERAS_REF": ref, "BENCH_KERAS_VERSION": version,
           "BENCH_INSTALL_LOG": str(log)}
    if repo:
        env["BENCH_KERAS_REPO"] = keras_url(repo)
    try:
        done = subprocess.run(["bash", str(ROOT / "scripts" / "install-backend.sh")], capture_output=True,
                              text=True, timeout=INSTALL_TIMEOUT, env=env, cwd=ROOT)
    except subprocess.TimeoutExpired:
        raise BisectError(f"installing Keras {(ref or version)[:12]} gave no answer in {INSTALL_TIMEOUT}s "
                          f"(see {log})") from None
    if done.returncode != 0 or not python.exists():
        raise BisectError(f"installing Keras {(ref or version)[:12]} failed (see {log}): "
                          f"{(done.stderr.strip().splitlines() or ['no message'])[-1]}")
    return python


def read_ab(folder: Path, model: str, mode: str) -> dict:
    """{'a': worker values, 'b': worker values, 'better': ...} from the two
    records of one `bench run --ab` in `folder` (as pairs see them:
    bench.compare.baseline.pair_values)."""
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
                sides[side[1]] = pair_values(r, data)
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

