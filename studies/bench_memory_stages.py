#!/usr/bin/env python3
"""Where a benchmark's peak memory grows: each worker's RSS after every stage and call (issue 13)

    .venv/bin/python studies/bench_memory_stages.py [--backend torch] [--models cnn] [--modes predict] [--workers 6] [--keep FILE]
    .venv/bin/python studies/bench_memory_stages.py --from FILE
    .venv/bin/python studies/bench_memory_stages.py --from FILE --speed DIR   # heap growth against speed

Runs `bench run` with $BENCH_MEMORY_TRACE set (bench/measure/usage.py trace:
each worker appends its RssAnon, RssFile, VmHWM and thread count after the
benchmark's peak is reset, the build, the first (compiling) call, the quality
gate, every call through the harness (warm-up, calibration, timed repeats) and
the timed-result check), then prints, per benchmark and worker process,
RssAnon at each stage in MiB, what the calls added and the peak (VmHWM) at the
end; and per stage the range over the workers, so the stage where the workers
part is the first with a wide range. Latency benchmarks log the reset and the
build only. About 2-3 minutes for one benchmark in 6 workers here.

Found with it (a temporary patch of the same trace, before this script):
- workers v5: torch cnn/train's gate predicted the 360 held-out digits in one
  batch, which grew the heap 3-31 MiB, a different amount in each process;
- 2026-12-05, torch cnn/predict (`--backend torch --models cnn --modes predict`,
  three runs of 6 workers): RssAnon 350 MiB at the reset, 490 after the build,
  498-507 after the first call and 507 after the gate in every worker; then in
  some processes the heap jumps during the timed calls, at a different call and
  by a different amount (one worker: 507, 507, 520, 552, 552, 557 MiB over its
  first six calls; others stay at 507-511; at the end 507-756 MiB), two threads
  throughout. glibc's arenas limited to one (MALLOC_ARENA_MAX=1): 510-683 MiB,
  no narrower. That jump is what moves the least peak of torch cnn/predict.
  Ruled out since, with this script: a gc.collect() before every call (510-579
  MiB after the calls). Without the harness at all (a plain loop of 10 identical
  `model.predict` calls on 16,128 digits, one thread, glibc's thresholds as the
  workers have them), RssAnon after the tenth call read 425-570 MiB over 8
  processes; with ASLR off and PYTHONHASHSEED=0 (`setarch -R`), 4 of 6
  processes read the very same 481 MiB, the other two 428 and 447 (a thread that
  comes and goes inside predict). In the workers the same two settings made 3
  of 6 read the same 578 MiB and raised the least peak to 730 MiB (709 without).
  So the jump is the address-space layout and hash order of each process (and
  that passing thread), inside Keras/torch's predict, not the harness.
- 2026-12-06, what the jump is: glibc's heap, fragmented. glibc's own counters
  (mallinfo2, read after each of 8 plain `model.predict` calls in 3 processes)
  held the bytes in use at 170 MiB in every process and call while the heap
  grew to 192, 230 and 304 MiB, its free space 22, 60 and 134 MiB. With
  glibc's per-thread cache of small freed blocks off
  (GLIBC_TUNABLES=glibc.malloc.tcache_count=0: a cached block stays "in use" to
  the heap, so the big free blocks around it cannot merge) five processes in
  turns with five as before: 187-193 MiB against 192-480 MiB. And the workers
  whose heap grew ran slower: --speed over the 25 torch cnn/predict workers of
  5 nightly invocations (`studies/bench_stability.py --full --backends jax,torch
  --runs 5 --keep DIR` with BENCH_MEMORY_TRACE set, 2026-12-06 01:20-01:54 UTC)
  gives Spearman's rho -0.46 (p 0.022) between the growth over the timed calls
  and the worker's median repeat: the half that grew 30-258 MiB read
  15.6-19.4k samples/s, the half that grew 1-12 MiB 17.5-21.2k. Workers v8 turns the
  cache off (benchmarks.yaml harness.malloc_tcache_count).

--speed DIR pairs each traced worker with its figure in the records of the
same runs (bench_stability.py's --keep folder): the trace and the records list
a benchmark's workers in the order they ran (runs in their start order,
workers one after another; a run with --ab runs two at once and does not pair).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.measure.usage import TRACE_VAR  # noqa: E402

STAGES = ("reset", "build", "compile", "gate", "calls", "verify")


@dataclass
class Worker:
    """One benchmark in one worker process: RssAnon (kB) per stage, the calls' RssAnon, the last VmHWM."""

    pid: str
    bench: str
    anon: dict[str, int] = field(default_factory=dict)
    calls: list[int] = field(default_factory=list)
    peak: int = 0
    threads: set[int] = field(default_factory=set)


def parse(lines: list[str], source: str = "trace") -> list[Worker]:
    """Trace lines "pid tag RssAnon RssFile VmHWM Threads" -> one Worker per
    benchmark a process ran (a "reset:model/mode" line starts one). A line
    that does not read is named and skipped."""
    open_: dict[str, Worker] = {}
    out: list[Worker] = []
    for n, line in enumerate(lines, 1):
        parts = line.split()
        try:
            pid, tag, anon, _file, hwm, threads = parts[0], parts[1], *map(int, parts[2:6])
        except (ValueError, IndexError):
            print(f"{source}:{n}: not a trace line (pid tag RssAnon RssFile VmHWM Threads): {line.strip()!r}",
                  file=sys.stderr)
            continue
        if tag.startswith("reset:"):
            open_[pid] = Worker(pid, tag.split(":", 1)[1])
            out.append(open_[pid])
        w = open_.get(pid)
        if w is None:
            continue
        stage = tag.split(":", 1)[0]
        if stage == "call":
            w.calls.append(anon)
        else:
            w.anon[stage] = anon
        w.peak = hwm
        w.threads.add(threads)
    for w in out:
        if w.calls:
            w.anon["calls"] = w.calls[-1]
    return out


def mib(kb: int) -> str:
    return f"{kb / 1024:.0f}"


def report(workers: list[Worker]) -> list[str]:
    lines = []
    for bench in sorted({w.bench for w in workers}):
        group = [w for w in workers if w.bench == bench]
        lines.append(f"{bench}: RssAnon MiB after each stage; calls: first -> last call; peak: VmHWM")
        for w in group:
            stages = "  ".join(f"calls {mib(w.calls[0])} -> {mib(w.calls[-1])} ({len(w.calls)})" if s == "calls"
                               else f"{s} {mib(w.anon[s])}" for s in STAGES if s in w.anon)
            threads = "-".join(dict.fromkeys(str(t) for t in (min(w.threads), max(w.threads))))
            lines.append(f"  {w.pid}: {stages}  peak {mib(w.peak)}  threads {threads}")
        for s in STAGES:
            got = [w.anon[s] for w in group if s in w.anon]
            if got:
                lines.append(f"  {s:<8} {mib(min(got))}-{mib(max(got))} MiB over {len(got)} workers")
        peaks = [w.peak for w in group]
        lines.append(f"  peak     {mib(min(peaks))}-{mib(max(peaks))} MiB")
    return lines


def record_workers(folder: Path) -> dict[str, list[tuple[str, float]]]:
    """Each train/predict benchmark's workers as (backend, median repeat in samples/s)
    over the kept records in `folder`, in the order they ran: records by their run's
    start, then each record's workers as listed (an A/B calibration entry left out)."""
    records = []
    for path in sorted(folder.glob("*.json")):
        try:
            records.append(json.loads(path.read_text()))
        except (OSError, ValueError) as e:
            print(f"{path}: skipped, not a record ({e})", file=sys.stderr)
    records.sort(key=lambda r: str(r.get("run", {}).get("started_at", "")))
    out: dict[str, list[tuple[str, float]]] = {}
    for rec in records:
        for res in rec.get("results", []):
            if res.get("mode") in ("train", "predict"):
                out.setdefault(f"{res['model']}/{res['mode']}", []).extend(
                    (str(rec.get("target", {}).get("backend", "?")), statistics.median(w["samples"])) for w in res.get("workers", [])
                    if w.get("samples") and not w.get("calibration"))
    return out


def speed_lines(workers: list[Worker], speeds: dict[str, list[tuple[str, float]]]) -> list[str]:
    """Per backend and benchmark, how the heap's growth over the timed calls (RssAnon
    after the last call against after the gate) goes with the worker's speed: Spearman's
    rho, and the speeds of the half that grew least and the half that grew most."""
    from scipy.stats import spearmanr

    lines = []
    for bench, figures in sorted(speeds.items()):
        traced = [w for w in workers if w.bench == bench and w.calls and "gate" in w.anon]
        if len(traced) != len(figures):
            lines.append(f"{bench}: {len(traced)} traced workers against {len(figures)} in the records; not paired")
            continue
        by_backend: dict[str, list[tuple[float, float]]] = {}
        for w, (backend, figure) in zip(traced, figures):
            by_backend.setdefault(backend, []).append(((w.calls[-1] - w.anon["gate"]) / 1024, figure))
        for backend, pairs in sorted(by_backend.items()):
            if len(pairs) < 4:
                lines.append(f"{backend} {bench}: {len(pairs)} workers; too few to pair")
                continue
            rho, p = spearmanr(*zip(*pairs))
            ranked = sorted(pairs)
            low, high = ranked[:len(ranked) // 2], ranked[len(ranked) - len(ranked) // 2:]
            lines.append(f"{backend} {bench}: {len(pairs)} workers, heap growth over the timed calls against "
                         f"speed: Spearman's rho {rho:+.2f} (p {p:.3f}); grew {low[0][0]:.0f}-{low[-1][0]:.0f} MiB: "
                         f"{_k(low)} samples/s; grew {high[0][0]:.0f}-{high[-1][0]:.0f} MiB: {_k(high)}")
    return lines


def _k(pairs) -> str:
    v = [f for _, f in pairs]
    return f"{min(v) / 1e3:.1f}-{max(v) / 1e3:.1f}k"


def run(args, trace: Path) -> None:
    """One `bench run` with the trace on; its records go to a temporary folder."""
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-m", "bench", "run", "--backend", args.backend, "--models", args.models,
               "--modes", args.modes, "--workers", str(args.workers), "--out", out]
        print("running:", " ".join(cmd[1:]), file=sys.stderr, flush=True)
        proc = subprocess.run(cmd, cwd=REPO, env={**os.environ, TRACE_VAR: str(trace)})
        if proc.returncode != 0:
            raise SystemExit(f"bench run failed (exit {proc.returncode}); the trace so far is in {trace}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="torch")
    p.add_argument("--models", default="cnn")
    p.add_argument("--modes", default="predict")
    p.add_argument("--workers", type=int, default=6)
    p.add_argument("--keep", type=Path, help="write the trace here (default: a temporary file)")
    p.add_argument("--from", dest="source", type=Path, metavar="FILE", help="report a kept trace, run nothing")
    p.add_argument("--speed", type=Path, metavar="DIR",
                   help="with --from: the records of the traced runs; heap growth against each worker's speed")
    args = p.parse_args(argv)
    if args.speed and not args.source:
        raise SystemExit("--speed DIR: give the trace of the same runs with --from FILE")
    if args.speed and not args.speed.is_dir():
        raise SystemExit(f"--speed {args.speed}: no such folder of records")
    if args.source:
        trace = args.source
        if not trace.is_file():
            raise SystemExit(f"--from {trace}: no such trace file")
    else:
        trace = args.keep or Path(tempfile.mkstemp(prefix="memory-trace-", suffix=".txt")[1])
        trace.parent.mkdir(parents=True, exist_ok=True)
        trace.write_text("")
        run(args, trace)
    workers = parse(trace.read_text().splitlines(), str(trace))
    if not workers:
        raise SystemExit(f"{trace}: no worker traced a benchmark (was {TRACE_VAR} passed to the workers?)")
    print("\n".join(report(workers)))
    if args.speed:
        print("\n".join(speed_lines(workers, record_workers(args.speed))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
