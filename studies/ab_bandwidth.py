#!/usr/bin/env python3
"""What a partner that uses more memory bandwidth does to its side of a pair (issue 53).

    .venv/bin/python studies/ab_bandwidth.py [--rounds 3] [--pairs 8] [--fraction 0.2] --out DIR
    .venv/bin/python studies/ab_bandwidth.py --smoke --out DIR    # it runs; it measures nothing

A duet pair runs A and B at once, one on each CPU, and the reference ratio
is B's speed over A's. That ratio says what B's change costs only when what
B does reaches B alone. Here A is this venv's python throughout, and B the
same python made slower per Keras step by the same FRACTION of its step's
own time, spent two ways (studies/ab_injection.py's step injection):

- "spin": on B's own CPU, which A does not share;
- "stream": copying through a 64 MiB buffer, a mebibyte at a time: memory
  traffic, which the two CPUs share;

and "identical": B unchanged. Each round runs the three in turn (the order
rotated each round), one `bench run --ab` of jax mlp/train with PAIRS
worker pairs each (bench.compare.bisect_probe.ABPairs, as the confirm job
runs them).

Printed per round and case: A's and B's median samples/s and the median of
the pairs' B/A. Then, over the rounds, A under "stream" against A under
"spin" of the same round: what B's memory traffic costs its partner, which
a ratio would read as B's change being smaller than it is. The labels come
only from how B is built. Exit 0; the numbers are the answer.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "studies"))

from ab_injection import SERIES, _environ, make_b_python  # noqa: E402  (the same injection)
from bench.compare.bisect_probe import ABPairs  # noqa: E402
from bench.measure import lock  # noqa: E402

CASES = ("identical", "spin", "stream")


def one_run(b_python: Path, out: Path, pairs: int, extra: tuple[str, ...]) -> dict:
    """One `bench run --ab` of `pairs` worker pairs: A's and B's median samples/s and the median B/A."""
    got = ABPairs(Path(sys.executable), b_python, SERIES, out, extra=extra)(pairs)
    if not got:
        return {"pairs": 0}
    return {"pairs": len(got), "a": statistics.median(a for a, _ in got),
            "b": statistics.median(b for _, b in got), "b_over_a": statistics.median(b / a for a, b in got)}


def summary(rounds: list[dict]) -> list[str]:
    """Over the rounds: each case's medians, and A beside a streaming partner against A beside a spinning one."""
    lines = []
    for case in CASES:
        runs = [r[case] for r in rounds if r[case].get("pairs")]
        if runs:
            lines.append(f"{case}: A {statistics.median(r['a'] for r in runs):,.0f} samples/s, "
                         f"B/A {statistics.median(r['b_over_a'] for r in runs):.3f} "
                         f"(rounds: {', '.join(format(r['b_over_a'], '.3f') for r in runs)})")
    for other in ("spin", "identical"):
        ratios = [r["stream"]["a"] / r[other]["a"] for r in rounds if r["stream"].get("pairs") and r[other].get("pairs")]
        if ratios:
            lines.append(f"A beside 'stream' / A beside '{other}', the same round: median "
                         f"{statistics.median(ratios):.3f} (rounds: {', '.join(format(x, '.3f') for x in ratios)})")
    return lines


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--pairs", type=int, default=8)
    p.add_argument("--fraction", type=float, default=0.2, help="B's added time per step, of its step's own (0.2)")
    p.add_argument("--out", required=True)
    p.add_argument("--smoke", action="store_true", help="1 round of 2 pairs of --quick workers: it runs, it measures nothing")
    a = p.parse_args()
    rounds_n, pairs, extra = (1, 2, ("--quick",)) if a.smoke else (a.rounds, a.pairs, ())
    out = Path(a.out)
    rounds: list[dict] = []
    say = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    with tempfile.TemporaryDirectory(prefix="ab-bandwidth-") as tmp:
        pythons = {case: make_b_python(Path(tmp) / case, "identical" if case == "identical" else
                                       ("step" if case == "spin" else "stream"), a.fraction) for case in CASES}
        inner = out / "inner.lock"
        out.mkdir(parents=True, exist_ok=True)
        with lock.held(lock.path(), say, "ab_bandwidth.py"), _environ(lock.ENV, str(inner)):
            for i in range(rounds_n):
                order = CASES[i % 3:] + CASES[:i % 3]
                got = {case: one_run(pythons[case], out / f"round-{i + 1}" / case, pairs, extra) for case in order}
                rounds.append(got)
                for case in CASES:
                    r = got[case]
                    print(f"round {i + 1} {case}: " + (f"{r['pairs']} pairs, A {r['a']:,.0f}, B {r['b']:,.0f} "
                                                       f"samples/s, B/A {r['b_over_a']:.3f}" if r["pairs"]
                                                       else "no pair where both workers were ok"), flush=True)
    for line in summary(rounds):
        print(line, flush=True)
    (out / "results.json").write_text(json.dumps({"fraction": a.fraction, "pairs": pairs, "rounds": rounds},
                                                 sort_keys=True, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
