"""Which `threads` setting holds still on this machine: alternating `bench run`s, one per setting in turn.

    .venv/bin/python studies/bench_threads.py --backends torch,jax --settings 1,2 --rounds 4
    .venv/bin/python studies/bench_threads.py --full --rounds 3 --keep .local/threads

For each round and each setting (in rotated order, so a drifting host hits
both alike) one fresh `python -m bench run --backend B --quick` runs with a
copy of benchmarks.yaml whose local-cpu `threads` is that setting. Prints per
setting and (model, mode): the headlines' median and spread across rounds
(the protocol-2 stability figure, goal ±3 %), and the median within-worker
spread of the timed repeats (max distance from the worker's median), which is
the repeat-level noise the workers' median has to beat.

Not a test: the answer depends on the machine. It decides the local-cpu
`threads` default in benchmarks.yaml (see the comment there).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "studies"))

from bench_stability import config_variant, one_run  # noqa: E402
from bench.measure.estimate import spread  # noqa: E402


def config_with(threads: int, folder: Path) -> Path:
    """benchmarks.yaml with local-cpu's `threads:` line set to `threads`."""
    return config_variant(folder, f"threads-{threads}.yaml", r"^(    threads: )\d+", rf"\g<1>{threads}",
                          "device `threads:` line (local-cpu)")


def repeat_noise(result: dict) -> float:
    """Median over the result's workers of each worker's repeat spread."""
    per = [spread(w["samples"]) for w in result.get("workers", []) if w.get("status") == "ok" and w.get("samples")]
    return statistics.median(per) if per else float("nan")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backends", default="torch,jax")
    p.add_argument("--settings", default="1,2", help="threads values to alternate")
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--models", default=None)
    p.add_argument("--modes", default="train,predict")
    p.add_argument("--full", action="store_true", help="the nightly protocol instead of --quick")
    p.add_argument("--keep", type=Path, default=None, help="copy every record here (one folder per setting)")
    args = p.parse_args(argv)
    settings = [int(s) for s in args.settings.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        configs = {t: config_with(t, Path(tmp)) for t in settings}
        for backend in args.backends.split(","):
            runs: dict[int, list] = {t: [] for t in settings}
            walls: dict[int, list] = {t: [] for t in settings}
            for k in range(args.rounds):
                order = settings[k % len(settings):] + settings[:k % len(settings)]
                for t in order:
                    extra = ["--config", str(configs[t]), "--modes", args.modes] \
                        + ([] if args.full else ["--quick"]) + (["--models", args.models] if args.models else [])
                    keep = args.keep / f"threads-{t}" if args.keep else None
                    result, wall = one_run(backend, extra, keep)
                    runs[t].append(result)
                    walls[t].append(wall)
                    print(f"{backend} round {k + 1} threads={t}: "
                          + "  ".join(f"{'/'.join(key)} {r['value']:,.0f}" for key, r in result.items())
                          + f"  (wall {wall:.0f} s)", flush=True)
            print(f"\n{backend}: {'threads':>7} {'model/mode':<14} {'median':>10} {'spread':>7} {'repeat noise':>13}")
            for t in settings:
                for key in runs[t][0]:
                    rs = [r[key] for r in runs[t] if key in r]
                    vals = [r["value"] for r in rs]
                    noise = statistics.median(repeat_noise(r) for r in rs)
                    print(f"{backend}: {t:>7} {'/'.join(key):<14} {statistics.median(vals):>10,.0f} "
                          f"{100 * spread(vals):>6.1f}% {100 * noise:>12.1f}%")
                print(f"{backend}: {t:>7} wall per run (s): " + ", ".join(f"{w:.0f}" for w in walls[t]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
