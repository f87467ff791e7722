"""Keras against native code (issue 56 item 2): the native models agree with
Keras, the check refuses one that does not, the paired timing and its ratio,
the record's native block and the "<mode>.vs-native" series."""

import json
import math
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from bench import cli
from bench.analyse.series import (all_series, in_table, metric_group, native_results, native_series,
                                  table_series)
from bench.analyse.trends import assess
from bench.config import Trends
from bench.measure import backends, native, pool
from bench.measure.child import Spec
from bench.measure.summary import summary_table
from bench.records import extensions
from tests.helpers import T0, failed, make_record, ok, write_data

ROOT = Path(__file__).resolve().parent.parent

# -- the check (pure) ------------------------------------------------------------------

ADAM = native.Adam(3e-3)


def sides(shift_logits=0.0, shift_loss=0.0, shift_update=0.0):
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(8, 10)).astype(np.float32)
    before = [rng.normal(size=(4, 3)), rng.normal(size=(3,))]
    step = [np.full((4, 3), -ADAM.learning_rate), np.full((3,), ADAM.learning_rate)]
    keras = {"logits": logits, "loss": 2.3, "before": before, "after": [b + s for b, s in zip(before, step)]}
    nat = {"logits": logits + shift_logits, "loss": 2.3 + shift_loss,
           "after": [b + s + shift_update for b, s in zip(before, step)]}
    return keras, nat


def test_the_same_numbers_agree_and_each_figure_beyond_its_tolerance_is_named():
    numbers, problem = native.agreement(*sides(), ADAM)
    assert problem is None and numbers == {"logits": 0.0, "loss": 0.0, "update": 0.0}
    _, problem = native.agreement(*sides(shift_logits=0.01), ADAM)
    assert problem.startswith("native logits differs from Keras's by")
    _, problem = native.agreement(*sides(shift_loss=1e-3), ADAM)
    assert problem.startswith("native loss differs")
    # a tenth of a learning rate off in every weight's step: a different optimizer
    numbers, problem = native.agreement(*sides(shift_update=ADAM.learning_rate / 10), ADAM)
    assert problem.startswith("native update differs") and math.isclose(numbers["update"], 0.1, rel_tol=1e-6)
    _, problem = native.agreement(*sides(shift_logits=float("nan")), ADAM)
    assert problem is not None  # NaN never passes


def test_a_predict_check_compares_logits_alone_and_refuses_other_shapes():
    keras, nat = sides()
    numbers, problem = native.agreement({"logits": keras["logits"]}, {"logits": nat["logits"]}, ADAM)
    assert problem is None and set(numbers) == {"logits"}
    _, problem = native.agreement({"logits": keras["logits"]}, {"logits": nat["logits"][:4]}, ADAM)
    assert "shape" in problem


def test_keras_adam_step_size():
    assert math.isclose(ADAM.alpha(1), 3e-3 * math.sqrt(1 - 0.999) / (1 - 0.9))
    with pytest.raises(ValueError, match="learning_rate > 0"):
        native.Adam(0.0)
    with pytest.raises(ValueError, match="Tolerance.logits"):
        native.Tolerance(logits=0)


# -- the paired timing -------------------------------------------------------------------

class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_pairs_alternate_the_order_and_time_the_same_steps_on_both_sides():
    clock, calls = Clock(), []

    def side(name, per_step):
        def run(steps):
            calls.append((name, steps))
            clock.t += per_step * steps
        return run

    resets = []
    timed = native.pairs(side("keras", 0.012), side("native", 0.010), 7, 4, clock,
                         lambda: resets.append("k"), lambda: resets.append("n"))
    assert [c[0] for c in calls] == ["keras", "native", "native", "keras"] * 2
    assert {c[1] for c in calls} == {7} and resets == ["k", "n", "n", "k"] * 2
    assert math.isclose(native.pair_ratio(timed), 1.2)


def test_a_slow_host_during_one_pair_slows_both_sides_and_leaves_the_ratio():
    # the host runs at half speed for pair 2: samples/s halve there, the ratio does not move
    speed = iter([1, 1, 1, 1, 0.5, 0.5, 1, 1, 1, 1])
    clock = Clock()

    def side(per_step):
        def run(steps):
            clock.t += per_step * steps / next(speed)
        return run

    timed = native.pairs(side(0.015), side(0.010), 10, 5, clock)
    assert [round(k / n, 6) for k, n in timed] == [1.5] * 5
    with pytest.raises(ValueError, match="no pair with both times > 0"):
        native.pair_ratio([(0.0, 1.0)])


def test_the_result_takes_the_median_worker_ratio_and_keeps_an_error_or_a_reason():
    got = native.combine([{"ratio": 1.1, "version": 1}, {"ratio": 1.3}, {"ratio": 1.2}, None])
    assert math.isclose(got["ratio"], 1.2) and got["workers"] == 3 and got["version"] == 1
    logs = [math.log(r) for r in (1.1, 1.3, 1.2)]
    sd = (sum((x - sum(logs) / 3) ** 2 for x in logs) / 2) ** 0.5
    assert math.isclose(got["log_se"], 1.2533 * sd / math.sqrt(3))
    assert "log_se" not in native.combine([{"ratio": 1.1}, {"ratio": 1.2}])
    err = {"kind": "quality", "message": "native mlp/train: native update differs"}
    assert native.combine([{"error": err, "version": 1}])["error"] == err
    assert native.combine([{"unavailable": "no native", "version": 1}]) == {"unavailable": "no native", "version": 1}
    assert native.combine([None, None]) is None


def test_pool_puts_each_workers_block_in_its_entry_and_the_median_on_the_result():
    spec = Spec(backend="jax", keras_backend="jax", model="mlp", mode="train", batch_size=32, repeats=1,
                min_repeat_seconds=0.1, warmup_steps=0, result_path="", native=5)
    series = pool._Series(spec)
    for v, r in ((1000.0, 1.1), (1010.0, 1.3), (990.0, 1.2)):
        payload = {"result": {**spec.base_result(), "status": "ok", "value": v, "samples": [v],
                              "native": {"ratio": r, "pairs": 5, "version": 1}}}
        series.entries.append(pool.entry_of(payload))
        series.payloads.append(payload)
    result = pool.result_of(series, 0.1)
    assert [e["native"]["ratio"] for e in result["workers"]] == [1.1, 1.3, 1.2]
    assert math.isclose(result["native"]["ratio"], 1.2) and result["native"]["workers"] == 3
    assert extensions.problem({"run": {}, "environment": {}, "results": [result]}) is None


# -- the native models against Keras, in a process of their backend ----------------------

PROBE = r'''
import json, sys
import numpy as np
import keras
from bench.measure import backends, native, workloads
from bench.measure.workloads import data

name, bs = sys.argv[1], 32
backend = backends.get(keras.backend.backend())
w = workloads.get(name)
keras.utils.set_random_seed(1)
model = w.build()
workloads.compile_model(model)
split = data.digits()
x = data.for_model(split.x_train, w.flat_input)[:4 * bs]
y = split.y_train[:4 * bs]
model.fit(x[:bs], y[:bs], batch_size=bs, verbose=0)  # builds the optimizer, as the compile call does

def run(steps):
    h = model.fit(x[:steps * bs], y[:steps * bs], batch_size=bs, epochs=1, verbose=0, shuffle=False)
    return h.history["loss"][-1]

k = native.Keras(model, run, 2, "train", data.for_model(split.x_test, w.flat_input)[:40], x, y, 4)
out = {"ok": native.measure(backend, k, bs, 2)}

class Wrong:  # the backend's native model with its first kernel's rows in another order
    def native(self, m):
        impl = backend.native(m)
        load = impl.load
        impl.load = lambda ws: load([ws[0][::-1].copy(), *ws[1:]])
        return impl

out["wrong"] = native.measure(Wrong(), k, bs, 2)
out["numpy"] = native.measure(backends.get("numpy"), k, bs, 2)
print("NATIVE" + json.dumps(out))
'''


def probe(backend: str, model: str) -> dict:
    env = {**os.environ, "KERAS_BACKEND": backend, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-c", PROBE, model], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=600)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("NATIVE")), None)
    assert line, proc.stdout[-2000:] + proc.stderr[-3000:]
    return json.loads(line[len("NATIVE"):])


def agrees(got: dict) -> None:
    block = got["ok"]
    assert "error" not in block, block
    check = block["check"]
    assert check["logits"] <= native.TOLERANCE.logits and check["loss"] <= native.TOLERANCE.loss
    assert check["update"] <= native.TOLERANCE.update
    assert block["ratio"] > 0 and block["pairs"] == 2 and len(block["native_seconds"]) == 2
    # a native model that is not the Keras model: a quality failure, no ratio
    assert got["wrong"]["error"]["kind"] == "quality" and "ratio" not in got["wrong"]
    assert "native logits differs from Keras's" in got["wrong"]["error"]["message"]
    # a backend without native code says why
    assert "numpy backend has no native counterpart" in got["numpy"]["unavailable"]


def test_jax_native_mlp_agrees_with_keras_and_a_wrong_one_is_refused():
    agrees(probe("jax", "mlp"))


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jax", "torch", "mlx"])
def test_native_cnn_agrees_with_keras(backend):
    agrees(probe(backend, "cnn"))


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["torch", "mlx"])
def test_native_mlp_agrees_with_keras(backend):
    agrees(probe(backend, "mlp"))


def test_every_backend_has_native_and_those_without_give_a_reason():
    model = native.Model("mlp", (native.Layer("dense", None, (), 2),), (np.zeros((2, 2)), np.zeros(2)),
                         ADAM, 4)
    for name in ("numpy", "openvino", "tensorflow"):
        got = backends.get(name).native(model)
        assert isinstance(got, native.Unsupported) and f"bench/measure/backends/{name}.py" in got.reason
    with pytest.raises(ValueError, match="expected them to match"):
        native.Model("mlp", (native.Layer("dense", None, (), 2),), (np.zeros(2),), ADAM, 4)


# -- the vs-native series ------------------------------------------------------------------

HOST = [1.0, 0.8, 1.15, 0.9, 1.2, 0.85, 1.1, 0.75, 1.0, 1.2, 0.9, 1.1, 0.8, 1.05, 0.95, 1.2]


def nights(ratios, *, host=None, version=1, start=T0, mode="train"):
    """One record a night with native on: samples/s drift with the host, the ratio is ratios[i]."""
    out = []
    for i, r in enumerate(ratios):
        h = host[i] if host else 1.0
        block = {"ratio": r, "workers": 5, "version": version} if r is not None else \
            {"error": {"kind": "quality", "message": "native mlp/train: native update differs"}, "version": version}
        out.append(make_record([ok("mlp", mode, 1000.0 * h / r if r else 1000.0, native=block)],
                               started_at=start + timedelta(days=i),
                               run={"protocol": {"name": "workers", "version": 12,
                                                 "native": {"version": version, "pairs": 5}}}))
    return out


def test_keras_adding_work_per_step_is_regressed_on_vs_native_while_samples_per_second_drift():
    ratios = [1.2, 1.204, 1.197, 1.202, 1.199, 1.203, 1.198, 1.201, 1.2, 1.197, 1.202, 1.2,
              1.236, 1.238, 1.235, 1.237]  # +3 % Keras time from night 12
    recs = nights(ratios, host=HOST)
    newest = recs[-1].started_at
    s = native_series(recs)[("jax", "local-cpu", "mlp", "train.vs-native")]
    headline = table_series(recs)[("jax", "local-cpu", "mlp", "train")]
    assert assess(headline, newest, Trends()).status == "Steady"  # 3 % inside ±20 % of host drift
    got = assess(s, newest, Trends())
    assert (got.status, got.change.index) == ("Regressed", 12)
    assert (s.unit, s.better, metric_group(s.mode), in_table(s.mode)) == ("x native time", "smaller", "native", True)
    assert s.points[0].protocol == "workers v12 vs native v1"


def test_a_flat_ratio_is_steady_and_a_faster_keras_is_faster():
    flat = nights([1.2, 1.203, 1.198, 1.201, 1.2, 1.199, 1.202, 1.2, 1.201, 1.199], host=HOST)
    assert assess(native_series(flat)[("jax", "local-cpu", "mlp", "train.vs-native")],
                  flat[-1].started_at, Trends()).status == "Steady"
    faster = nights([1.2, 1.203, 1.198, 1.201, 1.2, 1.199, 1.202, 1.1, 1.101, 1.099], host=HOST)
    assert assess(native_series(faster)[("jax", "local-cpu", "mlp", "train.vs-native")],
                  faster[-1].started_at, Trends()).status == "Faster"


def test_a_native_mismatch_is_a_failed_point_of_its_kind_and_a_failed_benchmark_fails_there_too():
    recs = nights([1.2] * 5 + [None])
    recs.append(make_record([failed("mlp", "train", "oom", "out of memory"),
                             ok("cnn", "train", 500.0, native={"ratio": 1.1, "version": 1})],
                            started_at=T0 + timedelta(days=6)))
    s = native_series(recs)[("jax", "local-cpu", "mlp", "train.vs-native")]
    assert len(s.points) == 5 and [f.kind for f in s.failures] == ["quality", "oom"]
    assert "native update differs" in s.failures[0].message
    assert assess(s, recs[-1].started_at, Trends()).status == "Failed"


def test_a_backend_without_native_code_makes_no_series_and_keeps_its_reason():
    reason = "no native OpenVINO model yet"
    rec = make_record([ok("mlp", "predict", 100.0, native={"unavailable": reason, "version": 1}),
                       failed("mlp", "train")], backend="openvino")
    assert native_results(rec) == [] and native_series([rec]) == {}
    assert reason in json.dumps(rec.data["results"][0])
    plain = make_record([ok("mlp", "train", 1000.0)])
    assert native_results(plain) == []


def test_a_new_native_version_starts_a_new_baseline_not_a_change():
    old = nights([1.2, 1.202, 1.198, 1.201, 1.199, 1.2, 1.201, 1.199])
    new = nights([1.5, 1.501, 1.499], version=2, start=T0 + timedelta(days=8))
    s = native_series(old + new)[("jax", "local-cpu", "mlp", "train.vs-native")]
    assert s.points[-1].protocol == "workers v12 vs native v2"
    assert assess(s, new[-1].started_at, Trends()).status == "New"


def test_report_show_summary_and_site_carry_the_vs_native_rows(tmp_path, capsys):
    recs = nights([1.2, 1.204, 1.197, 1.202, 1.199, 1.203, 1.198, 1.2])
    data = write_data(recs, tmp_path / "data")
    assert cli.main(["report", "--data", str(data), "--format", "json"]) == 0
    rows = {(r["model"], r["mode"]): r for r in json.loads(capsys.readouterr().out)}
    assert rows[("mlp", "train.vs-native")]["status"] == "Steady"
    assert rows[("mlp", "train.vs-native")]["unit"] == "x native time"
    assert cli.main(["summary", "--data", str(data)]) == 0
    capsys.readouterr()
    assert cli.main(["report", "--data", str(data), "--format", "json"]) == 0  # now from the summary lines
    assert {(r["model"], r["mode"]): r["status"] for r in json.loads(capsys.readouterr().out)} == {
        k: r["status"] for k, r in rows.items()}
    assert cli.main(["show", "jax/local-cpu/mlp/train.vs-native", "--data", str(data)]) == 0
    assert "train.vs-native" in capsys.readouterr().out
    assert set(all_series(recs)) == {("jax", "local-cpu", "mlp", "train"), ("jax", "local-cpu", "mlp", "train.vs-native")}
    assert "Keras 1.200x native's time" in summary_table(recs[-1:])


def test_a_native_block_of_the_wrong_shape_is_refused_naming_the_field():
    rec = {"run": {}, "environment": {}, "results": [ok("mlp", "train", 1.0, native={"ratio": "fast"})]}
    assert extensions.problem(rec) == "field results[0].native.ratio is 'fast'; expected a number in [1e-12, 1e+15]"
    rec["results"][0] = ok("mlp", "train", 1.0, native=[1.2])
    assert extensions.problem(rec).startswith("field results[0].native is [1.2]; expected an object")
    rec["results"][0] = ok("mlp", "train", 1.0, workers=[{"value": 1.0, "native": {"error": "bad"}}])
    assert extensions.problem(rec).startswith("field results[0].workers[0].native.error is 'bad'")
    good = {"name": "workers", "version": 13, "native": {"version": 1, "pairs": 5}}
    assert extensions.problem({"run": {"protocol": good}, "environment": {}, "results": []}) is None
    for bad in ("x", {"version": 1}, {"version": 0, "pairs": 5}):
        rec = {"run": {"protocol": {**good, "native": bad}}, "environment": {}, "results": []}
        assert extensions.problem(rec).startswith("field run.protocol is ")


def test_the_device_setting_turns_it_on_and_an_older_worker_still_reads_a_spec_with_it_off():
    from bench import config
    from bench.measure.worker import WorkerSpec

    shipped = config.load(config.DEFAULT_PATH)
    assert shipped.device("local-cpu").native is True
    assert not any(d.native for label, d in shipped.devices.items() if label != "local-cpu")
    spec = Spec(backend="jax", keras_backend="jax", model="mlp", mode="train", batch_size=32, repeats=1,
                min_repeat_seconds=0.1, warmup_steps=0, result_path="")
    off = json.loads(WorkerSpec((spec,), "out.jsonl").to_json())["specs"][0]
    # pr-ab's base side: a Spec from before native, stored work, the barrier and the profile
    assert not {"native", "stored_steps", "sync_dir", "sync_side", "profile"} & set(off)
    on = WorkerSpec((Spec(**{**spec.__dict__, "native": 5}),), "out.jsonl")
    assert WorkerSpec.from_json(on.to_json()).specs[0].native == 5
    assert WorkerSpec.from_json(WorkerSpec((spec,), "o").to_json()).specs[0] == spec


def test_the_dashboard_files_the_vs_native_series_under_its_own_metric():
    from datetime import datetime, timezone

    from bench.present.site import site_index
    from bench.present.table import build_rows

    recs = nights([1.2, 1.204, 1.197, 1.202, 1.199, 1.203])
    series = all_series(recs)
    index = site_index(series, build_rows(series, Trends()), generated_at=datetime(2026, 12, 7, tzinfo=timezone.utc))
    metrics = {e["mode"]: e["metric"] for e in index["series"]}
    assert metrics == {"train": "throughput", "train.vs-native": "native"}
