#!/usr/bin/env python3
"""Keras against native code (issue 56 item 2): how still does the vs-native
ratio hold across separate `bench run` invocations, beside samples/s, and
does a per-step slowdown injected into Keras move it by that much?

    .venv/bin/python studies/bench_native.py --runs 5 --keep .local/native          # 5 invocations
    .venv/bin/python studies/bench_native.py --runs 5 --inject 0.03 --inject-runs 1 --keep .local/native
    .venv/bin/python studies/bench_native.py --runs 4 --inject 0.03 --inject-runs 3 --control-runs 3 --keep .local/native
    .venv/bin/python studies/bench_native.py --from .local/native                   # the report again
    .venv/bin/python studies/bench_native.py --from .local/native --replay           # ... and the status
    # vs-native beside vs-ref, from the same invocations (the nightly's local-cpu set-up):
    .venv/bin/python studies/bench_native.py --runs 5 --models mlp --reference REF/bin/python --keep .local/native-ref

Each invocation is `python -m bench run --backend B ... --models M ... --modes
train predict --native on` (the nightly's protocol: harness.workers workers
of harness.repeats repeats, each worker then timing native.PAIRS pairs of a
Keras call and a native call). --inject F adds --inject-runs invocations whose
Keras train/predict step functions each wait for their step and spin F x
its time (the median interval between calls) after every call (studies/ab_injection.py's "step" sitecustomize), native
code and a reference build's processes untouched: the vs-native ratio (and
vs-ref) should rise by about F.
--control-runs N adds N invocations under the same sitecustomize at a
fraction of 0 (control-NN/): each step waited for and its interval kept,
nothing spun. What they move against the clean invocations is what the
injection's machinery costs apart from its F.

Every invocation after run-00 takes its steps per call from run-00's records
(`bench run --steps-from`), as a nightly takes them from the data branch.
--reference REF_PYTHON runs each invocation beside that reference build
(`bench run --reference`), so the same workers give both ratios; the
reference's own records (run.ab.side "a") are left out of the figures.

Prints, per (backend, model, mode), each clean invocation's samples/s,
vs-native ratio and (with a reference) vs-ref ratio, their spread (the largest distance of one invocation from
their median, %), the injected invocations' move against the clean median,
and the native phase's cost: its seconds over the workers' whole seconds.
--replay then takes each vs-native series' points as nights, the clean
invocations first and the injected ones after them (each record re-dated to
one night of its own, in that order; the records themselves are not
touched), and prints what the status rule (bench.analyse.trends.assess, with
benchmarks.yaml's trends) calls after each night: the injected nights are a
step whose size is known only from how they were built.

Not a test: the numbers depend on the machine and what else it runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "studies"))

from ab_injection import step_site  # noqa: E402  (one step injection for both studies)
from bench.measure import lock  # noqa: E402


def invoke(out: Path, backends: list[str], models: list[str], modes: list[str], inject: float | None,
           reference: str | None = None, steps_from: Path | None = None) -> float:
    """One `bench run` into `out` under a private lock (main holds the machine's); its wall seconds.
    inject: None runs the build as it is; a fraction (0 too) runs it under the step injection."""
    env = {**os.environ, lock.ENV: str(out.parent / "inner.lock")}
    with tempfile.TemporaryDirectory(prefix="bench-native-") as site:
        if inject is not None:
            # this build's processes only: a reference's workers inherit the PYTHONPATH
            (Path(site) / "sitecustomize.py").write_text(step_site(inject, only=sys.prefix))
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [site, str(ROOT), env.get("PYTHONPATH")]))
        cmd = [sys.executable, "-m", "bench", "run", "--native", "on", "--out", str(out),
               *[a for b in backends for a in ("--backend", b)], "--models", *models, "--modes", *modes,
               *(["--reference", reference] if reference else []),
               *(["--steps-from", str(steps_from)] if steps_from else [])]
        print(f"$ {' '.join(cmd)}{f'  (inject {inject:g})' if inject is not None else ''}", flush=True)
        t0 = time.monotonic()
        subprocess.run(cmd, env=env, cwd=ROOT, check=True)
        return time.monotonic() - t0


def read(folder: Path) -> dict:
    """{(backend, model, mode): {"value", "ratio", "ref", "native_s", "worker_s", "error", "pairs"}} of
    one invocation, "pairs" each worker's (vs-native ratio, median native seconds); a reference
    build's own record (run.ab.side "a") is not this build's figures."""
    out = {}
    for path in sorted(folder.rglob("*.json")):
        data = json.loads(path.read_text())
        if "results" not in data or (data.get("run", {}).get("ab") or {}).get("side") == "a":
            continue
        backend = data["target"]["backend"] if "target" in data else path.stem.split("_")[0]
        for r in data["results"]:
            nat = r.get("native") or {}
            workers = r.get("workers") or []
            native_s = sum((w.get("native") or {}).get("seconds", 0) for w in workers)
            worker_s = sum(w["window"][1] - w["window"][0] for w in workers if w.get("window"))
            out[(backend, r["model"], r["mode"])] = {
                "value": r.get("value"), "ratio": nat.get("ratio"), "error": nat.get("error"),
                "ref": (r.get("reference") or {}).get("ratio"),
                "native_s": native_s, "worker_s": worker_s,
                "pairs": [(w["native"]["ratio"], statistics.median(w["native"]["native_seconds"]))
                          for w in workers
                          if (w.get("native") or {}).get("ratio") and (w.get("native") or {}).get("native_seconds")]}
    return out


def fraction_of(folder: Path) -> float:
    """F of an inject-F-NN folder, as run_plan names it (`{F:g}`: 0.03, 1e-05)."""
    try:
        return float(folder.name[len("inject-"):].rsplit("-", 1)[0])
    except ValueError:
        sys.exit(f"{folder}: expected a folder named inject-F-NN, F a fraction such as 0.03")


def spread(values: list[float]) -> float:
    m = statistics.median(values)
    return max(abs(v / m - 1) for v in values)


def report(keep: Path) -> None:
    clean = [read(p) for p in sorted(keep.glob("run-*"))]
    others = [(fraction_of(p), read(p)) for p in sorted(keep.glob("inject-*"))]
    others += [("control", read(p)) for p in sorted(keep.glob("control-*"))]
    keys = sorted({k for run in clean for k in run})
    print(f"\n{len(clean)} clean invocation(s), {len(others)} injected or control\n")
    print(f"{'benchmark':<24} {'samples/s per invocation':<44} {'spread':>7}   {'vs-native per invocation':<40} {'spread':>7}")
    native_s = worker_s = 0.0
    for k in keys:
        vals = [run[k]["value"] for run in clean if k in run and run[k]["value"]]
        ratios = [run[k]["ratio"] for run in clean if k in run and run[k]["ratio"]]
        errors = [run[k]["error"] for run in clean if k in run and run[k]["error"]]
        native_s += sum(run[k]["native_s"] for run in clean if k in run)
        worker_s += sum(run[k]["worker_s"] for run in clean if k in run)
        v_text = " ".join(f"{v:,.0f}" for v in vals)
        r_text = " ".join(f"{r:.3f}" for r in ratios) + (f" errors {errors}" if errors else "")
        print(f"{'/'.join(k):<24} {v_text:<44} {spread(vals) * 100 if vals else float('nan'):>6.1f}%   "
              f"{r_text:<40} {spread(ratios) * 100 if ratios else float('nan'):>6.1f}%")
        refs = [run[k]["ref"] for run in clean if k in run and run[k]["ref"]]
        if refs:
            print(f"{'':<24} {'vs-ref per invocation':<44} {'':>7}   {' '.join(f'{r:.3f}' for r in refs):<40} "
                  f"{spread(refs) * 100:>6.1f}%")
        for fraction, run in others:
            if k in run and run[k]["ratio"] and ratios and vals:
                label = "control (the injection's code, no spin)" if fraction == "control" else f"injected {fraction:.0%}"
                vs_ref = (f", vs-ref {run[k]['ref'] / statistics.median(refs) - 1:+.1%}"
                          if refs and run[k]["ref"] else "")
                print(f"{'':<24} {label}: samples/s {run[k]['value'] / statistics.median(vals) - 1:+.1%}"
                      f" against the clean median, vs-native {run[k]['ratio'] / statistics.median(ratios) - 1:+.1%}"
                      f"{vs_ref}")
    if worker_s:
        print(f"\nnative phase: {native_s:.0f} s of the workers' {worker_s:.0f} s ({native_s / worker_s:.0%}; "
              f"the nightly would take {native_s / max(worker_s - native_s, 1):.0%} longer for these benchmarks)")


def replay(keep: Path) -> None:
    """The status after each night of clean-then-injected invocations (see the module doc)."""
    from dataclasses import replace
    from datetime import date, datetime, time, timedelta, timezone

    from bench import config
    from bench.analyse.series import native_series
    from bench.analyse.trends import assess
    from bench.records.record import load

    def records(folder: Path):
        return [r for r in map(load, sorted(folder.rglob("*.json")))
                if (r.data.get("run", {}).get("ab") or {}).get("side") != "a"]

    nights = [(p.name, records(p)) for p in sorted(keep.glob("run-*"))] + \
             [(p.name, records(p)) for p in sorted(keep.glob("inject-*"))]
    trends = config.load().trends
    by_key: dict = {}
    first = date(2026, 1, 1)
    for i, (name, recs) in enumerate(nights):
        for key, series in native_series(recs).items():
            day = first + timedelta(days=i)
            at = datetime.combine(day, time(2), timezone.utc)
            by_key.setdefault(key, []).append((name, replace(series.points[-1], day=day, started_at=at), series))
    print("\nthe status rule, night by night (clean invocations, then the injected ones):")
    for key, rows in sorted(by_key.items()):
        print(f"  {'/'.join(key)}")
        for n in range(1, len(rows) + 1):
            name, point, series = rows[n - 1]
            grown = replace(series, points=tuple(p for _, p, _ in rows[:n]), failures=(), skipped=(),
                            last_seen=point.started_at)
            a = assess(grown, point.started_at, trends)
            print(f"    night {n} {name:<16} {point.value:.4f}  {a.status}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--backends", nargs="+", default=["jax", "torch"])
    p.add_argument("--models", nargs="+", default=["mlp", "cnn"])
    p.add_argument("--modes", nargs="+", default=["train", "predict"])
    p.add_argument("--inject", type=float, default=0.0, help="a per-step slowdown of Keras, e.g. 0.03")
    p.add_argument("--inject-runs", type=int, default=1)
    p.add_argument("--control-runs", type=int, default=0,
                   help="invocations under the injection's code at a fraction of 0 (control-NN/)")
    p.add_argument("--reference", default=None, metavar="REF_PYTHON",
                   help="run each invocation beside this reference build's python (bench run --reference)")
    p.add_argument("--keep", default=None, help="folder for the records (default: a temporary one)")
    p.add_argument("--from", dest="source", default=None, help="report on a kept folder; run nothing")
    p.add_argument("--replay", action="store_true",
                   help="also replay the vs-native series night by night through the status rule")
    a = p.parse_args()
    if a.source:
        report(Path(a.source))
        if a.replay:
            replay(Path(a.source))
        return 0
    keep = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="bench-native-"))
    # the injected and control invocations early, between clean ones, so a set cut short still has them
    clean = [("run", i, None) for i in range(a.runs)]
    injected = [("inject", i, a.inject) for i in range(a.inject_runs if a.inject else 0)]
    control = [("control", i, 0.0) for i in range(a.control_runs)]
    extras = [x for pair in zip(injected, control) for x in pair] \
        + injected[len(control):] + control[len(injected):]
    plan = clean[:1] + [x for pair in zip(extras, clean[1:]) for x in pair] + clean[1 + len(extras):] \
        + extras[len(clean) - 1:]
    keep.mkdir(parents=True, exist_ok=True)
    with lock.held(lock.path(), lambda line: print(line, file=sys.stderr, flush=True), "bench_native.py"):
        run_plan(plan, keep, a)  # the machine's lock for the whole set: no other run between its invocations
    report(keep)
    return 0


def run_plan(plan, keep: Path, a) -> None:
    for kind, i, fraction in plan:
        name = f"inject-{fraction:g}-{i:02d}" if kind == "inject" else f"{kind}-{i:02d}"  # run-NN, control-NN
        out = keep / name
        if out.exists() and any(out.rglob("*.json")):
            continue  # kept from an earlier start
        first = keep / "run-00"  # the nightly's fixed work: every later invocation reuses its steps per call
        steps_from = first if out != first and any(first.rglob("*.json")) else None
        seconds = invoke(out, a.backends, a.models, a.modes, fraction, a.reference, steps_from)
        load = os.getloadavg()[0]
        print(f"{name}: {seconds:.0f} s, load {load:.1f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
