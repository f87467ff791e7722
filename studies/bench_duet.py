#!/usr/bin/env python3
"""Duet or turns? How an A/B pair of workers should run on a noisy VM (issue 10).

Today `bench run --ab` runs A's worker, then B's (turns): each pair is ~2 x 10 s
apart, and this VM's speed moves by 10-30 % over seconds, so the pair's ratio
carries that drift. "Duet benchmarking" (Bulej et al., ICPE 2020) runs A and B
at the same time, each on its own core, so both see the same host state. This
script measures both ways on the same worker code:

    .venv/bin/python studies/bench_duet.py --rounds 8 [--backend jax] [--model mlp --mode train] [--wider]

Each round runs one pair in turns and one pair as a duet (the order of the two
ways and which side gets CPU 0 alternate by round). All workers do the same
fixed work (steps calibrated once). --wider makes B the test-only MLP with
+9.9 % work (studies/bench_ab_sensitivity.py's sitecustomize). Prints each
way's log-ratio mean and spread (sd), and the smallest change a paired t-test
over 5 and 10 such pairs could call at alpha 0.05.

Internals it pins (a change to them must keep this study running): bench.commands.run._spec (a benchmark's Spec as `bench run` builds it).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import threading
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "studies"))

from scipy.special import stdtrit  # noqa: E402

from bench import config  # noqa: E402
from bench.commands.run import _spec  # noqa: E402
from bench.measure import pool, schedule  # noqa: E402
from bench.measure.harness import Protocol  # noqa: E402
from bench_ab_sensitivity import make_b_python  # noqa: E402


def worker(python: str, spec, cpus, side: str, out: dict) -> None:
    task = schedule.Task(side, 0, ((spec.model, spec.mode),))
    done = pool.spawn_worker(task, [spec], timeout=600, python=python, cpus=cpus).payloads()
    result = next(iter(done.values()))["payload"]["result"] if done else {}
    out[side] = result


def value(result: dict) -> float:
    if result.get("status") != "ok":
        raise SystemExit(f"worker failed: {result.get('error')}")
    return result["value"]


def turns(pythons: dict, spec) -> tuple[float, float]:
    out: dict = {}
    for side in ("a", "b"):
        worker(pythons[side], spec, None, side, out)
    return value(out["a"]), value(out["b"])


def duet(pythons: dict, spec, flip: bool) -> tuple[float, float]:
    out: dict = {}
    cpus = {"a": [1 if flip else 0], "b": [0 if flip else 1]}
    threads = [threading.Thread(target=worker, args=(pythons[s], spec, cpus[s], s, out)) for s in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return value(out["a"]), value(out["b"])


def detectable(sd: float, n: int, alpha: float = 0.05) -> float:
    """Smallest |mean log ratio| a paired t-test over n pairs calls at alpha."""
    return float(stdtrit(n - 1, 1 - alpha / 2)) * sd / math.sqrt(n)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument("--backend", default="jax")
    p.add_argument("--device", default="local-cpu")
    p.add_argument("--model", default="mlp")
    p.add_argument("--mode", default="train")
    p.add_argument("--wider", action="store_true", help="B: the test-only MLP with +9.9 %% work")
    a = p.parse_args()
    cfg = config.load()
    device = replace(cfg.device(a.device), threads=1)  # one core per side in a duet
    spec = _spec(cfg.backend(a.backend), device, a.model, a.mode, cfg, Protocol.from_config(cfg.harness, False))
    with tempfile.TemporaryDirectory(prefix="duet-") as tmp:
        pythons = {"a": sys.executable, "b": str(make_b_python(Path(tmp), widen=a.wider))}
        first: dict = {}
        worker(pythons["a"], spec, None, "a", first)
        spec = replace(spec, steps=first["a"]["steps_per_call"])
        print(f"fixed work: {spec.steps} steps per call; B is {'wider (+9.9 % work)' if a.wider else 'identical'}")
        ratios: dict[str, list[float]] = {"turns": [], "duet": []}
        for r in range(a.rounds):
            ways = ("turns", "duet") if r % 2 == 0 else ("duet", "turns")
            for way in ways:
                va, vb = turns(pythons, spec) if way == "turns" else duet(pythons, spec, flip=r % 2 == 1)
                ratios[way].append(math.log(vb / va))
                print(f"round {r + 1} {way:5s}: A {va:10,.0f}  B {vb:10,.0f}  B/A {vb / va - 1:+6.1%}", flush=True)
    for way, lr in ratios.items():
        sd = statistics.stdev(lr)
        print(f"{way:5s}: mean B/A {math.exp(statistics.mean(lr)) - 1:+.1%}, sd of log ratio {sd:.1%}, "
              f"a paired t-test sees >= {detectable(sd, 5):.1%} with 5 pairs, >= {detectable(sd, 10):.1%} with 10")
    return 0


if __name__ == "__main__":
    sys.exit(main())
