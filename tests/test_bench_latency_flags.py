"""studies/bench_latency_flags.py on made-up kept records: each rule's flags and
the spread of the recomputed latency headlines across a set's invocations."""

import importlib.util
import json
from pathlib import Path

from bench.measure import disturbance

SCRIPT = Path(__file__).resolve().parent.parent / "studies" / "bench_latency_flags.py"
spec = importlib.util.spec_from_file_location("bench_latency_flags", SCRIPT)
flags = importlib.util.module_from_spec(spec)
spec.loader.exec_module(flags)

CANARY = disturbance.WHY["canary"]


def worker(value, why=None, rerun=False):
    w = {"status": "ok", "value": value, "disturbed": why is not None}
    if why:
        w["disturbed_why"] = why
    if rerun:
        w["rerun"] = True
    return w


def write(folder: Path, run: int, workers: list[dict], value: float):
    folder.mkdir(parents=True, exist_ok=True)
    result = {"model": "mlp", "mode": "latency", "status": "ok", "better": "smaller", "value": value,
              "workers": workers}
    record = {"target": {"backend": "torch"}, "run": {"started_at": f"2026-12-06T0{run}:00:00Z"}, "results": [result]}
    (folder / f"torch--local-cpu--run{run}-1.json").write_text(json.dumps(record))


def test_each_rule_flags_and_recomputes_the_headlines(tmp_path):
    # invocation 1: a canary-only flag on a worker at its peers' median (its rerun reads 1.3)
    # and a CPU-share flag on a slow one (its rerun reads 1.2). As recorded the clean ones
    # are 0.9, 1.1, 1.3, 1.2: the trimmed mean 1.15; with the canary worker kept, 1.05
    write(tmp_path / "set", 1, [worker(0.9), worker(1.0, CANARY), worker(1.1), worker(1.5, "CPU per wall second 0.5"),
                                worker(1.3, rerun=True), worker(1.2, rerun=True)], 1.15)
    # invocation 2: a canary-only flag on a worker 4 % slower than the clean median: 1.0 either way
    write(tmp_path / "set", 2, [worker(1.0), worker(1.0), worker(1.0), worker(1.04, CANARY),
                                worker(1.0, rerun=True)], 1.0)
    assert flags.report([tmp_path / "set"]) == [
        "as recorded                    flags    3  within ±3 %: 0/1  ±5 %: 0/1  median ±7.0 %  worst ±7.0 %",
        "canary and p50 over 1.03x      flags    2  within ±3 %: 1/1  ±5 %: 1/1  median ±2.4 %  worst ±2.4 %",
        "canary and p50 over 1.05x      flags    1  within ±3 %: 1/1  ±5 %: 1/1  median ±2.4 %  worst ±2.4 %",
        "canary and p50 over 1.10x      flags    1  within ±3 %: 1/1  ±5 %: 1/1  median ±2.4 %  worst ±2.4 %",
        "no canary-only flags           flags    1  within ±3 %: 1/1  ±5 %: 1/1  median ±2.4 %  worst ±2.4 %"]


def test_a_recorded_headline_the_recorded_rule_cannot_rebuild_is_named(tmp_path):
    write(tmp_path / "set", 1, [worker(1.0), worker(1.0), worker(1.0)], 0.9)
    write(tmp_path / "set", 2, [worker(1.0), worker(1.0), worker(1.0)], 1.0)
    assert flags.report([tmp_path / "set"])[0] == "set torch mlp: recomputed 1, recorded 0.9"


def test_a_missing_folder_gets_one_line(tmp_path, capsys):
    assert flags.main([str(tmp_path / "nope")]) == 2
    assert capsys.readouterr().err == f"bench_latency_flags: not a folder: {tmp_path / 'nope'}\n"
