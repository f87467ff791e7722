#!/usr/bin/env python3
"""Does vs-native follow the host, and would taking the native side's own time
out of it hold it stiller (issue 56)?

    .venv/bin/python studies/native_adjust.py .local/native [.local/native-2 ...]
    .venv/bin/python studies/native_adjust.py --slope 0.6 .local/native-2    # b taken from another set

Each folder is a set kept by `studies/bench_native.py --keep`: run-NN/ clean
invocations, inject-F-NN/ with Keras's steps made F slower, control-NN/ under
the injection's code at 0. Per set and benchmark it reads, per invocation,
the vs-native ratio r (the record's `native.ratio`) and the native side's
time n (the median of its workers' timed native calls, `native_seconds`:
the same work every night, and no Keras code in it), and per worker pair
the same two.

Printed:
- the correlation of log r with log n over the clean invocations, and the
  slope b of log r on log n: how much of the host's speed the ratio keeps
  (0 would be a ratio that cancels the host);
- the same slope within invocations, from the workers (each invocation's
  mean taken out), which needs no other night;
- each clean invocation's ratio raw and adjusted, log r - b (log n - m),
  where b comes from the other clean invocations only (leave one out) and m
  is the median log n of the clean ones (an input of every invocation, not
  an outcome: it only sets where the adjusted values sit), and their spread
  (the largest distance from the median) and SD; with --slope B, b is B
  (fitted on another set: a held-out check);
- each injected or control invocation's move against the clean median, raw
  and adjusted with b and m from every clean invocation.

Not a test: the numbers depend on the machine and what else it ran. What
the adjustment would need in the product (b and m from a series' history,
and a backend upgrade, which moves n for its own reasons, kept apart) is
in docs/measurements.md ("vs-native follows the host").
"""

from __future__ import annotations

import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_native import read  # noqa: E402  (one reading of a kept invocation for both studies)


def invocation(folder: Path) -> dict:
    """{(backend, model, mode): {"r", "n", "workers": [(log r, log n)]}} of this build's records
    (bench_native.read's, those with a ratio and its workers' native times)."""
    return {key: {"r": math.log(got["ratio"]), "n": math.log(statistics.median(n for _, n in got["pairs"])),
                  "workers": [(math.log(r), math.log(n)) for r, n in got["pairs"]]}
            for key, got in read(folder).items() if got["ratio"] and got["pairs"]}


def slope(xs: list[float], ys: list[float]) -> float:
    return statistics.linear_regression(xs, ys).slope if len(set(xs)) > 1 else 0.0


def within_slope(clean: list[dict]) -> float:
    """The slope of a worker's log r on its log n, each invocation's means taken out."""
    xs, ys = [], []
    for inv in clean:
        mr = statistics.fmean(r for r, _ in inv["workers"])
        mn = statistics.fmean(n for _, n in inv["workers"])
        xs += [n - mn for _, n in inv["workers"]]
        ys += [r - mr for r, _ in inv["workers"]]
    return slope(xs, ys)


def adjusted(target: dict, others: list[dict], m: float, given: float | None = None) -> float:
    """target's log r less b (log n - m), b the slope fitted on `others` (target's own r is
    never in it), or `given`."""
    b = given if given is not None else slope([o["n"] for o in others], [o["r"] for o in others])
    return target["r"] - b * (target["n"] - m)


def spread(logs: list[float]) -> tuple[float, float]:
    """(largest distance from the median, SD), in %."""
    med = statistics.median(logs)
    return (max(abs(math.expm1(v - med)) for v in logs) * 100,
            statistics.stdev(logs) * 100 if len(logs) > 1 else float("nan"))


def report(folder: Path, given: float | None = None) -> None:
    clean = [(p.name, invocation(p)) for p in sorted(folder.glob("run-*"))]
    other = [(p.name, invocation(p)) for p in sorted(folder.glob("inject-*")) + sorted(folder.glob("control-*"))]
    keys = sorted({k for _, inv in clean for k in inv})
    print(f"\n{folder}: {len(clean)} clean invocations, {len(other)} injected or control")
    for key in keys:
        rows = [(name, inv[key]) for name, inv in clean if key in inv]
        if len(rows) < 4:
            print(f"  {'/'.join(key)}: {len(rows)} clean invocations; at least 4 are needed")
            continue
        xs, ys = [x["n"] for _, x in rows], [x["r"] for _, x in rows]
        raw, m = ys, statistics.median(xs)
        adj = [adjusted(x, [o for j, (_, o) in enumerate(rows) if j != i], m, given) for i, (_, x) in enumerate(rows)]
        print(f"  {'/'.join(key)}: corr(log r, log n) {statistics.correlation(xs, ys):+.2f}, "
              f"slope b {slope(xs, ys):+.2f} across invocations, {within_slope([x for _, x in rows]):+.2f} within")
        print(f"    clean, raw:      {' '.join(f'{math.exp(v):.3f}' for v in raw)}  "
              f"spread ±{spread(raw)[0]:.1f} %, SD {spread(raw)[1]:.1f} %")
        how = f"b = {given:+.2f} given" if given is not None else "b fitted"
        print(f"    clean, adjusted: {' '.join(f'{math.exp(v):.3f}' for v in adj)}  "
              f"spread ±{spread(adj)[0]:.1f} %, SD {spread(adj)[1]:.1f} % (leave one out, {how})")
        med_raw, all_clean = statistics.median(raw), [x for _, x in rows]
        med_adj = statistics.median(adjusted(x, all_clean, m, given) for x in all_clean)
        for name, inv in other:
            if key in inv:
                x = inv[key]
                print(f"    {name:<16} raw {math.expm1(x['r'] - med_raw):+.1%}, "
                      f"adjusted {math.expm1(adjusted(x, all_clean, m, given) - med_adj):+.1%} against the clean median")


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    given = None
    if argv[0] == "--slope":
        try:
            given = float(argv[1])
        except (IndexError, ValueError):
            print(f"native_adjust: --slope takes a number, e.g. --slope 0.6; got {argv[1:2]}", file=sys.stderr)
            return 2
        argv = argv[2:]
    if not argv:
        print("native_adjust: name at least one folder (studies/bench_native.py --keep DIR)", file=sys.stderr)
        return 2
    for arg in argv:
        folder = Path(arg)
        if not any(folder.glob("run-*")):
            print(f"native_adjust: {folder} holds no run-NN/ folder (studies/bench_native.py --keep DIR)",
                  file=sys.stderr)
            return 2
        report(folder, given)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
