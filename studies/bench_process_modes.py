#!/usr/bin/env python3
"""Where a benchmark's per-process speed comes from: the batches' addresses, the model's, the process's layout, its pages, its heap (issue 10)

    .venv/bin/python studies/bench_process_modes.py                  # torch cnn/predict, every check
    .venv/bin/python studies/bench_process_modes.py --checks layout --pairs 10
    .venv/bin/python studies/bench_process_modes.py --backend jax --model mlp --checks instances
    .venv/bin/python studies/bench_process_modes.py --checks hugepages --pairs 12
    .venv/bin/python studies/bench_process_modes.py --checks callbacks,tcache --pairs 8

torch cnn/predict's workers of one invocation read 15.9 % apart (their fastest
repeats, the median invocation over 13 kept sets; other jax and torch
benchmarks 3.3-12.0 %: `studies/bench_stability.py --time-spread`), so
whichever process runs fast sets the headline, and that benchmark missed ±5 %
across 5 invocations in every kept set. Each check
runs fresh processes set up as the workers are (the local-cpu device's
`threads`, the harness's glibc thresholds, pinned to one CPU) that time
`model.predict` on the benchmark's data, `--calls` calls of 140 batches:

- alignment: in one process, the batches Keras hands the backend (Keras's
  torch adapter fancy-indexes each out of the numpy input, a fresh malloc
  wherever the heap puts it, and torch wraps it without a copy) copied to a
  chosen address mod 4096 first, the offsets in turns. A spread between offsets
  would make the batch's address the mode.
- instances: in one process, four models built alike (their weights and
  buffers at different addresses), timed in turns. A spread between them would
  make the model's memory the mode.
- layout: processes in turns with the address-space layout randomised (as
  the workers run) and fixed (`setarch -R`, PYTHONHASHSEED=0). If the layout is
  the mode, the fixed processes agree with each other and the randomised do not.
- hugepages: processes in turns as the workers run and with their heap asked
  for transparent huge pages (HUGE_ENV: glibc's `glibc.malloc.hugetlb=1`, torch's
  THP_MEM_ALLOC_ENABLE; this VM's THP is `madvise`, so a process gets them only
  by asking). 4 KiB pages put a process's buffers at physical pages the kernel
  happens to hand out (their cache sets, and a two-level page walk under the
  hypervisor on every TLB miss); 2 MiB pages would make that the same in every
  process. If that were the mode, the huge processes would agree with each
  other, and each would match or beat the small one just before it.

Prints each process's figures and, per check, the spread that would point at
that cause. Not a test: these are timings on a host that drifts. About 15
minutes with the defaults here, 19 with --pairs 8 (the hugepages check alone:
about 6 with --pairs 12).

Measured (2026-12-05 16:12-16:28 UTC, `--pairs 8`, nothing else running):
every offset within ±1.6 % of its process's median (3 processes; the processes
6.3 % apart); four models in one process 3.3 % apart, the processes 3.9 %;
8 processes with the layout fixed 15.0 % apart (18.8k-21.6k samples/s) against
8 randomised ones 19.8 % (18.6k-22.3k), in turns. None of the three is the
mode: processes tens of seconds apart run at different speeds on this host.

Huge pages (2026-12-05 19:19-19:26 and 21:00-21:06 UTC, `--checks hugepages
--pairs 12`, nothing else running; the huge processes had 312-404 MiB in huge
pages against 128-130 MiB): the first time the small processes read 31.0 %
apart (one at 16.8k) and the huge ones 14.6 %, each huge one against the small
one before it a median +1.2 % (-8.0 to +21.7 %); the second time, on a quieter
host, the small ones 6.5 % apart and the huge ones 11.5 % (one at 20.3k),
the pairs a median -0.7 % (-8.2 to +6.8 %). Not the mode either, and no faster:
the workers keep 4 KiB pages.

Callbacks (2026-12-06 01:51-01:54 UTC, `--checks callbacks --pairs 8`, nothing
else running): the pool ran 1 thread in every call of every process; the async
processes 13.4 % apart, the sync ones 24.5 % (the last two pairs slow on both
sides); sync against the async one before it a median +3.7 % (-9.7 to +14.2 %);
RssAnon after the calls 505-668 MiB async, 505-591 sync: the heap grew with
and without the thread. Not the mode. Run again with NUMPY_MADVISE_HUGEPAGE=0
in the environment (`--pairs 5`, 01:55-01:57): AnonHugePages 0 MiB in every
process (numpy madvises its big arrays), RssAnon 505-686 and 505-700 MiB: not
numpy's huge pages either.

Tcache (2026-12-06 02:39-02:42 UTC, `--checks tcache --pairs 6`): glibc's heap
after the calls 188-342 MiB cached, 188-194 MiB uncached, 171 MiB in use in
every process; the peaks 748-907 against 748-758 MiB. That is the heap's
growth, and workers v8 runs uncached. The speeds in turns said little (cached
14.3 % apart, uncached 26.6 % on a host sliding from 21.0k to 16.6k over the
2.5 minutes; pairs a median -3.1 %, -10.6 to +7.3 %); a duet, which sees one
moment of the host for both sides, did: docs/measurements.md, "The allocator".

Internals it pins (a change to them must keep this study running): bench.measure.child._build (a worker's model and data) and torch's _configure_async_dispatch.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "studies"))

from bench_stability import apart  # noqa: E402  (max/min - 1)

CHECKS = ("alignment", "instances", "layout", "hugepages", "callbacks", "tcache")
# hugepages: what a process gets to back its heap with 2 MiB pages where the kernel's
# transparent huge pages are `madvise` (this VM): glibc's own tunable (2.35+) and
# torch's CPU allocator's switch (c10 alloc_cpu, blocks of 2 MiB and more).
HUGE_ENV = {"GLIBC_TUNABLES": "glibc.malloc.hugetlb=1", "THP_MEM_ALLOC_ENABLE": "1"}
# callbacks: set in a "sync" process, which calls Keras's batch-end callbacks on the main
# thread (as Keras does on tensorflow) instead of handing each one to a thread pool
SYNC_VAR = "BENCH_PROCESS_MODES_SYNC_CALLBACKS"
# tcache: an "uncached" process runs with glibc's per-thread cache of small freed blocks
# off, as workers v8 do (benchmarks.yaml harness.malloc_tcache_count); a "cached" one as
# workers v4-v7 did.
UNCACHED = {"GLIBC_TUNABLES": "glibc.malloc.tcache_count=0"}
OFFSETS = (0, 16, 32, 64, 2048)  # bytes past a 4096-byte boundary
BATCHES = 140  # per timed call: about what the nightly calibrates for cnn/predict here


def by_offset(processes: list[dict]) -> dict[str, float]:
    """alignment: each offset's median call, as a fraction off its process's
    median over every offset, then the median of that over the processes. An
    offset the backend minds stands out from 0 in every process."""
    keys = processes[0]["median"].keys()
    rel = {k: [] for k in keys}
    for p in processes:
        centre = statistics.median(p["median"].values())
        for k in keys:
            rel[k].append(p["median"][k] / centre - 1)
    return {k: statistics.median(v) for k, v in rel.items()}


def within_and_between(processes: list[dict]) -> tuple[float, float]:
    """instances: the median over processes of how far apart its models' medians
    are, against how far apart the processes' own medians are."""
    within = statistics.median(apart(list(p["median"].values())) for p in processes)
    between = apart([statistics.median(p["median"].values()) for p in processes])
    return within, between


def summary(check: str, processes: list[dict]) -> list[str]:
    """The lines that say whether `check`'s cause sets the process's speed."""
    if not processes:
        return [f"{check}: no process finished"]
    if check == "alignment":
        rel = by_offset(processes)
        own = [statistics.median(p["median"].values()) for p in processes]
        return [f"alignment: each offset's median call against its process's, median over {len(processes)} "
                f"processes: " + ", ".join(f"{k} {100 * v:+.1f} %" for k, v in rel.items()),
                f"alignment: the processes' own medians {100 * apart(own):.1f} % apart"]
    if check == "instances":
        within, between = within_and_between(processes)
        return [f"instances: models in one process {100 * within:.1f} % apart (median over {len(processes)}); "
                f"the processes {100 * between:.1f} % apart"]
    if check in SIDES:
        return in_turns_lines(check, SIDES[check], processes, DETAIL[check])
    sides = {side: [p["median"] for p in processes if p["layout"] == side] for side in ("random", "fixed")}
    return [f"layout {side}: {len(v)} processes, medians {', '.join(f'{x / 1e3:.1f}k' for x in v)}: "
            f"{100 * apart(v):.1f} % apart" for side, v in sides.items() if v]


# The checks whose processes take turns, two kinds: their kinds, and what each kind's
# summary line shows besides the speeds.
SIDES = {"hugepages": ("small", "huge"), "callbacks": ("async", "sync"), "tcache": ("cached", "uncached")}
DETAIL = {
    # how much memory the kernel backed with huge pages
    "hugepages": lambda mine: f"AnonHugePages {_range(p['huge_mib'] for p in mine)} MiB",
    # the most threads Keras's callback pool ran in a call, RssAnon after the timed calls, the peak over them
    "callbacks": lambda mine: (f"pool threads {_range(p['pool_threads'] for p in mine)}; RssAnon after the calls "
                               f"{_range(p['anon_mib'] for p in mine)} MiB, peak {_range(p['peak_mib'] for p in mine)} MiB"),
    # glibc's heap after the timed calls, what of it was in use, and the peak RSS over them
    "tcache": lambda mine: (f"heap {_range(p['heap_mib'] for p in mine)} MiB, in use "
                            f"{_range(p['inuse_mib'] for p in mine)} MiB; peak {_range(p['peak_mib'] for p in mine)} MiB"),
}


def in_turns_lines(check: str, sides: tuple[str, str], processes: list[dict], detail) -> list[str]:
    """Processes of two kinds that took turns: each kind's medians, how far apart they
    are and `detail(processes)`, then each second-kind process against the first-kind
    one just before it (a pair sees about the same moment of the host)."""
    lines = []
    for side in sides:
        mine = [p for p in processes if p["layout"] == side]
        if mine:
            v = [p["median"] for p in mine]
            lines.append(f"{check} {side}: {len(v)} processes, medians "
                         f"{', '.join(f'{x / 1e3:.1f}k' for x in v)}: {100 * apart(v):.1f} % apart; {detail(mine)}")
    pairs = [b["median"] / a["median"] - 1 for a, b in zip(processes, processes[1:])
             if a["layout"] == sides[0] and b["layout"] == sides[1]]
    if pairs:
        lines.append(f"{check}: {sides[1]} against the {sides[0]} process before it, {len(pairs)} pairs: median "
                     f"{100 * statistics.median(pairs):+.1f} %, {min(pairs) * 100:+.1f} to {max(pairs) * 100:+.1f} %")
    return lines


def _range(values) -> str:
    v = list(values)
    return f"{min(v):.0f}-{max(v):.0f}"


def child(check: str, model_name: str, calls: int) -> dict:
    """In the measured process: build, warm up, time; the figures as JSON-ready data."""
    import keras
    import numpy as np

    from bench import config
    from bench.measure import child as bench_child
    from bench.measure import usage

    cfg = config.load()
    pool_threads = _count_pool_threads()
    if os.environ.get(SYNC_VAR):
        _sync_callbacks()
    spec = bench_child.Spec(backend=keras.backend.backend(), keras_backend=keras.backend.backend(), model=model_name,
                            mode="predict", batch_size=cfg.models[model_name].batch_size, repeats=1,
                            min_repeat_seconds=0.5, warmup_steps=2, result_path="")
    built = [bench_child._build(keras, spec) for _ in range(4 if check == "instances" else 1)]
    x = built[0][1].x_time[:BATCHES * spec.batch_size]

    def timed(model) -> float:
        t0 = time.perf_counter()
        model.predict(x, batch_size=spec.batch_size, verbose=0)
        return len(x) / (time.perf_counter() - t0)

    if check == "alignment":
        _copy_batches_to(np)

        def at(offset: int) -> float:
            _OFFSET[0] = offset
            return timed(built[0][0])

        runs = {str(off): (lambda off=off: at(off)) for off in OFFSETS}
    else:
        runs = {str(i): (lambda m=m: timed(m)) for i, (m, _) in enumerate(built)}
    for run in runs.values():
        run()  # compile and warm up
    usage.reset_peaks()  # the peak over the timed calls only (Linux; else the process's)
    samples: dict[str, list[float]] = {k: [] for k in runs}
    names = list(runs)
    for r in range(calls):
        for k in names[r % len(names):] + names[:r % len(names)]:  # rotated: no variant always first
            samples[k].append(runs[k]())
    medians = {k: statistics.median(v) for k, v in samples.items()}
    status = usage.status_kb()
    return {"median": medians if check in ("alignment", "instances") else medians["0"],
            "huge_mib": _anon_huge_mib(), "pool_threads": max(pool_threads, default=0),
            "anon_mib": status.get("RssAnon", 0) / 1024, "peak_mib": status.get("VmHWM", 0) / 1024,
            **_heap_mib()}


def _heap_mib() -> dict[str, float]:
    """glibc's own count of its main heap and of the bytes in use in it (mallinfo2,
    glibc 2.33 on; zeros elsewhere): a heap far bigger than what is in use is fragmented."""
    import ctypes

    class Mallinfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in
                    "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]

    fn = getattr(ctypes.CDLL(None), "mallinfo2", None)
    if fn is None:
        return {"heap_mib": 0.0, "inuse_mib": 0.0}
    fn.restype = Mallinfo2
    got = fn()
    return {"heap_mib": got.arena / 2**20, "inuse_mib": got.uordblks / 2**20}


def _count_pool_threads() -> list[int]:
    """Each thread pool's thread count as it shuts down, appended to the list returned:
    Keras (on a backend whose IS_THREAD_SAFE is true) hands every batch-end callback to a
    ThreadPoolExecutor that lives for one fit/predict call and starts a thread whenever
    none is idle, so how many it starts is a race."""
    import concurrent.futures as cf

    seen: list[int] = []
    shutdown = cf.ThreadPoolExecutor.shutdown

    def counted(self, *a, **k):
        seen.append(len(self._threads))
        return shutdown(self, *a, **k)

    cf.ThreadPoolExecutor.shutdown = counted
    return seen


def _sync_callbacks() -> None:
    """Keras's batch-end callbacks on the main thread: CallbackList starts with async
    dispatch off and turns it on in _configure_async_dispatch, which this skips."""
    from keras.src.callbacks import callback_list

    callback_list.CallbackList._configure_async_dispatch = lambda self, callbacks: None


def _anon_huge_mib() -> float:
    """How much of this process's memory sits in transparent huge pages (Linux; else 0)."""
    try:
        for line in Path("/proc/self/smaps_rollup").read_text().splitlines():
            if line.startswith("AnonHugePages:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


_OFFSET = [None]


def _copy_batches_to(np) -> None:
    """Wrap Keras's torch convert_to_tensor so each numpy batch is first copied
    to _OFFSET[0] bytes past a 4096-byte boundary (torch backend only)."""
    from keras.src.backend.torch.ops import core

    convert = core.convert_to_tensor

    def at_offset(a, dtype=None, sparse=None, ragged=None):
        if _OFFSET[0] is not None and isinstance(a, np.ndarray) and a.nbytes >= 4096:
            buf = np.empty(a.nbytes + 8192, dtype=np.uint8)
            start = (_OFFSET[0] - buf.ctypes.data) % 4096
            moved = buf[start:start + a.nbytes].view(a.dtype).reshape(a.shape)
            moved[...] = a
            a = moved
        return convert(a, dtype=dtype, sparse=sparse, ragged=ragged)

    core.convert_to_tensor = at_offset


def worker_env(backend: str) -> dict[str, str]:
    """What a local-cpu worker runs with: bench run's own benchmark_env (the harness's glibc
    thresholds, the device's env, and its `threads`, which the child's prepare() applies)."""
    from bench import config
    from bench.commands.run import benchmark_env

    cfg = config.load()
    return dict(os.environ, KERAS_BACKEND=backend, **benchmark_env(cfg.devices["local-cpu"], cfg.harness))


def spawn(check: str, args, layout: str = "random") -> dict | None:
    cmd = [sys.executable, __file__, "--child", check, "--model", args.model, "--calls", str(args.calls)]
    env = worker_env(args.backend)
    if layout == "fixed":
        cmd = ["setarch", "-R", *cmd]
        env["PYTHONHASHSEED"] = "0"
    if layout == "huge":  # glibc's tunable joins the workers' own (workers v8: the tcache's)
        tunables = [t for t in (env.get("GLIBC_TUNABLES"), HUGE_ENV["GLIBC_TUNABLES"]) if t]
        env.update(HUGE_ENV, GLIBC_TUNABLES=":".join(tunables))
    if layout == "sync":
        env[SYNC_VAR] = "1"
    if layout == "cached":
        env.pop("GLIBC_TUNABLES", None)
    if layout == "uncached":
        env.update(UNCACHED)
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        print(f"{check}: a process ran past --timeout {args.timeout:g} s; left out")
        return None
    if proc.returncode != 0:
        print(f"{check}: a process failed (rc {proc.returncode}): {proc.stderr.strip().splitlines()[-1:]}")
        return None
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["layout"] = layout
    shown = out["median"] if isinstance(out["median"], dict) else {layout: out["median"]}
    print(f"  {check}: " + ", ".join(f"{k} {v:,.0f}" for k, v in shown.items())
          + f" (AnonHugePages {out.get('huge_mib', 0):.0f} MiB)", flush=True)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="torch")
    p.add_argument("--model", default="cnn")
    p.add_argument("--checks", default=",".join(CHECKS))
    p.add_argument("--processes", type=int, default=3, help="processes for alignment and instances")
    p.add_argument("--pairs", type=int, default=6, help="layout, hugepages: processes of each kind, in turns")
    p.add_argument("--calls", type=int, default=6, help="timed calls per variant and process")
    p.add_argument("--timeout", type=float, default=900, help="seconds a process may take")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        from bench.measure import backends

        if hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, {0})  # one CPU, before the backend starts its threads
        backends.get(os.environ["KERAS_BACKEND"]).prepare(os.environ)
        print(json.dumps(child(args.child, args.model, args.calls)))
        return 0
    checks = args.checks.split(",")
    unknown = [c for c in checks if c not in CHECKS]
    if unknown:
        raise SystemExit(f"--checks: unknown {', '.join(unknown)}; expected some of {', '.join(CHECKS)}")
    if "alignment" in checks and args.backend != "torch":
        raise SystemExit("--checks alignment: only the torch backend's adapter is wrapped; leave it out")
    if "layout" in checks and not shutil.which("setarch"):
        raise SystemExit("--checks layout: needs setarch (util-linux) to turn address-space randomisation off")
    lines = []
    for check in checks:
        print(f"{check}: {args.backend} {args.model}/predict", flush=True)
        if check == "layout":
            runs = [spawn(check, args, layout) for _ in range(args.pairs) for layout in ("random", "fixed")]
        elif check in SIDES:
            runs = [spawn(check, args, side) for _ in range(args.pairs) for side in SIDES[check]]
        else:
            runs = [spawn(check, args) for _ in range(args.processes)]
        lines += summary(check, [r for r in runs if r])
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
