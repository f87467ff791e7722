"""What the spread goal's extra repeats buy: kept records in, headline spreads and seconds out.

    .venv/bin/python studies/bench_extra_repeats.py .local/stab-t125      # 5 invocations kept by bench_stability
    .venv/bin/python studies/bench_extra_repeats.py /tmp/nightly4 --repeats 7

A worker whose clean repeats disagree by more than `harness.spread_goal` times
more repeats (bench/measure/harness.py). This reads records made with the goal
on and asks, per backend and (model, mode):

- how far the headlines of separate invocations spread (largest distance from
  their median) as recorded, and had each worker stopped at its first
  `--repeats` kept repeats (the median of those as its figure, the median of
  the clean workers as the headline, as bench/measure/estimate.py does);
- how many seconds of each run's timed repeats went to repeats past the first
  `--repeats` (a worker's timed window, shared out by repeat count), against
  the run's wall time.

Latency rounds are left out: their headline is a p50 over every call, not a
median of repeats. Not a test: the numbers are this machine's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_stability import clean_workers, load_records, wall_seconds  # noqa: E402
from bench.measure.estimate import spread  # noqa: E402


def first_n_headline(result: dict, n: int) -> float:
    """The headline had every worker kept only its first `n` repeats."""
    return statistics.median(statistics.median(w["samples"][:n]) for w in clean_workers(result))


def extra_seconds(result: dict, n: int) -> tuple[float, float]:
    """(timed seconds, of them in repeats past the first n) over the result's ok workers."""
    timed = extra = 0.0
    for w in result.get("workers", []):
        if w["status"] != "ok" or not w.get("timed_window") or not w["samples"]:
            continue
        seconds, count = w["timed_window"][1] - w["timed_window"][0], len(w["samples"])
        timed += seconds
        extra += seconds * max(0, count - n) / count
    return timed, extra


def throughput(record: dict) -> dict[tuple[str, str], dict]:
    return {(r["model"], r["mode"]): r for r in record["results"]
            if r["status"] == "ok" and r["mode"] != "latency" and r.get("workers")}


def report(by_backend: dict[str, list[dict]], n: int) -> list[str]:
    lines, all_extra, all_wall = [], 0.0, 0.0
    for backend, records in by_backend.items():
        runs = [throughput(d) for d in records]
        if len(runs) >= 2:
            for key in runs[0]:
                rs = [r[key] for r in runs if key in r]
                lines.append(f"{backend} {'/'.join(key)}: headline ±{100 * spread([r['value'] for r in rs]):.1f}% "
                             f"as recorded, ±{100 * spread([first_n_headline(r, n) for r in rs]):.1f}% "
                             f"with the first {n} repeats")
        timed = extra = 0.0
        for run in runs:
            for r in run.values():
                t, e = extra_seconds(r, n)
                timed, extra = timed + t, extra + e
        wall = sum(wall_seconds(d) for d in records)
        all_extra, all_wall = all_extra + extra, all_wall + wall
        lines.append(f"{backend}: per run {timed / len(records):.0f} s timed, {extra / len(records):.0f} s of it "
                     f"past the first {n} repeats, wall {wall / len(records):.0f} s")
    if all_wall:
        lines.append(f"all: {all_extra:.0f} s past the first {n} repeats = {100 * all_extra / all_wall:.0f} % "
                     f"of {all_wall:.0f} s wall")
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folders", nargs="+", type=Path, help="folders of kept run records")
    p.add_argument("--repeats", type=int, default=7, help="the repeats a worker wants (harness.repeats)")
    args = p.parse_args(argv)
    by_backend = load_records(args.folders)
    if not by_backend:
        print(f"bench_extra_repeats: no records in {', '.join(map(str, args.folders))}", file=sys.stderr)
        return 1
    print("\n".join(report(by_backend, args.repeats)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
