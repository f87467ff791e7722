"""Stability of protocol 2: the same benchmark run in N separate `bench run` invocations.

    .venv/bin/python studies/bench_stability.py --full                   # jax and torch, 5 nightly runs each
    .venv/bin/python studies/bench_stability.py --backends jax --runs 3  # quick protocol
    .venv/bin/python studies/bench_stability.py --full --hog             # interference: a CPU hog mid-run
    .venv/bin/python studies/bench_stability.py --full --hog --pin       # ... with the workers on the hog's CPU
    .venv/bin/python studies/bench_stability.py --full --hog --quiet-after  # ... quiet, hogged, quiet again
    .venv/bin/python studies/bench_stability.py --full --keep DIR        # keep the records
    .venv/bin/python studies/bench_stability.py --from DIR               # the same report from kept records
    .venv/bin/python studies/bench_stability.py --estimators DIR DIR ... # each headline estimator over kept sets
    .venv/bin/python studies/bench_stability.py --workers-curve DIR ...  # the headline from 1, 2, ... of the kept workers
    .venv/bin/python studies/bench_stability.py --time-spread DIR ...    # ... from workers spread over the invocations
    .venv/bin/python studies/bench_stability.py --span-curve DIR ...     # ... from workers of 1, 2, 3 adjacent invocations
    .venv/bin/python studies/bench_stability.py --flags DIR ...          # which rule flagged which workers, and were they slow
    .venv/bin/python studies/bench_stability.py --full --canary-tolerance 1.25  # another slow-CPU rule
    .venv/bin/python studies/bench_stability.py --full --worker-cpus 0          # workers not pinned

Each run is a fresh `python -m bench run --backend B [--quick]` (protocol 2:
its own worker processes); the backends take turns, run by run. Prints each run's headline per (model, mode), their
median and spread (the largest distance of a run from the median; goal ±3 %,
must ±5 %), each run's wall time, and, computed from the same records' worker
figures, the spread every candidate headline estimator (bench/measure/estimate.py)
would have had, plus the reference workload (the workers' fastest canary) per
run, which shows the host's own drift.

--hog: for each backend one undisturbed run, then one with a busy process pinned
to CPU 0 from --hog-delay seconds after the start for --hog-seconds. Prints how
far each headline moved (goal < 3 %) and how many workers that ran at least
half of their timed repeats (`timed_window`) under the hog were flagged
`disturbed` (goal >= 95 %; the ones it only grazed are shown apart). Since the
two invocations differ by the host's drift as well, each benchmark also gets an
in-run line: the headline against the median of that run's workers the hog
never reached, and what the median of all first-round workers (no flags, no
reruns) would have moved; --quiet-after runs a second undisturbed invocation
after the hogged one and measures the move against both (their geometric
mean), which cancels a steady drift over the three. Not a test: the numbers depend on
the machine and on what else it is doing. With local-cpu's `threads: 1` and no
`cpus`, a one-thread worker simply runs on the other core while the hog holds
CPU 0 (measured: its CPU per wall second stays 0.99-1.01), so nothing is
disturbed; --pin runs with a copy of benchmarks.yaml whose local-cpu has
`cpus: [0]`, the hog's CPU, to see the flags on workers the hog does slow.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.measure import disturbance, estimate, lock, pool  # noqa: E402

HOG = "import os, sys, time\nos.sched_setaffinity(0, {0})\nend = time.time() + float(sys.argv[1])\nwhile time.time() < end: pass\n"


def one_run(backend: str, extra: list[str], keep: Path | None, started=lambda: None) -> tuple[dict, float]:
    """One `bench run`. This script takes the machine lock itself (so the wall
    time and a hog's start count from when the run may start) and gives the
    run a private lock file."""
    with tempfile.TemporaryDirectory() as out, \
            lock.held(lock.path(), lambda line: print(line, file=sys.stderr, flush=True), "bench_stability.py"):
        started()
        t0 = time.monotonic()
        env = {**os.environ, lock.ENV: str(Path(out) / "inner.lock")}
        proc = subprocess.run([sys.executable, "-m", "bench", "run", "--backend", backend,
                               "--out", out, *extra], cwd=REPO, capture_output=True, text=True, env=env)
        wall = time.monotonic() - t0
        if proc.returncode != 0:
            raise SystemExit(f"bench run --backend {backend} failed:\n{proc.stderr[-2000:]}")
        path = Path(proc.stdout.split()[0])
        if keep:
            keep.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, keep / path.name)
        data = json.loads(path.read_text())
    return ok_results(data), wall


def ok_results(record: dict) -> dict:
    """A run record's ok results by (model, mode)."""
    return {(r["model"], r["mode"]): r for r in record["results"] if r["status"] == "ok"}


def fmt(v: float) -> str:
    """samples/s as 80,512; a latency in ms as 0.2341."""
    return f"{v:,.0f}" if v >= 100 else f"{v:.4g}"


def ok_workers(r: dict) -> list[dict]:
    """The ok workers a headline may use (pool.counted: no calibration or leftover entries)."""
    return [w for w in pool.counted(r.get("workers", [])) if w["status"] == "ok"]


def clean_workers(r: dict) -> list[dict]:
    """The workers the headline came from (pool.clean)."""
    return pool.clean(ok_workers(r))


def worker_sets(rs: list[dict]) -> list[tuple[list[dict], str]]:
    """(clean workers, better) of each of a benchmark's results that has any."""
    return [(ws, r.get("better", "bigger")) for r in rs if (ws := clean_workers(r))]


def estimator_spreads(sets: list[tuple[list[dict], str]]) -> dict[str, float]:
    """Per estimator (bench/measure/estimate.py): the spread across runs of the
    headline it would have given from each run's clean workers."""
    return {how: estimate.spread([estimate.of_workers(ws, better, how) for ws, better in sets])
            for how in estimate.ESTIMATORS}


def report_stability(backend: str, runs: list[dict]) -> float:
    worst = 0.0
    print(f"\n{backend}: {'model/mode':<14} {'median':>10} {'spread':>7}  runs (headline)")
    for key in runs[0]:
        rs = [r[key] for r in runs if key in r]
        if len(rs) < 2:
            continue
        vals = [r["value"] for r in rs]
        s = estimate.spread(vals)
        worst = max(worst, s)
        print(f"{backend}: {'/'.join(key):<14} {fmt(statistics.median(vals)):>10} {100 * s:>6.1f}%  "
              + ", ".join(fmt(v) for v in vals))
        per = [f"{how} ±{100 * s:.1f}%" for how, s in estimator_spreads(worker_sets(rs)).items()]
        flagged = [r.get("disturbed_workers", 0) for r in rs]
        unstable = sum(bool(r.get("unstable")) for r in rs)
        print(f"{'':>{len(backend) + 2}}  estimators across runs: {', '.join(per)}; disturbed workers per run "
              f"{flagged}; unstable in {unstable}/{len(rs)} runs")
        extras = usage_spreads(rs)
        if extras:
            print(f"{'':>{len(backend) + 2}}  {extras}")
    return worst


def least_peak(r: dict) -> int | None:
    """The least host peak of the result's first-round workers (pool.memory_workers:
    what records report from 2026-12-04 on, run.protocol.memory "least"); None
    for workers without peaks."""
    ok = ok_workers(r)
    if not ok or not all(isinstance(w.get("host_peak_bytes"), int) for w in ok):
        return None
    return min(ok[i]["host_peak_bytes"] for i in pool.memory_workers(ok))


def usage_spreads(rs: list[dict]) -> str:
    """The spread across runs of the p99 (latency) and of the host peak memory, as
    recorded and as the least first-round worker's (so older records show both)."""
    parts = []
    p99 = [r["latency"]["p99_ms"] for r in rs if isinstance(r.get("latency"), dict) and r["latency"].get("p99_ms")]
    if len(p99) == len(rs):
        parts.append(f"p99 ±{100 * estimate.spread(p99):.1f}%")
    peaks = [r.get("memory", {}).get("host_peak_bytes") for r in rs]
    if all(isinstance(p, int) and p for p in peaks):
        parts.append(f"host peak memory ±{100 * estimate.spread(peaks):.1f}% ({statistics.median(peaks) / 2**20:.0f} MiB)")
    least = [least_peak(r) for r in rs]
    if all(least):
        parts.append(f"the least first-round worker's ±{100 * estimate.spread(least):.1f}%")
    return ", ".join(parts)


# The stability goal's must-have bar. A set whose reference workload itself moved
# further than this across its invocations measured the host, not the protocol:
# stab-50 (2026-12-06) read 2.28 ms in two invocations and 1.97-1.98 in the
# next three, and every jax throughput headline moved with it.
HOST_MOVE = 0.05


def reference_line(backend: str, runs: list[dict], label: str = "ms") -> str:
    """The reference workload per run, how far it moved (the headlines' spread
    measure), and, beyond HOST_MOVE, that the set cannot judge the protocol."""
    refs = references(runs)
    line = f"{backend}: reference workload per run ({label}): " + ", ".join(f"{x:.2f}" for x in refs)
    moved = host_moved(refs)
    if moved is not None:
        line += f"; ±{100 * moved:.1f}%"
        if moved > HOST_MOVE:
            line += (f": the host itself moved beyond ±{100 * HOST_MOVE:.0f} %, so these runs cannot show"
                     " the protocol's own stability")
    return line


def steady_line(backend: str, runs: list[dict]) -> str | None:
    """When the host moved beyond HOST_MOVE: each benchmark's spread over the runs
    whose reference workload read within HOST_MOVE of the set's fastest (picked by
    the reference workload alone, never by the headlines), and how many held
    +-5 % and +-3 % there. None when the host held still or too few runs are steady."""
    refs = references(runs)
    moved = host_moved(refs)
    if moved is None or moved <= HOST_MOVE:
        return None
    fastest = min(x for x in refs if not math.isnan(x))
    steady = [i for i, x in enumerate(refs) if x <= (1 + HOST_MOVE) * fastest]  # NaN compares False
    spreads = {}
    for key in runs[steady[0]]:
        vals = [runs[i][key]["value"] for i in steady if key in runs[i]]
        if len(vals) >= 2:
            spreads["/".join(key)] = estimate.spread(vals)
    if not spreads:  # (one steady run gives no spread)
        return None
    held = {goal: sum(s <= goal for s in spreads.values()) for goal in (0.05, 0.03)}
    return (f"{backend}: over the steady runs ({', '.join(str(i + 1) for i in steady)}; reference workload within "
            f"{100 * HOST_MOVE:.0f} % of the fastest): " + ", ".join(f"{k} ±{100 * s:.1f}%" for k, s in spreads.items())
            + f"; within ±5 %: {held[0.05]} of {len(spreads)}, ±3 %: {held[0.03]}")


def host_moved(refs: list[float]) -> float | None:
    """How far the runs' reference workloads lie from their median (estimate.spread);
    None with fewer than two known."""
    known = [x for x in refs if not math.isnan(x)]
    return estimate.spread(known) if len(known) >= 2 else None


def print_host(backend: str, runs: list[dict], label: str = "ms") -> None:
    """The host's lines under a backend's table: reference_line, and steady_line when it has one."""
    print(reference_line(backend, runs, label))
    steady = steady_line(backend, runs)
    if steady:
        print(steady)


def references(runs: list[dict]) -> list[float]:
    """Per run: the median over all workers of the reference workload (the fastest canary, ms)."""
    out = []
    for run in runs:
        refs = [w["reference_seconds"] for r in run.values() for w in r.get("workers", []) if "reference_seconds" in w]
        out.append(1000 * statistics.median(refs) if refs else float("nan"))
    return out


def config_variant(folder: Path, name: str, pattern: str, repl: str, what: str, base: Path | None = None) -> Path:
    """A copy of benchmarks.yaml (or of `base`), in `folder`, with exactly one
    match of `pattern` (multiline regex) replaced: one setting changed."""
    text, n = re.subn(pattern, repl, (base or REPO / "benchmarks.yaml").read_text(), flags=re.M)
    if n != 1:
        raise SystemExit(f"benchmarks.yaml: expected exactly one {what}")
    path = folder / name
    path.write_text(text)
    return path


def pinned_config(folder: Path, base: Path | None = None) -> Path:
    """benchmarks.yaml with `cpus: [0]` under local-cpu."""
    return config_variant(folder, "pinned.yaml", r"^(  local-cpu:\n)", r"\g<1>    cpus: [0]\n",
                          "`  local-cpu:` device to pin", base)


def worker_cpus_config(folder: Path, n: int, base: Path | None = None) -> Path:
    """benchmarks.yaml with local-cpu's `worker_cpus` set to n (0: the line removed, workers unpinned)."""
    repl = f"    worker_cpus: {n}\n" if n else ""
    return config_variant(folder, "worker-cpus.yaml", r"^    worker_cpus: \d+[^\n]*\n", repl,
                          "`    worker_cpus:` line (local-cpu)", base)


def tolerance_config(folder: Path, tolerance: float, base: Path | None = None) -> Path:
    """benchmarks.yaml with `harness.canary_tolerance` set (the throughput repeats' slow-CPU rule)."""
    return config_variant(folder, "tolerance.yaml", r"^(harness:\n)", rf"\g<1>  canary_tolerance: {tolerance}\n",
                          "`harness:` section", base)


def hog_run(backend: str, extra: list[str], delay: float, seconds: float, keep) -> tuple[dict, float, tuple]:
    window = []

    def start():
        window.append(time.time())
        subprocess.run([sys.executable, "-c", HOG, str(seconds)])
        window.append(time.time())

    timer = threading.Timer(delay, start)
    try:
        result, wall = one_run(backend, extra, keep, started=timer.start)
    finally:
        timer.cancel()
    if timer.is_alive():
        timer.join()
    return result, wall, tuple(window)


@dataclass(frozen=True)
class HogScore:
    """What one backend's hogged run shows (moves are fractions, largest over its benchmarks).

    between_runs: the headline against the quiet invocation's, or with --quiet-after the
    geometric mean of the quiet ones before and after (host drift between the invocations
    mixes in); in_run: against the median of the same run's clean workers, reruns
    too, whose timed repeats the hog never reached (the same machine state: 0 when every
    worker the hog reached was flagged, since the headline is then their median; what an
    unflagged hogged worker moved it by otherwise); unprotected: what the median of every
    first-round worker (no flags, no reruns) would have moved against those untouched ones."""

    between_runs: float = 0.0
    in_run: float = 0.0
    unprotected: float = 0.0
    overlapped: int = 0
    flagged: int = 0

    def __add__(self, other: "HogScore") -> "HogScore":
        return HogScore(max(self.between_runs, other.between_runs), max(self.in_run, other.in_run),
                        max(self.unprotected, other.unprotected), self.overlapped + other.overlapped,
                        self.flagged + other.flagged)


def report_hog(backend: str, quiet: dict, hogged: dict, window: tuple, after: dict | None = None) -> HogScore:
    """`quiet`: the undisturbed invocation before the hogged one; `after`, when
    run, the one after it: the move is then against the geometric mean of the
    two, so the host's drift over the three invocations, if steady, cancels."""
    score = HogScore()
    print(f"\n{backend}: hog on CPU 0 from {window[0]:.0f} to {window[1]:.0f} (unix s)")
    for key, r in hogged.items():
        if key not in quiet:
            continue
        before_value = quiet[key]["value"]
        after_value = after[key]["value"] if after is not None and key in after else None
        move = r["value"] / (before_value if after_value is None else math.sqrt(before_value * after_value)) - 1
        ok = [(w, hogged_share(w.get("timed_window") or w["window"], window)) for w in r["workers"]
              if w.get("window") and w["status"] == "ok"]
        shares = [(w, share) for w, share in ok if not w.get("rerun")]  # the first round
        hit = [w for w, share in shares if share >= 0.5]
        grazed = [w for w, share in shares if 0 < share < 0.5]
        # every clean worker, reruns too, whose timed repeats the hog never reached
        untouched = [w for w, share in ok if share == 0 and not w["disturbed"]]
        in_run = unprotected = 0.0
        if untouched:
            # the record's own estimator (its `estimator`; workers v9 on: the trimmed mean)
            how, better = r.get("estimator", "median"), r.get("better", "bigger")
            base = estimate.of_workers(untouched, better, how)
            in_run = r["value"] / base - 1
            unprotected = estimate.of_workers([w for w, _ in shares], better, how) / base - 1
        score += HogScore(abs(move), abs(in_run), abs(unprotected), len(hit), sum(w["disturbed"] for w in hit))
        quiet_text = (f"quiet {fmt(before_value):>10}" if after_value is None
                      else f"quiet {fmt(before_value)}, after {fmt(after_value)}")
        print(f"{backend}: {'/'.join(key):<14} {quiet_text}  hog {fmt(r['value']):>10}  "
              f"moved {100 * move:+.1f}%  workers under the hog {len(hit)}, flagged {sum(w['disturbed'] for w in hit)}"
              f"  (grazed {len(grazed)}, flagged {sum(w['disturbed'] for w in grazed)})")
        if untouched:
            print(f"{'':<{len(backend) + 16}} in the run: headline {100 * in_run:+.1f}% from the "
                  f"{len(untouched)} workers the hog never reached; without flags and reruns "
                  f"{100 * unprotected:+.1f}%")
    return score


def print_hog_score(score: HogScore) -> None:
    share = score.flagged / score.overlapped if score.overlapped else float("nan")
    print(f"\nlargest headline move under the hog (goal < 3 %): {100 * score.in_run:.1f}% against the "
          f"same run's untouched workers ({100 * score.unprotected:.1f}% without flags and reruns), "
          f"{100 * score.between_runs:.1f}% against the quiet invocations (host drift between runs "
          f"included; with --quiet-after, the geometric mean of the one before and the one after); "
          f"flagged {score.flagged} of {score.overlapped} workers at least half under the hog "
          f"({100 * share:.0f}%, goal >= 95 %)")


def hogged_share(worker: list, hog: tuple) -> float:
    """How much of a worker's timed repeats [start, end] (unix s; its
    `timed_window`, or its whole `window` in records from before it) the hog
    ran in.
    A worker counts as under the hog from half: one the hog only grazed (its
    last 8 s of 26, say) had most of its timed repeats undisturbed, and its
    median figure with them; the detector is right not to flag it, and
    counting it would score the detector on workers the hog did not slow."""
    overlap = min(worker[1], hog[1]) - max(worker[0], hog[0])
    return max(0.0, overlap) / max(worker[1] - worker[0], 1e-9)


def mode_seconds(records: list[dict]) -> dict[str, float]:
    """Seconds spent per mode, summed over every worker's `window` of every record
    (imports and compile included, the process start not)."""
    out: dict[str, float] = {}
    for d in records:
        for r in d["results"]:
            for w in r.get("workers", []):
                if w.get("window"):
                    out[r["mode"]] = out.get(r["mode"], 0.0) + w["window"][1] - w["window"][0]
    return out


def print_mode_time(backend: str, records: list[dict]) -> None:
    """What each mode costs, per run: issue 13's growth when latency rides along in the same workers."""
    per = {m: s / len(records) for m, s in mode_seconds(records).items()}
    shown = ", ".join(f"{m} {s:.0f}" for m, s in sorted(per.items()))
    rest = sum(s for m, s in per.items() if m != "latency")
    growth = f"; latency adds {100 * per['latency'] / rest:.0f} % to the rest" if "latency" in per and rest else ""
    print(f"{backend}: seconds in workers per run, by mode: {shown}{growth}")


def kept_sets_argument(parser: argparse.ArgumentParser) -> None:
    """The positional `folders` of the scripts that read kept sets."""
    parser.add_argument("folders", nargs="+", type=Path, help="kept sets (bench_stability.py --keep DIR)")


def not_folders(script: str, folders: list[Path]) -> bool:
    """True, after one line on stderr naming them, when any of `folders` is not a folder."""
    missing = [str(f) for f in folders if not f.is_dir()]
    if missing:
        print(f"{script}: not a folder: {', '.join(missing)}", file=sys.stderr)
    return bool(missing)


def load_records(folders: list[Path]) -> dict[str, list[dict]]:
    """Kept run records by backend, oldest first."""
    by_backend: dict[str, list] = {}
    for folder in folders:
        for path in sorted(folder.glob("*.json")):
            data = json.loads(path.read_text())
            by_backend.setdefault(data["target"]["backend"], []).append(data)
    for records in by_backend.values():
        records.sort(key=lambda d: d["run"]["started_at"])
    return by_backend


def wall_seconds(record: dict) -> float:
    """A record's wall time: finished_at - started_at."""
    from datetime import datetime

    start, end = (datetime.fromisoformat(record["run"][k].replace("Z", "+00:00")) for k in ("started_at", "finished_at"))
    return (end - start).total_seconds()


def from_records(folder: Path) -> int:
    """The stability report, plus each record's wall time, from kept records."""
    worst = 0.0
    for backend, records in load_records([folder]).items():
        runs = [ok_results(d) for d in records]
        walls = [wall_seconds(d) for d in records]
        print(f"{backend}: {len(records)} runs, wall per run (s): {', '.join(f'{w:.0f}' for w in walls)}")
        if len(runs) >= 2:
            worst = max(worst, report_stability(backend, runs))
            print_host(backend, runs)
        print_mode_time(backend, records)
    print(f"\nlargest spread: ±{100 * worst:.1f}% (goal ±3 %, must ±5 %)")
    return 0


def kept_workers(folders: list[Path]) -> Iterator[tuple[tuple[str, str, str], list[tuple[list[dict], str]]]]:
    """Each folder one set of kept invocations (a --keep): per (set, backend,
    benchmark) with clean workers in at least two invocations, yield
    ((backend, model, mode), [(its clean workers, better) per invocation, oldest first])."""
    for folder in folders:
        for backend, records in load_records([folder]).items():
            runs = [ok_results(d) for d in records]
            for key in sorted({k for run in runs for k in run}):
                sets = worker_sets([run[key] for run in runs if key in run])
                if len(sets) >= 2:
                    yield (backend, *key), sets


def estimator_table(folders: list[Path]) -> list[str]:
    """--estimators: each folder one set of kept invocations (a --keep). For
    every estimator (bench/measure/estimate.py) and kind of mode (throughput:
    train and predict; latency), over every (set, backend, benchmark): how many
    held their headline within ±5 % and ±3 % of the set's median across its
    invocations, the median and the worst spread, and how often each estimator
    was the tightest (ties count for each). How workers v6's and v7's headlines were chosen."""
    spreads: dict[tuple[str, str], list[float]] = {}
    for key, sets in kept_workers(folders):
        kind = "latency" if key[2] == "latency" else "throughput"
        for how, s in estimator_spreads(sets).items():
            spreads.setdefault((kind, how), []).append(s)
    lines = []
    for kind in ("throughput", "latency"):
        rows = {how: spreads[(kind, how)] for how in estimate.ESTIMATORS if (kind, how) in spreads}
        for how, s in rows.items():
            tightest = sum(all(s[i] <= other[i] for other in rows.values()) for i in range(len(s)))
            lines.append(f"{kind:<10} {how:<8} within ±5 %: {sum(x <= 0.05 for x in s)}/{len(s)}, "
                         f"±3 %: {sum(x <= 0.03 for x in s)}/{len(s)}; spread median ±{100 * statistics.median(s):.1f} %, "
                         f"worst ±{100 * max(s):.1f} %; the tightest in {tightest}")
    return lines


def workers_curve(folders: list[Path]) -> list[str]:
    """--workers-curve: each folder one set of kept invocations. For k = 1 up
    to the fewest clean workers a train or predict result has, the headline
    (estimate.HEADLINE) every k of them would have given, over every choice of
    k worker indices (the same indices in each invocation of a benchmark): how
    many (set, backend, benchmark, choice) held it within ±5 % and ±3 % of the
    set's median, and the median spread. Whether more workers a benchmark would
    buy stability, read from the workers already kept: the curve's slope at the
    nightly's count is what one more worker adds."""
    spreads: dict[int, list[float]] = {}
    for key, rs in kept_workers(folders):
        if key[2] == "latency":
            continue
        n = min(len(workers) for workers, _ in rs)
        for k in range(1, n + 1):
            for chosen in itertools.combinations(range(n), k):
                est = [estimate.of_workers([workers[i] for i in chosen], better) for workers, better in rs]
                spreads.setdefault(k, []).append(estimate.spread(est))
    return [f"{k} worker{'s' if k > 1 else ' '}  {tally(s)}" for k, s in sorted(spreads.items())]


def time_spread(folders: list[Path]) -> list[str]:
    """--time-spread: each folder one set of kept invocations. Would the headline
    hold stiller if a benchmark's workers ran further apart in time (the host's
    speed drifts over minutes, and one backend's run lasts a few)? For each
    train/predict benchmark with k = min(invocations, fewest clean workers) of
    at least 2: the headline (estimate.HEADLINE) of the first k workers of each
    of the first k invocations, as run, against k made-up headlines, the j-th
    taking worker (i + j) mod k of invocation i: as many workers, but each from
    another invocation, so spread over the whole set's half hour. If even that
    does not hold a benchmark within ±5 %, no schedule inside one nightly would.
    Per benchmark also how far apart one invocation's workers are (their own
    figures, each its median repeat, max/min - 1, in the median invocation)."""
    as_run: dict[tuple, list[float]] = {}
    spread_out: dict[tuple, list[float]] = {}
    gaps: dict[tuple, list[float]] = {}  # per invocation: apart() of its workers' figures
    for key, rs in kept_workers(folders):
        k = min(len(rs), *(len(workers) for workers, _ in rs))
        if key[2] == "latency" or k < 2:
            continue
        better = rs[0][1]
        as_run.setdefault(key, []).append(
            estimate.spread([estimate.of_workers(workers[:k], better) for workers, _ in rs[:k]]))
        spread_out.setdefault(key, []).append(
            estimate.spread([estimate.of_workers([rs[i][0][(i + j) % k] for i in range(k)], better)
                             for j in range(k)]))
        for workers, _ in rs:
            gap = apart([w["value"] for w in workers])
            if gap is not None:
                gaps.setdefault(key, []).append(gap)
    if not as_run:
        return ["no train or predict benchmark has clean workers in two invocations"]

    def every(d):
        return list(itertools.chain.from_iterable(d.values()))

    def misses(d, key):
        return f"{sum(x > 0.05 for x in d[key])}/{len(d[key])}"

    return ([f"{'as run':<24} {tally(every(as_run))}", f"{'spread over invocations':<24} {tally(every(spread_out))}",
             "outside ±5 % (sets), as run / spread over invocations; how far apart one invocation's workers are "
             "(their own figures, max/min - 1, the median invocation):"]
            + [f"  {key[0]} {key[1]}/{key[2]}: {misses(as_run, key)} / {misses(spread_out, key)}; "
               + (f"{100 * statistics.median(gaps[key]):.1f} % apart" if gaps.get(key) else "apart: no figure")
               for key in sorted(as_run)])


def span_curve(folders: list[Path]) -> list[str]:
    """--span-curve: each folder one set of kept invocations. What a nightly whose
    workers span longer would buy, short of --time-spread's whole half hour (a
    4-backend nightly whose backends took turns worker by worker would span
    about two jax+torch invocations of a set). Per train/predict benchmark with
    k = min(invocations, fewest clean workers) of at least 3, for s = 1 .. k - 1:
    k - s + 1 made-up headlines, the j-th taking worker w of invocation
    j + (w mod s), so each uses k workers from s adjacent invocations and no
    worker twice; against it, as run over each run of k - s + 1 adjacent
    invocations (as many headlines). Also how many minutes the made-up
    headlines' workers span (first timed repeat to last, the median)."""
    spans: dict[int, tuple[list[float], list[float], list[float]]] = {}
    for key, rs in kept_workers(folders):
        k = min(len(rs), *(len(workers) for workers, _ in rs))
        if key[2] == "latency" or k < 3:
            continue
        better = rs[0][1]
        for s in range(1, k):
            made, as_run, minutes = spans.setdefault(s, ([], [], []))
            chosen = [[rs[j + w % s][0][w] for w in range(k)] for j in range(k - s + 1)]
            made.append(estimate.spread([estimate.of_workers(ws, better) for ws in chosen]))
            as_run += [estimate.spread([estimate.of_workers(workers[:k], better) for workers, _ in rs[j:j + k - s + 1]])
                       for j in range(s)]
            windows = [[w["timed_window"] for w in ws if w.get("timed_window")] for ws in chosen]
            minutes += [(max(e for _, e in win) - min(b for b, _ in win)) / 60 for win in windows if win]
    if not spans:
        return ["no train or predict benchmark has clean workers in three invocations"]
    return [f"{s} invocation{'s' if s > 1 else ' '} ({f'{statistics.median(m):.1f}' if m else '?'} min)  "
            f"{tally(made)}  |  as run: {tally(as_run)}" for s, (made, as_run, m) in sorted(spans.items())]


def rules_of(why: str) -> list[str]:
    """The rules (disturbance.WHY's keys) a `disturbed_why` names (one or more, joined by '; ')."""
    parts = why.split("; ")
    return [rule for rule, words in disturbance.WHY.items() if any(part.startswith(words) for part in parts)]


def flag_table(folders: list[Path]) -> list[str]:
    """--flags: each folder a set of kept records. Per (set, backend, mode): how
    many first-round workers each rule flagged and how many reruns were flagged
    again; the least CPU share among a result's first-round workers as a
    fraction of its best one's (median and lowest over the results; an
    undisturbed set reads about 1.00); the flagged workers' figures over
    their result's clean workers' median, in the result's direction (above 1:
    slower, so the flag caught a real slowdown; about 1: a false alarm); and
    the missed ones: unflagged workers whose figure read MISSED_SLOW or more
    slower than that median (a slowdown no rule saw)."""
    out = []
    for folder in folders:
        tallies: dict[tuple[str, str], dict] = {}
        for backend, records in load_records([folder]).items():
            for r in (r for d in records for r in d["results"] if r["status"] == "ok"):
                key = (backend, r["mode"])
                if key not in tallies:
                    tallies[key] = {"first": 0, "reruns": 0, "again": 0, "shares": [], "slow": [], "missed": 0,
                                    **dict.fromkeys(disturbance.WHY, 0)}
                tally_flags(tallies[key], r)
        out += [flag_line(f"{folder.name} {backend} {mode}", t) for (backend, mode), t in sorted(tallies.items())]
    return out


def tally_flags(t: dict, r: dict) -> None:
    """Add one result's workers to its (backend, mode) tally (see flag_table)."""
    workers = ok_workers(r)
    first = [w for w in workers if not w.get("rerun")]
    t["first"] += len(first)
    t["reruns"] += len(workers) - len(first)
    t["again"] += sum(w["disturbed"] for w in workers if w.get("rerun"))
    for w in (w for w in first if w["disturbed"]):
        for rule in rules_of(w.get("disturbed_why", "")):
            t[rule] += 1
    shares = [w["disturbance"]["cpu_per_wall"] for w in first if (w.get("disturbance") or {}).get("cpu_per_wall")]
    if len(shares) >= 2:
        t["shares"].append(min(shares) / max(shares))
    clean = [w["value"] for w in workers if not w["disturbed"]]
    if clean:
        mid, bigger = statistics.median(clean), r.get("better", "bigger") == "bigger"
        t["slow"].extend(mid / w["value"] if bigger else w["value"] / mid
                         for w in workers if w["disturbed"] and w["value"])
        t["missed"] += sum((mid / w["value"] if bigger else w["value"] / mid) >= 1 + MISSED_SLOW
                           for w in workers if not w["disturbed"] and w["value"])


# An unflagged worker this much slower than its result's clean median is a
# disturbance the rules missed: a CPU hog on the workers' CPU halves a worker
# (0.5x), while undisturbed workers of one result lie within a few percent.
MISSED_SLOW = 0.10


def flag_line(name: str, t: dict) -> str:
    rules = ", ".join(f"{rule} {t[rule]}" for rule in disturbance.WHY if t[rule]) or "none"
    shares, slow = t["shares"], t["slow"]
    share = (f"least CPU share {statistics.median(shares):.2f}x the best (lowest {min(shares):.2f})"
             if shares else "no CPU share")
    slowed = (f"flagged figures {statistics.median(slow):.2f}x the clean median ({min(slow):.2f}-{max(slow):.2f})"
              if slow else "none flagged")
    return f"{name}: {t['first']} workers, flagged by {rules}; reruns {t['reruns']}, flagged again {t['again']}; " \
           f"{share}; {slowed}; unflagged {100 * MISSED_SLOW:.0f} % or more slower: {t['missed']}"


def apart(values: list[float]) -> float | None:
    """How far apart positive figures lie: max/min - 1 (a fraction); None for
    none, or for a broken record's 0, which would divide by zero."""
    return max(values) / min(values) - 1 if values and min(values) > 0 else None


def tally(spreads: list[float]) -> str:
    """How many spreads are within ±5 % (and its share) and ±3 %, and their median."""
    n, five = len(spreads), sum(x <= 0.05 for x in spreads)
    return (f"within ±5 %: {five}/{n} ({100 * five / n:.0f} %), ±3 %: {sum(x <= 0.03 for x in spreads)}/{n}; "
            f"spread median ±{100 * statistics.median(spreads):.1f} %")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backends", default="jax,torch")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--models", default=None)
    p.add_argument("--modes", default="train,predict")
    p.add_argument("--full", action="store_true", help="the nightly protocol instead of --quick")
    p.add_argument("--hog", action="store_true", help="interference: one quiet run and one with a CPU hog")
    p.add_argument("--pin", action="store_true", help="pin local-cpu's workers to CPU 0 (the hog's CPU)")
    p.add_argument("--hog-delay", type=float, default=20.0)
    p.add_argument("--hog-seconds", type=float, default=40.0)
    p.add_argument("--quiet-after", action="store_true",
                   help="with --hog: a quiet invocation after the hogged one too; moves against both")
    p.add_argument("--keep", type=Path, default=None, help="copy every record here")
    p.add_argument("--worker-cpus", type=int, default=None,
                   help="run with local-cpu's worker_cpus set to this (0: unpinned workers)")
    p.add_argument("--canary-tolerance", type=float, default=None,
                   help="run with this harness.canary_tolerance (a copy of benchmarks.yaml)")
    p.add_argument("--from", dest="source", type=Path, default=None,
                   help="report on records kept by an earlier --keep instead of running")
    p.add_argument("--estimators", nargs="+", type=Path, metavar="DIR",
                   help="compare the headline estimators over sets of kept records (one folder a set)")
    p.add_argument("--workers-curve", nargs="+", type=Path, metavar="DIR",
                   help="the headline's stability with 1, 2, ... of the kept workers (one folder a set)")
    p.add_argument("--time-spread", nargs="+", type=Path, metavar="DIR",
                   help="the headline's stability with each worker from another invocation (one folder a set)")
    p.add_argument("--span-curve", nargs="+", type=Path, metavar="DIR",
                   help="the headline's stability with the workers from 1, 2, ... adjacent invocations (one folder a set)")
    p.add_argument("--flags", nargs="+", type=Path, metavar="DIR",
                   help="which disturbance rule flagged which workers, and whether they were slow (one folder a set)")
    args = p.parse_args(argv)
    for option, table in (("estimators", estimator_table), ("workers_curve", workers_curve),
                          ("time_spread", time_spread), ("span_curve", span_curve), ("flags", flag_table)):
        folders = getattr(args, option)
        if folders:
            missing = [str(f) for f in folders if not f.is_dir()]
            if missing:
                raise SystemExit(f"--{option.replace('_', '-')}: no such folder: {', '.join(missing)}")
            print("\n".join(table(folders)))
            return 0
    if args.source:
        return from_records(args.source)
    extra = ([] if args.full else ["--quick"]) + (["--models", args.models] if args.models else []) \
        + (["--modes", args.modes] if args.modes else [])
    folder, variant = Path(tempfile.mkdtemp(prefix="bench-stability-")), None
    if args.pin:
        variant = pinned_config(folder)
    if args.canary_tolerance:
        variant = tolerance_config(folder, args.canary_tolerance, variant)
    if args.worker_cpus is not None:
        variant = worker_cpus_config(folder, args.worker_cpus, variant)
    if variant is not None:
        extra += ["--config", str(variant)]
    if args.hog:
        score = HogScore()
        for backend in args.backends.split(","):
            quiet, wall_q = one_run(backend, extra, args.keep)
            hogged, wall_h, window = hog_run(backend, extra, args.hog_delay, args.hog_seconds, args.keep)
            after, wall_a = one_run(backend, extra, args.keep) if args.quiet_after else (None, 0.0)
            print(f"{backend}: quiet run {wall_q:.0f} s, hog run {wall_h:.0f} s"
                  + (f", quiet run after {wall_a:.0f} s" if after is not None else ""))
            score += report_hog(backend, quiet, hogged, window, after)
        print_hog_score(score)
        return 0
    worst = 0.0
    backends = args.backends.split(",")
    by_backend: dict[str, list] = {b: [] for b in backends}
    # the backends take turns (jax, torch, jax, torch, ...) so the host's drift over
    # the hour lands on every backend alike instead of on whichever ran last
    for i in range(args.runs):
        for backend in backends:
            values, wall = one_run(backend, extra, args.keep)
            by_backend[backend].append(values)
            shown = "  ".join(f"{m}/{mode} {fmt(r['value'])}" for (m, mode), r in values.items())
            print(f"{backend} run {i + 1}: {shown}  (wall {wall:.0f} s)", flush=True)
    for backend, runs in by_backend.items():
        worst = max(worst, report_stability(backend, runs))
        print_host(backend, runs, "ms, the host's own speed")
    print(f"\nlargest spread: ±{100 * worst:.1f}% (goal ±3 %, must ±5 %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
