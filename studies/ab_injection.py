#!/usr/bin/env python3
"""Injection (issue 53): does the confirm job call a build made slower by a
known fraction DIFFERENT, and identical builds SAME, through the real pipeline?

    # the full measurement, for a quiet machine (about 20 min a trial at most:
    # 3 fractions x 2 kinds x 20 trials + 20 identical trials):
    .venv/bin/python studies/ab_injection.py --fractions 0.02 0.03 0.05 --kinds step compute \\
        --trials 20 --budget-minutes 20 --out .local/ab-injection
    # the smoke form (it must run; it measures nothing):
    .venv/bin/python studies/ab_injection.py --smoke --out .local/ab-injection-smoke

Each trial is one `bench confirm` loop (bench.compare.confirm.run with
bench.compare.bisect_probe.ABPairs: batches of `bench run --ab A B` for
jax mlp/train on this machine, adding worker pairs until DIFFERENT or SAME
or the budget) with A this venv's python and B the same python through a
wrapper whose PYTHONPATH folder holds a sitecustomize.py that makes B slower:

- kind "step", Keras's per-step path: keras.Model.make_train_function and
  make_predict_function are wrapped so that after each step function call
  the process spins for FRACTION x the mean interval between the unmodified
  calls so far (the spin itself excluded). Nominal: on CPU, jax's compute can
  overlap the spin; the measured change is reported beside the nominal one.
- kind "compute", the model's compute: the MLP's two hidden layers are
  widened so the multiply-adds per sample (784h + h^2 + 10h) grow by FRACTION
  (a test-only model variant, as studies/bench_ab_sensitivity.py's). The
  committed weights and Adam state that every timed train call starts from
  (workers v13) are grown to the wider layers with zeros: the same logits,
  the same gate, the wider layers' work.
- "identical": B's wrapper with an empty folder (both sides pay the same start-up).

The labels come only from how B is built. Per trial it prints the answer,
the measured change, pairs and minutes, and per (kind, fraction) the
counts; the goals (issue 53): 3 % DIFFERENT in >= 19 of 20, identical SAME
in >= 19 of 20 and DIFFERENT in at most 1, each trial within 20 minutes.
Results go to OUT/<case>/<trial>/ (the A/B records of every batch) and
OUT/results.json. Exit 0; the numbers are the answer.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
import tempfile
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import config  # noqa: E402
from bench.compare import confirm  # noqa: E402
from bench.compare.bisect_probe import ABPairs  # noqa: E402
from bench.measure import lock  # noqa: E402

sys.path.insert(0, str(ROOT / "studies"))
from bench_ab_sensitivity import widen_site  # noqa: E402  (one widened-MLP template for both studies)
from site_hooks import AFTER_IMPORT  # noqa: E402  (one import hook for every site)

SERIES = ("jax", "local-cpu", "mlp", "train")
BASE_WIDTH = 256

STEP_SITE = '''"""Test-only (studies/ab_injection.py): each Keras step function call {fraction} slower."""
import sys, time

FRACTION = {fraction!r}
# Only the processes of this build (its venv's prefix; None: every process on
# this PYTHONPATH): a reference build's workers inherit the PYTHONPATH too.
ONLY = {only!r}
KEEP = 256  # the newest intervals between calls that the step's time is taken from
_clock = time.perf_counter


def _ready(out):
    # jax returns before the step has run (asynchronous dispatch): a spin right
    # after the call would run beside the step's compute, on a pinned CPU
    # against it, and cost more than its length. Waited for, it follows it.
    if keras.backend.backend() == "jax":
        import jax
        jax.block_until_ready(out)


def _slowed(fn):
    state = {{"last": None, "spun": 0.0, "gaps": [], "seen": 0, "step": 0.0}}

    def call(*args, **kwargs):
        now = _clock()
        if state["last"] is not None:  # the interval since the last call, less the spin added to it
            gaps = state["gaps"]
            gaps.append(now - state["last"] - state["spun"])
            del gaps[:-KEEP]
            state["seen"] += 1
            # A step's time is the median interval: the calls of one timed call
            # follow each other, and the few intervals that span the gap to the
            # next timed call (a native call, a weight reset) are left out.
            # Sorted every 16th call only: the sort's own time lands in the step.
            if state["seen"] <= 16 or state["seen"] % 16 == 0:
                ordered = sorted(gaps)
                state["step"] = ordered[len(ordered) // 2]
        out = fn(*args, **kwargs)
        _ready(out)
        spin = FRACTION * state["step"]
        _spend(spin)
        state["last"], state["spun"] = now, spin
        return out
    return call

{spend}


def _wrap(name, attr):
    original = getattr(keras.Model, name)

    def make(self, *args, **kwargs):
        out = original(self, *args, **kwargs)
        fn = getattr(self, attr, None)
        if fn is not None and not getattr(fn, "_injected", False):
            wrapped = _slowed(fn)
            wrapped._injected = True
            setattr(self, attr, wrapped)
        return out
    setattr(keras.Model, name, make)


def _install(module):
    """keras.Model's step functions wrapped; not at the start (site_hooks says why)."""
    global keras
    keras = module
    _wrap("make_train_function", "train_function")
    _wrap("make_predict_function", "predict_function")


{after_import}

if ONLY is None or sys.prefix == ONLY:
    after_import(["keras"], lambda name, module: _install(module))
'''

# How the added time is spent. SPIN: on this process's own CPU alone.
SPIN = '''def _spend(seconds):
    until = _clock() + seconds
    while _clock() < until:
        pass
'''
# STREAM (studies/ab_bandwidth.py): copying through a buffer four times a
# typical last-level cache, a mebibyte at a time, so that the time goes to
# memory traffic that the partner process shares.
STREAM = '''import numpy as _np

_BUF, _OUT = [], []  # made at the first spend: a process that takes no step (bench run's parent) makes none
_at = [0]


def _spend(seconds):
    if not _BUF:
        _BUF.append(_np.ones(64 * 2**20 // 8))
        _OUT.append(_np.empty(2**20 // 8))
    buf, out = _BUF[0], _OUT[0]
    until = _clock() + seconds
    while _clock() < until:  # each copy whole: it may end up to one copy (tens of µs) past `until`
        start = _at[0]
        _np.copyto(out, buf[start:start + out.size])
        _at[0] = (start + out.size) % (buf.size - out.size)
'''

def step_site(fraction: float, spend: str = SPIN, only: str | None = None) -> str:
    """The sitecustomize.py that makes each Keras step function call `fraction` slower, spent by
    `spend`, in the processes whose sys.prefix is `only` (None: in every process that loads it)."""
    return STEP_SITE.format(fraction=fraction, spend=spend, only=only, after_import=AFTER_IMPORT)


def width_for(fraction: float) -> int:
    """The hidden width whose multiply-adds per sample are (1 + fraction) x the 256-unit MLP's."""
    work = lambda h: 784 * h + h * h + 10 * h  # noqa: E731
    target = (1 + fraction) * work(BASE_WIDTH)
    return round((-(794) + math.sqrt(794 ** 2 + 4 * target)) / 2)


def make_b_python(folder: Path, kind: str, fraction: float) -> Path:
    """An executable: this python with `folder` (its sitecustomize.py) first on PYTHONPATH."""
    folder.mkdir(parents=True, exist_ok=True)
    if kind in ("step", "stream"):
        (folder / "sitecustomize.py").write_text(step_site(fraction, SPIN if kind == "step" else STREAM))
    elif kind == "compute":
        (folder / "sitecustomize.py").write_text(widen_site(width_for(fraction)))
    wrapper = folder / "python"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{folder}${{PYTHONPATH:+:$PYTHONPATH}}" exec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def trial(b_python: Path, out: Path, plan: confirm.Plan, extra: tuple[str, ...]) -> dict:
    """One confirm loop. Its clock and budget start once this study holds the
    machine lock (another run's wait is not the loop's time); its own `bench
    run`s share an inner lock of their own, as bench_native.py's do."""
    source = ABPairs(Path(sys.executable), b_python, SERIES, out, extra=extra)
    say = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    outer, inner = lock.path(), out.parent / "inner.lock"
    out.parent.mkdir(parents=True, exist_ok=True)
    with lock.held(outer, say, "ab_injection.py"), _environ(lock.ENV, str(inner)):
        t0 = time.monotonic()
        result = confirm.run(source, plan, "bigger")
        minutes = (time.monotonic() - t0) / 60
    result = replace(result, better=source.better or "bigger")
    return {"answer": result.answer, "direction": result.direction, "delta": result.delta,
            "p_value": result.p_value, "pairs": result.pairs, "minutes": minutes,
            "stopped": result.stopped}


@contextlib.contextmanager
def _environ(name: str, value: str):
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fractions", type=float, nargs="+", default=[0.02, 0.03, 0.05])
    p.add_argument("--kinds", nargs="+", choices=("step", "compute"), default=["step", "compute"])
    p.add_argument("--trials", type=int, default=20)
    p.add_argument("--budget-minutes", type=float, default=20.0)
    p.add_argument("--out", required=True)
    p.add_argument("--smoke", action="store_true",
                   help="1 trial of 'compute' at 5 %% and 1 identical, 2+2 pairs of --quick workers: it runs, "
                        "it measures nothing")
    a = p.parse_args()
    settings = config.load().compare
    if a.smoke:
        cases = [("identical", 0.0), ("compute", 0.05)]
        trials, extra = 1, ("--quick",)
        plan = confirm.plan_of(settings, first=2, step=2, max_pairs=4, budget_s=a.budget_minutes * 60)
    else:
        cases = [("identical", 0.0)] + [(k, f) for k in a.kinds for f in a.fractions]
        trials, extra = a.trials, ()
        plan = confirm.plan_of(settings, budget_s=a.budget_minutes * 60)
    out = Path(a.out)
    results: dict[str, list] = {}
    with tempfile.TemporaryDirectory(prefix="ab-injection-") as tmp:
        for kind, fraction in cases:
            name = kind if kind == "identical" else f"{kind}-{fraction:g}"
            b_python = make_b_python(Path(tmp) / name, kind, fraction)
            if kind == "compute":
                h = width_for(fraction)
                work = (784 * h + h * h + 10 * h) / (794 * BASE_WIDTH + BASE_WIDTH ** 2) - 1
                print(f"{name}: hidden width {h}: {work * 100:+.2f}% multiply-adds per sample", flush=True)
            for i in range(trials):
                r = trial(b_python, out / name / f"{i:02d}", plan, extra)
                results.setdefault(name, []).append(r)
                print(f"{name} trial {i + 1}: {r['answer']} ({r['direction'] or '-'}), measured "
                      f"{r['delta'] * 100:+.1f}%, p={r['p_value']:.2g}, {r['pairs']} pairs, "
                      f"{r['minutes']:.1f} min; {r['stopped']}", flush=True)
            counts = Counter(r["answer"] for r in results[name])
            deltas = sorted(r["delta"] for r in results[name])
            print(f"{name}: {dict(counts)} of {trials}; measured change {deltas[0] * 100:+.1f} … "
                  f"{deltas[-1] * 100:+.1f}%; longest trial {max(r['minutes'] for r in results[name]):.1f} min",
                  flush=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, sort_keys=True, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
