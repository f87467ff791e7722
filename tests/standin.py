"""A tiny stand-in for the Keras repository and a fake A/B runner, for the
bisect tests and studies/bisect_accuracy.py.

make_history(): a git repository of a one-file package `standin` with
`n` commits after a root commit; commit `slow` (1-based: the slow commit is
the slow-th after the root) sets SLOWDOWN = FACTOR, and every later commit
keeps it. FakeRunner: reads SLOWDOWN at a commit (git show, the real
history) and is a pair source for the real confirm loop (probe_by_loop):
each pair good ~ 1000 * (1 + N(0, noise)), probe ~ 1000 / SLOWDOWN * (1 +
N(0, noise)) (throughput, bigger is better), as many as the loop asks for.
"""

from __future__ import annotations

import random
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

from bench.config import Compare
from bench.compare import confirm
from bench.compare.bisect_probe import probe_by_loop

T0 = datetime(2026, 11, 1, 0, 0, tzinfo=timezone.utc)


def make_history(root: Path, n: int = 64, slow: int | None = 37, factor: float = 1.10,
                 hours: float = 6.0) -> list[str]:
    """The repo at `root`; returns [root commit, commit 1, ..., commit n]
    (one every `hours`, from T0), oldest first."""
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "--quiet", "-b", "master", str(root)], check=True)
    stream = []
    for i in range(n + 1):
        slowdown = factor if slow is not None and i >= slow else 1.0
        body = f"SLOWDOWN = {slowdown!r}\nCOMMIT = {i}\n".encode()
        when = int((T0 + timedelta(hours=hours * i)).timestamp())
        msg = f"commit {i}\n".encode()
        stream += [b"commit refs/heads/master\n", f"mark :{i + 1}\n".encode(),
                   f"committer Dev <dev@example.com> {when} +0000\n".encode(),
                   f"data {len(msg)}\n".encode(), msg]
        if i:
            stream.append(f"from :{i}\n".encode())
        stream += [f"M 100644 inline standin.py\ndata {len(body)}\n".encode(), body, b"\n"]
    subprocess.run(["git", "-C", str(root), "fast-import", "--quiet"], input=b"".join(stream), check=True)
    out = subprocess.run(["git", "-C", str(root), "rev-list", "--reverse", "master"],
                         capture_output=True, text=True, check=True).stdout.split()
    return out


def slowdown_at(root: Path, commit: str) -> float:
    text = subprocess.run(["git", "-C", str(root), "show", f"{commit}:standin.py"],
                          capture_output=True, text=True, check=True).stdout
    return float(text.splitlines()[0].split("=")[1])


class FakeRunner:
    """probe(commit) -> Probe, measured by the fake A/B described above."""

    def __init__(self, root: Path, seed: int = 0, noise: float = 0.02, settings: Compare = Compare(),
                 max_pairs: int = confirm.Plan().max_pairs):
        self.root, self.rng, self.noise, self.settings = root, random.Random(seed), noise, settings
        self.max_pairs = max_pairs
        self.calls: list[str] = []
        self.pairs_drawn = 0

    def __call__(self, commit: str):
        self.calls.append(commit)
        f = slowdown_at(self.root, commit)

        def source(k):
            self.pairs_drawn += k
            return [(1000.0 * (1 + self.rng.gauss(0, self.noise)), 1000.0 / f * (1 + self.rng.gauss(0, self.noise)))
                    for _ in range(k)]
        return probe_by_loop(commit, source, confirm.plan_of(self.settings, max_pairs=self.max_pairs), "bigger")
