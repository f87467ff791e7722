#!/usr/bin/env python3
"""A/B sensitivity (issue 10): does a same-machine A/B run plus `bench compare`
call identical builds `unchanged` and a ~10 % slower build `slower`?

    # real: N same-machine A/B runs per case with `bench run --ab`, each
    # compared by `bench compare --base A --head B` (the records are kept)
    .venv/bin/python studies/bench_ab_sensitivity.py real --runs 2 --out .local/ab-sens [--quick] [--ab-mode turns]
    # a run folder that already holds both records is compared again, not rerun:
    # a second call with a larger --runs adds runs to the same --out

    # simulation: 20 A/B runs per case drawn from the worker pairs measured above
    .venv/bin/python studies/bench_ab_sensitivity.py simulate --records .local/ab-sens [--trials 20]

The cases (goals: `unchanged` 20 of 20; `slower` at least 19 of 20):
- identical: A and B are this venv's python.
- wider: B is the same python with an extra PYTHONPATH folder (a temp dir
  made here) whose sitecustomize.py widens the MLP's two hidden layers from
  256 to 276 units: 784*h + h*h + 10*h multiply-adds per sample, +9.9 % work.
  A test-only model variant: nothing in the product knows about it. Only
  mlp/train is measured (predict loads the committed 256-unit weights).
B runs through a small wrapper script in both cases (so both cases pay the
same start-up). The simulation draws each simulated run's pairs, with
replacement, from all (worker of A, worker of B) pairs the real runs of that
case measured, and judges them with the real verdict code; it shows what 20
runs would give at the measured noise, not a new measurement.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from types import MappingProxyType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import config  # noqa: E402
from bench.compare.baseline import RECORDS, BaseEntry, Baseline  # noqa: E402
from bench.records.workers import worker_values  # noqa: E402
from bench.records.extensions import ab_side  # noqa: E402
from bench.compare.head import Head, HeadEntry  # noqa: E402
from bench.compare.verdicts import compare  # noqa: E402

sys.path.insert(0, str(ROOT / "studies"))
from site_hooks import AFTER_IMPORT  # noqa: E402  (one import hook for every site)

CASES = ("identical", "wider")
MODEL, MODE = "mlp", "train"
WIDTH = 276  # 256 -> 276 hidden units: +9.9 % multiply-adds per sample
GOALS = {"identical": ("unchanged", 20), "wider": ("slower", 19)}  # of 20

def widen_site(width: int) -> str:
    """A sitecustomize.py that builds the MLP with its two hidden layers at `width` units
    (studies/ab_injection.py uses it too), and grows the committed weights and
    Adam state (workers v13 start every timed train call from them, and the
    predict gate compares against them) to that width with zeros: the added
    units take no input and feed nothing, so the model computes the same
    logits, passes the same gate and learns the same, while each step does
    the wider layers' multiply-adds."""
    return f'''"""Test-only (studies/bench_ab_sensitivity.py): the MLP's hidden layers at {width} units."""
TARGET = "bench.measure.workloads.mlp"
GATE = "bench.measure.workloads.gate"
WIDTH = {width}


def grown(arrays):
    """The MLP's six arrays (dense1 kernel and bias, dense2's, the logits'), hidden units padded with zeros."""
    import numpy as np

    k1, b1, k2, b2, k3, b3 = arrays
    extra = WIDTH - k1.shape[1]
    if extra <= 0:
        return tuple(arrays)
    return (np.pad(k1, ((0, 0), (0, extra))), np.pad(b1, (0, extra)), np.pad(k2, ((0, extra), (0, extra))),
            np.pad(b2, (0, extra)), np.pad(k3, ((0, extra), (0, 0))), b3)


def widen_gate(gate):
    import dataclasses

    load_reference, load_train_start = gate.load_reference, gate.load_train_start

    def reference(model, path=None):
        ref = load_reference(model, path)
        return dataclasses.replace(ref, weights=grown(ref.weights)) if model == "mlp" else ref

    def train_start(model, path=None):
        start = load_train_start(model, path)
        if model != "mlp":
            return start
        return dataclasses.replace(start, momentums=grown(start.momentums), velocities=grown(start.velocities))

    gate.load_reference, gate.load_train_start = reference, train_start


def build():
    import keras
    from keras import layers

    inputs = keras.Input(shape=(784,), name="pixels")
    x = layers.Dense(WIDTH, activation="relu", name="dense1")(inputs)
    x = layers.Dense(WIDTH, activation="relu", name="dense2")(x)
    return keras.Model(inputs, layers.Dense(10, name="logits")(x), name="mlp")


def _widened(name, module):
    if name == TARGET:
        module.build = build
    else:
        widen_gate(module)

{AFTER_IMPORT}

after_import([TARGET, GATE], _widened)
'''


SITECUSTOMIZE = widen_site(WIDTH)


def make_b_python(folder: Path, widen: bool) -> Path:
    """An executable that runs this python with `folder` first on PYTHONPATH."""
    folder.mkdir(parents=True, exist_ok=True)
    if widen:
        (folder / "sitecustomize.py").write_text(SITECUSTOMIZE)
    wrapper = folder / "python"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{folder}${{PYTHONPATH:+:$PYTHONPATH}}" exec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def sides(folder: Path) -> dict[str, Path]:
    """{'a': record, 'b': record} written by one `bench run --ab`."""
    found = {}
    for path in folder.rglob("*.json"):
        side = ab_side(json.loads(path.read_text()))
        if side:
            found[side[1]] = path
    return found


def real(a) -> int:
    out = Path(a.out)
    counts = {case: Counter() for case in CASES}
    with tempfile.TemporaryDirectory(prefix="ab-sens-") as tmp:
        for case in CASES:
            b_python = make_b_python(Path(tmp) / case, widen=case == "wider")
            for i in range(a.runs):
                folder = out / case / f"{i:02d}"
                t0 = time.perf_counter()
                kept = sides(folder) if folder.is_dir() else {}
                if set(kept) == {"a", "b"}:  # measured by an earlier call: count it, run the rest
                    verdict, row = compare_files(kept["a"], kept["b"])
                    counts[case][verdict] += 1
                    print(f"{case} {i}: {verdict:9s} delta {row['delta'] * 100:+.1f}% (kept from {folder})",
                          flush=True)
                    continue
                cmd = [sys.executable, "-m", "bench", "run", "--ab", sys.executable, str(b_python),
                       "--backend", a.backend, "--device", a.device, "--models", MODEL, "--modes", MODE,
                       "--out", str(folder), "--ab-mode", a.ab_mode] + (["--quick"] if a.quick else []) + (
                       ["--workers", str(a.workers)] if a.workers else [])
                run = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
                found = sides(folder) if folder.is_dir() else {}
                if run.returncode != 0 or set(found) != {"a", "b"}:
                    print(f"{case} {i}: bench run --ab failed ({run.returncode}): {run.stderr.strip()[-400:]}")
                    continue
                verdict, row = compare_files(found["a"], found["b"])
                counts[case][verdict] += 1
                print(f"{case} {i}: {verdict:9s} delta {row['delta'] * 100:+.1f}% basis {row['basis']} "
                      f"p={row['p_value']:.2g} sees {_pct(row['detectable'])} ({time.perf_counter() - t0:.0f} s)",
                      flush=True)
    for case in CASES:
        print(f"{case}: {dict(counts[case])}")
    return 0


def compare_rows(base: Path, head: Path) -> dict[tuple[str, str], dict]:
    """`bench compare --format json`'s headline rows, by (model, mode)."""
    out = subprocess.run([sys.executable, "-m", "bench", "compare", "--base", str(base), "--head", str(head),
                          "--format", "json"], cwd=ROOT, capture_output=True, text=True, check=True)
    return {(r["model"], r["mode"]): r for r in json.loads(out.stdout)["benchmarks"] if r["metric"] == ""}


def compare_files(base: Path, head: Path) -> tuple[str, dict]:
    row = compare_rows(base, head)[(MODEL, MODE)]
    return row["verdict"], row


def measured_pairs(folder: Path, include_disturbed: bool = False) -> tuple[list[tuple[float, float]], int]:
    """Every (A worker, B worker) figure of mlp/train in the case's runs (first
    round, as bench compare pairs them), and workers per run. With
    include_disturbed, pairs whose workers were flagged disturbed count too
    (a machine so busy that every worker is flagged leaves nothing else)."""
    pairs, per_run = [], 0
    for run in sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else ():
        found = sides(run)
        if set(found) != {"a", "b"}:
            continue
        workers = {}
        for s, path in found.items():
            data = json.loads(path.read_text())
            raw = [r for r in data["results"] if (r["model"], r["mode"]) == (MODEL, MODE)]
            if raw and include_disturbed:
                raw = [{**raw[0], "workers": [{**w, "disturbed": False} for w in raw[0].get("workers", [])]}]
            workers[s] = worker_values(raw[0]) if raw else ()
        run_pairs = [(x, y) for x, y in zip(workers["a"], workers["b"]) if x and y]
        pairs += run_pairs
        per_run = max(per_run, len(workers["a"]))
    return pairs, per_run


def simulate(a) -> int:
    settings = config.load().compare
    rng = random.Random(a.seed)
    key = ("jax", "local-cpu", MODEL, MODE)
    for case in CASES:
        pairs, workers = measured_pairs(Path(a.records) / case, a.include_disturbed)
        if not pairs:
            print(f"{case}: no measured A/B runs under {Path(a.records) / case}; run `real` first")
            continue
        workers = a.workers or workers
        if len(pairs) < 2 * workers:
            print(f"{case}: only {len(pairs)} measured pairs; at least {2 * workers} needed to draw "
                  f"runs of {workers} pairs from (run `real` more often)")
            continue
        found = {}
        for _ in range(a.trials):
            drawn = [rng.choice(pairs) for _ in range(workers)]
            av, bv = tuple(x for x, _ in drawn), tuple(y for _, y in drawn)
            base = BaseEntry(key, "samples/s", "bigger", RECORDS, run_values=(sorted(av)[len(av) // 2],),
                             samples=av, count=1, workers=av, ab=("sim", "a"))
            head = HeadEntry(key, "ok", "samples/s", "bigger", bv, None, workers=bv, ab=("sim", "b"))
            (row,) = compare(Baseline(MappingProxyType({key: base}), MappingProxyType({}), "sim"),
                             Head(MappingProxyType({key: head}), MappingProxyType({})), settings)
            found[row.verdict] = found.get(row.verdict, 0) + 1
        ratios = sorted(y / x for x, y in pairs)
        want, need = GOALS[case]
        print(f"{case}: {found} of {a.trials} simulated runs of {workers} worker pairs, drawn from "
              f"{len(pairs)} measured pairs (B/A median {ratios[len(ratios) // 2] - 1:+.1%}, "
              f"range {ratios[0] - 1:+.1%} … {ratios[-1] - 1:+.1%}); goal: {want} in >= {need} of 20")
    return 0


def _pct(v) -> str:
    return "nothing" if v is None else f">={v * 100:.1f}%"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="how", required=True)
    r = sub.add_parser("real", help="run real A/B runs and compare them")
    r.add_argument("--runs", type=int, default=2, help="A/B runs per case")
    r.add_argument("--out", default=".local/ab-sens")
    r.add_argument("--backend", default="jax")
    r.add_argument("--device", default="local-cpu")
    r.add_argument("--quick", action="store_true")
    r.add_argument("--ab-mode", choices=("duet", "turns"), default="duet", help="bench run --ab-mode")
    r.add_argument("--workers", type=int, default=None, help="worker processes per side (bench run --workers)")
    s = sub.add_parser("simulate", help="draw A/B runs from the measured worker pairs")
    s.add_argument("--records", default=".local/ab-sens")
    s.add_argument("--trials", type=int, default=20)
    s.add_argument("--workers", type=int, default=None, help="pairs per simulated run (default: as measured)")
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--include-disturbed", action="store_true",
                   help="draw from pairs with a worker flagged disturbed too (say so when reporting)")
    a = p.parse_args()
    return real(a) if a.how == "real" else simulate(a)


if __name__ == "__main__":
    raise SystemExit(main())
