"""bench compare pair by pair (same-machine A/B runs) and the one-value metrics
(latency p99, peak memory), with records built here."""

import json
import math
import sys
from datetime import timedelta

import pytest

from bench import cli
from bench.compare.baseline import baseline_from_history, baseline_from_records
from bench.compare.head import head_from_records
from bench.compare.verdicts import compare
from bench.config import Compare
from bench.records.record import RunRecord
from tests.helpers import T0, make_record, ok, write_data

SETTINGS = Compare(nights=7, min_change=0.03, alpha=0.01)
# Worker figures of one A/B run: the machine drifts from worker to worker
# (~8 % here), both sides alike since they ran back to back.
DRIFT = (1.00, 0.97, 1.04, 0.93, 1.01, 0.96, 1.05, 0.99)
WIGGLE = (0.004, -0.003, 0.002, -0.004, 0.001, 0.003, -0.002, -0.001)  # B's own noise per pair


def side(side_name, factor, *, ab_id="ab-1", workers=None, level=80000.0, extra=None):
    """One side of an A/B run: mlp/train, one worker per DRIFT entry."""
    if workers is None:
        wiggle = WIGGLE if side_name == "b" else (0.0,) * len(DRIFT)
        workers = [{"value": level * d * factor * (1 + w), "samples": [level * d * factor * (1 + w)],
                    "status": "ok", "disturbed": False} for d, w in zip(DRIFT, wiggle)]
    values = sorted(w["value"] for w in workers if w.get("value"))
    result = ok("mlp", "train", values[len(values) // 2], values, workers=workers, **(extra or {}))
    rec = make_record([result], run_id=f"{ab_id}-{side_name}", event="workflow_dispatch",
                      environment={"keras_source": "git" if side_name == "b" else "nightly"})
    data = json.loads(rec.to_json())
    data["run"]["ab"] = {"id": ab_id, "side": side_name, "python": f"/venvs/{side_name}/bin/python"}
    return RunRecord.from_dict(data, f"{side_name}.json")


def row_of(base_rec, head_rec):
    (row,) = compare(baseline_from_records([base_rec], "a"), head_from_records([head_rec]), SETTINGS)
    return row


def test_identical_builds_pair_up_unchanged_despite_the_drift():
    row = row_of(side("a", 1.0), side("b", 1.0))
    assert (row.verdict, row.basis, row.head_n, row.base_n) == ("unchanged", "pairs", 8, 8)
    assert abs(row.delta) < 0.003 and row.detectable == 0.03  # it could call 3 %: the size rule is the limit
    assert row.reason == "the change is below 3%"


def test_five_percent_more_work_is_slower_by_pairs_but_not_without_them():
    paired = row_of(side("a", 1.0), side("b", 0.95))
    assert (paired.verdict, paired.basis) == ("slower", "pairs")
    assert paired.delta == pytest.approx(-0.05, abs=0.003) and paired.interval[1] < 0
    # The same figures as two unrelated runs: the drift hides the change.
    unpaired = row_of(side("a", 1.0, ab_id="ab-1"), side("b", 0.95, ab_id="ab-2"))
    assert (unpaired.verdict, unpaired.basis) == ("unchanged", "samples")


def _broken_head(mode=None):
    head = side("b", 0.95)
    data = json.loads(head.to_json())
    workers = data["results"][0]["workers"]
    workers[2] = {"value": None, "samples": [], "status": "failed", "disturbed": False,
                  "error": {"kind": "crash", "message": "signal 9"}}
    workers[5]["disturbed"] = True
    workers[6]["value"] *= 1.5  # a pair far off the others, on the fast side: it stays in
    if mode:
        data["run"]["ab"]["mode"] = mode
    return RunRecord.from_dict(data, "b.json")


def test_a_failed_worker_leaves_its_pair_out_a_far_off_pair_stays_in():
    # Taken in turns: the failed and the disturbed worker leave their pairs out;
    # the far-off pair is kept, whatever its value (no outcome-based dropping).
    row = row_of(side("a", 1.0), _broken_head())
    assert (row.basis, row.head_n, row.pairs_left_out) == ("pairs", 6, 2)
    # 6 pairs: the exact sign-flip test's smallest p is 2/64, so nothing can be called.
    assert row.verdict == "unchanged" and row.detectable is None
    assert row.reason == "6 pairs cannot reach p < 0.01 (the smallest p is 0.031)"
    assert row.delta == pytest.approx(math.expm1(
        (sum(math.log(0.95 * (1 + w)) for i, w in enumerate(WIGGLE) if i not in (2, 5, 6))
         + math.log(0.95 * 1.5 * (1 + WIGGLE[6]))) / 6), rel=1e-9)


def test_in_a_duet_a_disturbed_pair_counts():
    # Both workers of a duet pair ran at once on one host: a disturbance reached both.
    row = row_of(side("a", 1.0), _broken_head("duet"))
    assert (row.head_n, row.pairs_left_out) == (7, 1)


def test_too_few_pairs_fall_back_to_the_unpaired_test():
    few = [{"value": 80000.0, "samples": [80000.0], "status": "ok", "disturbed": False}]
    row = row_of(side("a", 1.0, workers=few), side("b", 1.0, workers=few))
    assert row.basis == "samples"


def test_two_sides_of_one_run_through_the_command(tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(side("a", 1.0).to_json())
    b.write_text(side("b", 0.90).to_json())
    assert cli.main(["compare", "--base", str(a), "--head", str(b), "--fail-on", "slower"]) == 1
    out = capsys.readouterr().out
    # 8 pairs all on the slow side: the exact sign-flip test's smallest p, 2/256.
    assert ("| 🔴 slower | jax | local-cpu | mlp | train | 79.6k | 71.7k | -10.0% | -10.4% … -9.6% | ≥3.0% "
            "| p=0.0078, 8 A/B worker pairs |") in out
    assert "Rows marked A/B worker pairs pair worker i of the base with worker i of the head" in out


# -- one value per run: latency p99 and peak memory --------------------------

def latency_record(day, p50, p99, host, *, event="schedule", source="nightly"):
    calls = [p50 * (1 + 0.01 * k) for k in range(-10, 11)]  # every timed call's ms, as the child keeps them
    r = ok("mlp", "latency", p50, calls, unit="ms", better="smaller",
           latency={"p50_ms": p50, "p90_ms": p50 * 1.2, "p99_ms": p99, "mean_ms": p50 * 1.05,
                    "calls": 200, "path": "predict_on_batch"},
           memory={"host_peak_bytes": host, "device_peak_bytes": None, "unavailable": {"device": "cpu"}})
    return make_record([r], started_at=T0 + timedelta(days=day), run_id=f"n{day}", event=event,
                       environment={"keras_source": source})


NIGHTS = [latency_record(d, 2.0 + 0.02 * (d % 3), 3.0 + 0.05 * (d % 4), 500_000_000 + 1_000_000 * (d % 2))
          for d in range(7)]


def rows_by_metric(head):
    rows = compare(baseline_from_history(NIGHTS, 7, "x"), head_from_records([head]), SETTINGS)
    return {r.metric: r for r in rows}


def test_latency_p50_p99_and_memory_are_compared_smaller_is_better():
    head = latency_record(30, 2.5, 4.2, 650_000_000, event="pull_request", source="git")
    rows = rows_by_metric(head)
    assert set(rows) == {"", "p99", "host memory"}  # no device figure: no device row
    assert (rows[""].verdict, rows[""].unit) == ("slower", "ms")  # the p50 headline
    assert (rows["p99"].verdict, rows["p99"].unit, rows["p99"].basis) == ("slower", "ms", "nights")
    assert rows["p99"].delta == pytest.approx(4.2 / 3.05 - 1)
    assert (rows["host memory"].verdict, rows["host memory"].unit) == ("slower", "bytes")
    assert rows["host memory"].interval[0] > 0


def test_one_value_metrics_within_the_nights_spread_are_unchanged():
    rows = rows_by_metric(latency_record(30, 2.02, 3.05, 500_500_000, event="pull_request", source="git"))
    assert rows["p99"].verdict == rows["host memory"].verdict == "unchanged"
    assert rows["host memory"].reason == "the change is below 3%"


def test_one_value_metrics_against_one_base_run_are_shown_not_called():
    base = baseline_from_records([NIGHTS[0]], "1 base record")
    rows = compare(base, head_from_records([latency_record(30, 2.0, 9.0, 900_000_000)]), SETTINGS)
    mem = next(r for r in rows if r.metric == "host memory")
    assert (mem.verdict, mem.p_value, mem.detectable) == ("unchanged", None, None)
    assert mem.reason == "one value per run: 1 base value, the test needs 3"


def test_sensitivity_simulation_draws_runs_from_measured_pairs(tmp_path, capsys, monkeypatch):
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parent.parent / "studies" / "bench_ab_sensitivity.py"
    spec = importlib.util.spec_from_file_location("bench_ab_sensitivity", path)
    script = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, script)
    spec.loader.exec_module(script)
    for case, factor in (("identical", 1.0), ("wider", 0.91)):
        for i in range(2):  # two measured A/B runs per case
            folder = tmp_path / case / f"{i:02d}"
            folder.mkdir(parents=True)
            for name, f in (("a", 1.0), ("b", factor)):
                (folder / f"{name}.json").write_text(side(name, f, ab_id=f"{case}-{i}").to_json())
    assert script.measured_pairs(tmp_path / "wider")[1] == 8
    # 8 pairs: the sign-flip test's smallest p (2/256) is below 0.01; with 5 (2/32) nothing can be called.
    monkeypatch.setattr(sys, "argv", ["x", "simulate", "--records", str(tmp_path), "--workers", "8"])
    assert script.main() == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("identical: {'unchanged': 20} of 20 simulated runs of 8 worker pairs, drawn from "
                             "16 measured pairs")
    assert out[1].startswith("wider: {'slower': 20} of 20 simulated runs of 8 worker pairs")


def test_reruns_pair_with_nothing_and_keep_the_round_order():
    head = side("b", 0.95)
    data = json.loads(head.to_json())
    workers = data["results"][0]["workers"]
    workers[1]["disturbed"] = True
    workers.append({**workers[1], "disturbed": False, "rerun": True})  # run again at the end
    row = row_of(side("a", 1.0), RunRecord.from_dict(data, "b.json"))
    assert (row.basis, row.head_n, row.pairs_left_out) == ("pairs", 7, 1)
    # 7 pairs all on the slow side: p = 2/128 at best, so even 5 % cannot be called, and it says so.
    assert (row.verdict, row.p_value, row.detectable) == ("unchanged", 2 / 128, None)


# -- pr-bench: both sides in --head; past nights only as the fallback, like with like ----

def test_head_records_holding_both_sides_are_compared_pair_by_pair_without_reading_nights(tmp_path, capsys):
    data = write_data(NIGHTS, tmp_path / "data")  # latency nights: nothing in common with mlp/train
    heads = []
    for name, f in (("a", 1.0), ("b", 0.90)):
        heads.append(tmp_path / f"{name}.json")
        heads[-1].write_text(side(name, f).to_json())
    assert cli.main(["compare", "--base", str(data), "--head", *map(str, heads), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["baseline"] == "side a of the same-machine A/B run ab-1"
    [row] = out["benchmarks"]
    assert (row["verdict"], row["basis"], row["head_n"]) == ("slower", "pairs", 8)


def _night(day, value, *, duet, protocol=("workers", 12)):
    run = {"protocol": {"name": protocol[0], "version": protocol[1]}}
    if duet:
        run["ab"] = {"id": f"n{day}", "side": "b", "python": "/v/bin/python", "mode": "duet", "reference": True}
    return make_record([ok("mlp", "train", value, [value] * 5)], started_at=T0 + timedelta(days=day),
                       run_id=f"n{day}-{duet}-{protocol[1]}", run=run)


def test_past_nights_count_only_when_measured_like_the_head(tmp_path, capsys):
    # Duet nights (beside a reference, half the CPUs each) read half a solo night's samples/s.
    nights = ([_night(d, 40000.0 + 10 * d, duet=True) for d in range(7)]
              + [_night(d, 80000.0 + 10 * d, duet=False) for d in range(7, 12)]
              + [_night(d, 60000.0, duet=False, protocol=("single-process", 1)) for d in range(12, 14)])
    data = write_data(nights, tmp_path / "data")
    head = _night(20, 80030.0, duet=False)
    data_head = json.loads(head.to_json())
    data_head["environment"]["keras_source"] = "git"
    path = tmp_path / "head.json"
    path.write_text(json.dumps(data_head))
    assert cli.main(["compare", "--base", str(data), "--head", str(path), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["baseline"].endswith("measured as workers 12, solo")
    [row] = out["benchmarks"]
    # Only the 5 solo workers-v12 nights: the head is one of them, not 2x faster than the duets.
    assert (row["verdict"], row["base_runs"]) == ("unchanged", 5)


def test_one_ab_run_per_backend_each_pairs_with_its_own_side_a(tmp_path, capsys):
    heads = []
    # Both 10 % slower: with 2 rows each row's BH level is 0.01 only when both are called.
    for ab_id, backend, f in (("ab-1", "jax", 0.90), ("ab-2", "torch", 0.90)):
        for name in ("a", "b"):
            data = json.loads(side(name, f if name == "b" else 1.0, ab_id=ab_id).to_json())
            data["target"].update(backend=backend, keras_backend=backend)
            heads.append(tmp_path / f"{ab_id}-{name}.json")
            heads[-1].write_text(json.dumps(data))
    assert cli.main(["compare", "--base", str(tmp_path), "--head", *map(str, heads), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["baseline"] == "side a of the same-machine A/B runs ab-1, ab-2"
    verdicts = {r["backend"]: (r["verdict"], r["basis"]) for r in out["benchmarks"]}
    assert verdicts == {"jax": ("slower", "pairs"), "torch": ("slower", "pairs")}
