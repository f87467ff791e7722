"""Latency workers flagged by the canary alone: what if such a flag also needed the
worker to be slow? Recomputed from kept records, no new runs.

    .venv/bin/python studies/bench_latency_flags.py .local/stab-48 .local/stab-49 ...

A latency worker whose canary read slow in every round (`disturbed_why` the canary
rule's alone) is flagged and rerun (bench/measure/pool.py). On this VM most of
those workers timed as fast as their clean peers (`bench_stability.py --flags`),
so since workers v12 such a flag also needs the worker's figure 3 % worse than
theirs (disturbance.CANARY_SLOWER, chosen with this script); on v12 records "as
recorded" is that rule.
For each rule — as recorded, "flagged only when its p50 is also more than X times
the clean first-round workers' median", and no canary-only flags at all — this
prints how many first-round workers the rule flags, and how far each (set,
backend, model) latency headline moves across the set's invocations (goal ±3 %,
must ±5 %).

Each headline is recomputed as pool.py makes it: estimate.of_workers over the
clean workers. A worker the rule no longer flags counts as clean and its rerun is
dropped (it would not have run); reruns belong to the recorded flagged workers in
order. The recorded rule recomputes every recorded headline exactly (the script
says if one differs).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "studies"))  # bench_stability (which puts the repository on sys.path)

from bench_stability import kept_sets_argument, load_records, not_folders, ok_workers, rules_of  # noqa: E402

from bench.measure import estimate, pool  # noqa: E402

RULES = (None, 1.03, 1.05, 1.10, float("inf"))  # None: as recorded; inf: canary-only flags off


def canary_only(w: dict) -> bool:
    return bool(w.get("disturbed")) and rules_of(w.get("disturbed_why", "")) == ["canary"]


def rule_name(slower: float | None) -> str:
    if slower is None:
        return "as recorded"
    return "no canary-only flags" if slower == float("inf") else f"canary and p50 over {slower:.2f}x"


def headline(result: dict, slower: float | None) -> tuple[float, int]:
    """(the latency headline under the rule, how many first-round workers it flags)."""
    ok = ok_workers(result)
    first, reruns = [w for w in ok if not w.get("rerun")], [w for w in ok if w.get("rerun")]
    clean_values = [w["value"] for w in first if not w.get("disturbed")]
    centre = statistics.median(clean_values) if clean_values else None

    def flagged(w: dict) -> bool:
        if not w.get("disturbed"):
            return False
        if slower is None or not canary_only(w) or centre is None:
            return True
        return w["value"] > slower * centre

    recorded = [w for w in first if w.get("disturbed")]
    kept_reruns = [r for w, r in zip(recorded, reruns) if flagged(w)]
    clean = pool.clean([{**w, "disturbed": flagged(w)} for w in first + kept_reruns])
    return estimate.of_workers(clean, result.get("better", "smaller")), sum(map(flagged, first))


def latency_results(folder: Path):
    """(backend, model, result) of every ok latency result kept in the folder."""
    for backend, records in load_records([folder]).items():
        for r in (r for d in records for r in d["results"]):
            if r["mode"] == "latency" and r["status"] == "ok":
                yield backend, r["model"], r


def report(folders: list[Path]) -> list[str]:
    lines = []
    for slower in RULES:
        flags, spreads = 0, []
        for folder in folders:
            by: dict[tuple[str, str], list[float]] = {}
            for backend, model, r in latency_results(folder):
                value, n = headline(r, slower)
                if slower is None and abs(value / r["value"] - 1) > 1e-9:
                    lines.append(f"{folder.name} {backend} {model}: recomputed {value:.6g}, recorded {r['value']:.6g}")
                by.setdefault((backend, model), []).append(value)
                flags += n
            spreads += [estimate.spread(v) for v in by.values() if len(v) > 1]
        if not spreads:
            continue
        pct = sorted(s * 100 for s in spreads)
        lines.append(f"{rule_name(slower):<30} flags {flags:4}  within ±3 %: {sum(p <= 3 for p in pct)}/{len(pct)}  "
                     f"±5 %: {sum(p <= 5 for p in pct)}/{len(pct)}  median ±{statistics.median(pct):.1f} %  "
                     f"worst ±{pct[-1]:.1f} %")
    return lines or ["no latency results with two or more invocations in " + ", ".join(map(str, folders))]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    kept_sets_argument(p)
    args = p.parse_args(argv)
    if not_folders("bench_latency_flags", args.folders):
        return 2
    print("\n".join(report(args.folders)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
