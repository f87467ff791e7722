#!/usr/bin/env python3
"""Injection through the pipeline (issue 53 item 6): kept invocations of a
build, clean ones and ones made slower by a known fraction, replayed as
nights through the verbs the nightly workflows call, and what they answer.

    # the invocations (about 100 s each for jax mlp/train here):
    .venv/bin/python studies/bench_native.py --runs 16 --inject 0.03 --inject-runs 4 \\
        --backends jax --models mlp --modes train --keep .local/native
    # the replay (under a second a night here):
    .venv/bin/python studies/pipeline_replay.py --from .local/native --orders 5
    # a folder extended with a second fraction (bench_native.py --keep it again, --inject 0.05):
    .venv/bin/python studies/pipeline_replay.py --from .local/native --inject 0.05

Input: a folder as studies/bench_native.py --keep writes it, run-NN/ (clean
invocations) and inject-F-NN/ (invocations whose Keras step functions were
made F slower; native code and any reference untouched). The labels come
only from that: the clean nights are flat, the injected ones a step of F.

Each order is one history: the clean invocations (order 0 as measured, each
later order a seeded shuffle of them), then the injected ones. (bench_native
measures the injected invocations early, between clean ones, against the
host's drift; here they all come last, so a drift over the set's hours
lands in the step too.) Night by night, a copy of that invocation's records
goes through

  bench publish --repo BARE   (the publish gate, a local bare repo as the remote)
  bench report --format json  (the status of every series)
  bench alert --confirm       (issues and confirm.yml dispatches, against tests/fake_gh.py)

re-dated to its night (run.night, started_at and finished_at moved by whole
days, run.id made the history's own; the kept records are not touched). A
set run with --reference holds each night's two records, the nightly's and
the reference build's; both are published, as a nightly publishes them.
Every invocation ran one Keras build, so the nightly's copies get the
night's own local label (`<version>+replayNN`): as on real nights, a change
window then names a last good and a first bad build, which the confirm
dispatch carries (builds that exist only in this replay).

It prints, per order and series, the status after each night, and then per
series: the injected night on which it was first called Regressed (and how
many nights that is from the step), any call on a clean night (a false
alarm), the alert issue's night and the confirm dispatch. Not run here: the
confirm job itself (a same-machine A/B of two builds, up to 20 minutes; see
studies/ab_injection.py for it on its own).

The clean nights are this machine's own invocations in a shuffled order:
they share one stretch of hours, so the false alarms they show are a few
dozen nights' worth, not a rate per series-year.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "studies"))

from bench_native import fraction_of  # noqa: E402  (folder names as bench_native writes them)
from tests.helpers import fake_gh  # noqa: E402  (the tests' own stand-in for GitHub)

BRANCH = "data"
CALLED = ("Regressed", "Faster")


def invocations(folder: Path, fraction: float | None = None) -> tuple[list[Path], list[Path]]:
    """The clean invocations and the injected ones (of one fraction, where given: a folder
    extended with a second --inject holds two steps, and a history holds one)."""
    clean = sorted(p for p in folder.glob("run-*") if p.is_dir() and any(p.glob("*.json")))
    injected = {p: fraction_of(p) for p in sorted(folder.glob("inject-*")) if p.is_dir() and any(p.glob("*.json"))}
    held = ", ".join(f"{f:g}" for f in sorted(set(injected.values())))
    if fraction is None and len(set(injected.values())) > 1:
        sys.exit(f"pipeline_replay: {folder} holds invocations injected at {held}; choose one with --inject F")
    chosen = [p for p, f in injected.items() if fraction is None or f == fraction]
    if not clean or not chosen:
        sys.exit(f"pipeline_replay: {folder} holds {len(clean)} clean (run-NN/) and {len(chosen)} injected "
                 f"(inject-F-NN/{f', F = {fraction:g}; it holds F = {held or None}' if fraction is not None else ''}) "
                 f"invocations with records; expected at least one of each "
                 f"(studies/bench_native.py --keep {folder} --inject F)")
    return clean, chosen


def redated(path: Path, night: datetime, run_id: str, build: str) -> dict:
    """The record at `path` as if measured on `night` (UTC midnight), whole days moved, its
    run `run_id` (a reference build's pair keeps its side: `<run_id>-a`, `<run_id>-b`), and
    the nightly's Keras labelled `<its version>+<build>` (the reference's own, side "a",
    stays the frozen build it is)."""
    data = json.loads(path.read_text())
    run = data["run"]
    ab = run.get("ab") or {}
    env = data.get("environment") or {}
    if env.get("keras_version") and ab.get("side") != "a":
        env["keras_version"] = f"{env['keras_version']}+{build}"
    if ab.get("side"):
        ab["id"], run_id = run_id, f"{run_id}-{ab['side']}"
    started = datetime.fromisoformat(run["started_at"].replace("Z", "+00:00"))
    shift = night.date() - started.date()  # whole days: the time of day stays as measured
    for key in ("started_at", "finished_at"):
        if run.get(key):
            t = datetime.fromisoformat(run[key].replace("Z", "+00:00")) + shift
            run[key] = t.strftime("%Y-%m-%dT%H:%M:%SZ")
    run["night"] = f"{night:%Y-%m-%d}"
    run["id"] = run_id
    return data


def bench(args: list[str], env: dict) -> subprocess.CompletedProcess:
    p = subprocess.run([sys.executable, "-m", "bench", *args], env=env, cwd=ROOT, text=True,
                       capture_output=True)
    if p.returncode != 0:
        sys.exit(f"pipeline_replay: bench {args[0]} exited {p.returncode}:\n{p.stderr.strip()}")
    return p


def fake_github(work: Path) -> dict:
    """The environment for the verbs: tests/fake_gh.py as `gh`, its made-up GitHub under work/github."""
    root, bindir = fake_gh(work)
    return {**os.environ, "FAKE_GH_ROOT": str(root), "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
            "GITHUB_REPOSITORY": "o/r", "PYTHONPATH": str(ROOT)}


def replay(order: int, nights: list[Path], first_injected: int, work: Path) -> dict:
    """One history through publish, report and alert; {series: [status per night]} and the alerts."""
    env = fake_github(work)
    bare, data, stage = work / "data.git", work / "data", work / "stage"
    subprocess.run(["git", "init", "--quiet", "--bare", str(bare)], check=True)
    today = datetime.now(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    statuses: dict[str, list[str]] = {}
    alerts: list[tuple[int, str]] = []
    for i, folder in enumerate(nights):
        print(f"order {order}, night {i + 1}/{len(nights)}: {folder.name}", file=sys.stderr, flush=True)
        night = today - timedelta(days=len(nights) - i)  # the publish gate refuses records dated after now
        shutil.rmtree(stage, ignore_errors=True)
        stage.mkdir()
        for path in sorted(folder.glob("*.json")):
            rec = redated(path, night, f"replay{order}-{i:02d}", f"replay{i:02d}")
            (stage / path.name).write_text(json.dumps(rec, sort_keys=True, indent=2) + "\n")
        bench(["publish", "--repo", str(bare), "--branch", BRANCH, *map(str, sorted(stage.glob("*.json")))], env)
        if (data / ".git").exists():
            subprocess.run(["git", "-C", str(data), "fetch", "--quiet", "origin", BRANCH], check=True)
            subprocess.run(["git", "-C", str(data), "checkout", "--quiet", "--detach", "FETCH_HEAD"], check=True)
        else:
            subprocess.run(["git", "clone", "--quiet", "--branch", BRANCH, str(bare), str(data)], check=True)
        rows = json.loads(bench(["report", "--data", str(data), "--format", "json"], env).stdout)
        for r in rows:
            statuses.setdefault(f"{r['backend']}/{r['device']}/{r['model']}/{r['mode']}", []).append(r["status"])
        out = bench(["alert", "--data", str(data), "--repo", "o/r", "--confirm"], env).stdout
        alerts += [(i, line) for line in out.splitlines() if line.strip()]
    runs = work / "github" / "workflow-runs.jsonl"
    dispatches = [json.loads(line) for line in runs.read_text().splitlines()] if runs.exists() else []
    return {"statuses": statuses, "alerts": alerts, "dispatches": dispatches, "first_injected": first_injected}


def padded(result: dict, series: str) -> list[str]:
    """The series' status per night of its history, "" before its first night."""
    st = result["statuses"].get(series, [])
    return [""] * (len(result["nights"]) - len(st)) + st


def first_call(statuses: list[str], k: int) -> int | None:
    """The injected night (1 = the step's first) on which the series first read Regressed;
    None also when the last clean night already read Regressed (that call is not the step's)."""
    if k and statuses[k - 1] == "Regressed":
        return None
    return next((i - k + 1 for i in range(k, len(statuses)) if statuses[i] == "Regressed"), None)


def summarise(order: int, result: dict) -> None:
    k = result["first_injected"]
    print(f"\norder {order}: {k} clean nights, then {len(result['nights']) - k} injected")
    for series in sorted(result["statuses"]):
        st = padded(result, series)
        false = [i + 1 for i in range(k) if st[i] in CALLED]
        called = first_call(st, k)
        verdict = (f"Regressed on injected night {called}" if called is not None
                   else f"not called ({', '.join(st[k:])})")
        print(f"  {series:<38} {verdict}; clean nights called Regressed or Faster: {false or 'none'}")
        print(f"  {'':<38} night by night: {' '.join(s[:4] or '-' for s in st)}")
    for i, line in result["alerts"]:
        print(f"  alert, night {i + 1} ({'injected' if i >= k else 'clean'}): {line}")
    for d in result["dispatches"]:
        print(f"  dispatched: {json.dumps(d, sort_keys=True)}")


def overall(results: list[dict]) -> None:
    """Per series, over the orders: how often and how soon the step was called, and the false calls."""
    print(f"\nover {len(results)} order(s):")
    for series in sorted({s for r in results for s in r["statuses"]}):
        calls, false = [], 0
        for r in results:
            st, k = padded(r, series), r["first_injected"]
            calls.append(first_call(st, k))
            false += sum(s in CALLED for s in st[:k])
        found = [c for c in calls if c is not None]
        print(f"  {series:<38} called in {len(found)} of {len(calls)}"
              f"{f' (on injected night {sorted(found)})' if found else ''}; clean nights called: {false}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--from", dest="source", required=True, help="a studies/bench_native.py --keep folder")
    p.add_argument("--orders", type=int, default=1, help="histories: the measured order, then shuffles")
    p.add_argument("--inject", type=float, default=None, metavar="F",
                   help="the injected invocations of this fraction (needed where the folder holds several)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default=None, help="where to write results.json (default: print only)")
    a = p.parse_args()
    clean, injected = invocations(Path(a.source), a.inject)
    rng = random.Random(a.seed)
    results = []
    for order in range(a.orders):
        nights = list(clean)
        if order:
            rng.shuffle(nights)
        nights += injected
        with tempfile.TemporaryDirectory(prefix="pipeline-replay-") as work:
            result = {"order": order, "nights": [n.name for n in nights],
                      **replay(order, nights, len(clean), Path(work))}
        summarise(order, result)
        results.append(result)
    overall(results)
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        (Path(a.out) / "results.json").write_text(json.dumps(results, sort_keys=True, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
