#!/usr/bin/env python3
"""How noisy may a pair be for the confirm loop to meet issue 53's goals, by plan?

    .venv/bin/python studies/confirm_plan.py [--trials 40] [--noise 0.02 0.03 0.04 0.05 0.06 0.083]
                                             [--seconds-per-pair 17] [--budget-minutes 20]

Simulated pairs, drawn by tests/test_confirm.py's source: B = A x (1 + effect),
a host drift shared by both sides and each side's own log-normal noise, so
a pair's log ratio moves by `noise`; the labels are the effects the pairs
were built with. For each noise and plan, the confirm loop
(bench.compare.confirm.run) runs `trials` times on a 3 % slowdown and on
identical builds, on a made-up clock at --seconds-per-pair (17 s: the real
trials' pace here) under the job's --budget-minutes (0: none); printed: DIFFERENT / SAME / UNKNOWN counts and the mean
pairs used. The goals: 3 % DIFFERENT in >= 19 of 20 (95 %), identical SAME
in >= 19 of 20 and DIFFERENT in at most 1. 8.3 % is what a pair moved in the
one identical trial on real builds here (docs/measurements.md).
Pure arithmetic: the numbers do not depend on the machine.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.compare import confirm  # noqa: E402
from tests.test_confirm import source  # noqa: E402  (the tests' pairs: one way to make them)

PLANS = {"8 + 4 up to 40 (before)": dict(step=4, max_pairs=40), "8 + 8 up to 64": dict(step=8, max_pairs=64),
         "8 + 8 up to 72": dict(step=8, max_pairs=72)}


def pairs(effect: float, noise: float, seed: int, clock: list, per_pair: float):
    """tests/test_confirm.py's pair source, its pairs paid for on `clock` at `per_pair` seconds each."""
    draw = source(effect, noise, seed)

    def paced(k):
        clock[0] += per_pair * k
        return draw(k)
    return paced


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--trials", type=int, default=40)
    p.add_argument("--noise", type=float, nargs="+", default=[0.02, 0.03, 0.04, 0.05, 0.06, 0.083])
    p.add_argument("--seconds-per-pair", type=float, default=17.0)
    p.add_argument("--budget-minutes", type=float, default=20.0)
    a = p.parse_args()
    budget = a.budget_minutes * 60 if a.budget_minutes > 0 else None
    print(f"# {a.seconds_per_pair:g} s a pair, budget {a.budget_minutes:g} min")
    print("| pair noise | plan | 3 % slower: D / S / U, mean pairs | identical: D / S / U, mean pairs |")
    print("| --- | --- | --- | --- |")
    for noise in a.noise:
        for name, given in PLANS.items():
            plan = confirm.Plan(first=8, budget_s=budget, **given)
            cells = []
            for effect in (-0.03, 0.0):
                outs = []
                for seed in range(a.trials):
                    now = [0.0]
                    outs.append(confirm.run(pairs(effect, noise, seed, now, a.seconds_per_pair), plan, "bigger",
                                            clock=lambda now=now: now[0]))
                n = {x: sum(o.answer == x for o in outs) for x in confirm.ANSWERS}
                cells.append(f"{n['DIFFERENT']} / {n['SAME']} / {n['UNKNOWN']}, "
                             f"{sum(o.pairs for o in outs) / len(outs):.0f}")
            print(f"| {noise * 100:.1f} % | {name} | {cells[0]} | {cells[1]} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
