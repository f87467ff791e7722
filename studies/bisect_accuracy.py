"""How often `bench bisect` finds the slow commit, and in how many probes.

    .venv/bin/python studies/bisect_accuracy.py [--runs 20] [--commits 64] [--noise 0.02]
                                                [--slowdown 0.10] [--pairs N]

Each run: a fresh stand-in history (tests/standin.py: a git repository of
`--commits` commits after good; one, at a seeded random position, makes the
package --slowdown slower and every later commit keeps it), then the real
bisect (bench.compare.bisect) with the fake A/B runner: each probe is the
confirm loop (bench.compare.confirm), adding worker pairs with Gaussian
--noise per figure until DIFFERENT or SAME, at most --pairs
(compare.min_change, compare.alpha from benchmarks.yaml). Prints each run and the totals; exits 1 when fewer than
19 of 20 (95 %) are right or any run takes more than 1 + ceil(log2 n) probes.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.compare import bisect as b  # noqa: E402
from bench.config import load  # noqa: E402
from bench.compare import confirm  # noqa: E402
from tests.standin import FakeRunner, make_history  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--commits", type=int, default=64)
    p.add_argument("--noise", type=float, default=0.02)
    p.add_argument("--slowdown", type=float, default=0.10)
    p.add_argument("--pairs", type=int, default=confirm.Plan().max_pairs,
                   help="the most worker pairs per probe (the confirm loop adds them until it decides; default: the plan's)")
    args = p.parse_args()
    settings = load().compare
    budget = 1 + math.ceil(math.log2(args.commits))
    right, most = 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.runs):
            slow = random.Random(seed).randint(1, args.commits)
            commits = make_history(Path(tmp) / f"r{seed}", args.commits, slow, 1 + args.slowdown)
            runner = FakeRunner(Path(tmp) / f"r{seed}", seed=seed, noise=args.noise, max_pairs=args.pairs,
                                settings=settings)
            state = b.State("standin/cpu/work/train", commits[0], commits[-1], tuple(commits[1:]))
            res = b.bisect(state, runner)
            found = commits.index(res.culprit.commit) if res.culprit else None
            ok = found == slow
            right += ok
            most = max(most, len(runner.calls))
            print(f"seed {seed:2d}: slow commit {slow:2d}, found {found}, {len(runner.calls)} probes"
                  f"{'' if ok else '  WRONG'}")
    print(f"{right}/{args.runs} right; at most {most} probes (budget {budget}); "
          f"{args.commits} commits, {args.slowdown:.0%} slowdown, {args.noise:.0%} noise per figure, "
          f"{args.pairs} pairs, min_change {settings.min_change:g}, alpha {settings.alpha:g}")
    return 0 if right >= 0.95 * args.runs and most <= budget else 1


if __name__ == "__main__":
    sys.exit(main())
