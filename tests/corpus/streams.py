"""Made-up nightly streams for judging a status rule: a label from how each
stream is built, never from a statistic of its values.

Shares no code or constant with bench/analyse (it imports nothing from it):
the noise shapes below are this repository's measured figures (README,
docs/measurements.md) and public histories (real_noise.json), not the rule's
parameters. Each stream is positive values, bigger is better, one per night,
flat at 1.0 with at most one step: `steps` holds (night, relative size).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

REAL_NOISE = Path(__file__).with_name("real_noise.json")
HARNESS_NOISE = Path(__file__).with_name("harness_noise.json")
REF_NOISE = Path(__file__).with_name("ref_noise.json")

# Noise kinds: what nightly noise looks like on each kind of series.
#   precise: a reference ratio or a quiet GPU, normal noise of 0.3-1 %;
#   vm: samples/s on this shared VM, two-sided and heavy-tailed (Student's
#       t, 4 degrees of freedom) at 2-6 %;
#   dips: the shared, clock-capped GPU, normal noise of 1-3 % plus deep
#       one-sided dips to 10-80 % of the level on 5-20 % of the nights;
#   real: residuals of public github-action-benchmark histories
#       (real_noise.json), drawn night by night from one of them: their
#       spread, skew and tails as measured, but not their order, since a
#       stretch of a real history may hold a real step, which a stream
#       labelled flat must not;
#   harness: this harness's own invocations on this VM (harness_noise.json:
#       the sets of 5 whose every figure docs/measurements.md kept), log
#       residuals around each set's mean, drawn in blocks of HARNESS_BLOCK
#       consecutive invocations from a set chosen at random, so that the
#       host's slide over minutes stays in them.
#   ref: this harness's reference ratio (the series that alerts on a device
#       with a reference build) across its own invocations on this VM
#       (ref_noise.json, made by studies/derive_ref_noise.py from kept
#       folders), drawn like harness.
KINDS = ("precise", "vm", "dips", "real", "harness", "ref")
LEVELS = {"precise": (0.003, 0.005, 0.007, 0.010), "vm": (0.02, 0.04, 0.06),
          "dips": (0.01, 0.02, 0.03), "real": (None,), "harness": (None,), "ref": (None,)}
HARNESS_BLOCK = 2
DIP_RATE = (0.05, 0.20)
DIP_DEPTH = (0.10, 0.80)


@dataclass(frozen=True)
class Stream:
    name: str
    kind: str
    level: float | None       # the noise's sigma (a fraction); real: the history's own
    values: tuple[float, ...]
    steps: tuple[tuple[int, float], ...]  # (first night at the new level, relative size)


def _real_histories() -> list[tuple[np.ndarray, float]]:
    data = json.loads(REAL_NOISE.read_text())
    return [(np.array(s["residuals"], dtype=float), float(s["sigma"]))
            for s in data["series"] if len(s["residuals"]) >= 40]


_REAL: list | None = None


@lru_cache(maxsize=4)
def harness_residuals(path: Path = HARNESS_NOISE) -> tuple[np.ndarray, ...]:
    """Each set of harness_noise.json (or ref_noise.json) as log residuals around its mean, up = faster;
    read once per file, not once per stream."""
    data = json.loads(path.read_text())
    out = []
    for s in data["sets"]:
        logs = np.log(np.array(s["values"], dtype=float)) * (1.0 if s["better"] == "bigger" else -1.0)
        res = logs - logs.mean()
        res.setflags(write=False)  # shared by every stream drawn from it
        out.append(res)
    return tuple(out)


def _blocks(sets: tuple[np.ndarray, ...], n: int, rng: np.random.Generator) -> np.ndarray:
    """n nights of a block bootstrap: HARNESS_BLOCK consecutive residuals of a random set at a time."""
    out: list[float] = []
    while len(out) < n:
        res = sets[rng.integers(len(sets))]
        start = int(rng.integers(len(res) - HARNESS_BLOCK + 1))
        out.extend(res[start:start + HARNESS_BLOCK])
    return np.array(out[:n])


def noise(kind: str, level: float | None, n: int, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """n nights of log noise of a kind, and its sigma."""
    global _REAL
    if kind == "precise":
        return rng.normal(0.0, level, n), level
    if kind == "vm":
        return level * rng.standard_t(4, n) / np.sqrt(2.0), level  # t4 has variance 2
    if kind == "dips":
        out = rng.normal(0.0, level, n)
        dipped = rng.random(n) < rng.uniform(*DIP_RATE)
        out[dipped] += np.log(rng.uniform(*DIP_DEPTH, dipped.sum()))
        return out, level
    if kind == "real":
        if _REAL is None:
            _REAL = _real_histories()
        res, sigma = _REAL[rng.integers(len(_REAL))]
        return rng.choice(res, n), sigma
    if kind in ("harness", "ref"):
        sets = harness_residuals(HARNESS_NOISE if kind == "harness" else REF_NOISE)
        return _blocks(sets, n, rng), float(np.std(np.concatenate(sets)))
    raise ValueError(f"noise kind {kind!r}; expected one of {', '.join(KINDS)}")


def stream(kind: str, level: float | None, n: int, step_at: int | None, size: float,
           rng: np.random.Generator, name: str = "") -> Stream:
    """n nights of `kind` noise around 1.0, stepping by `size` (a fraction,
    -0.03 = 3 % slower) from night step_at on (None: flat)."""
    logs, sigma = noise(kind, level, n, rng)
    steps = ()
    if step_at is not None and size:
        logs[step_at:] += np.log1p(size)
        steps = ((step_at, size),)
    return Stream(name, kind, sigma, tuple(float(v) for v in np.exp(logs)), steps)
