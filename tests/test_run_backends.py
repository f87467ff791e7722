"""`python -m bench run` on the real backends installed here (subprocesses).

The full four-results checks are slow (a minute each on 2 shared cores);
the timeout and the missing-backend cases take seconds.
"""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.measure import pool
from bench.records import record

REPO = Path(__file__).resolve().parent.parent


def bench_run(out: Path, *args: str, timeout: float = 600) -> tuple[list[record.RunRecord], str]:
    proc = subprocess.run([sys.executable, "-m", "bench", "run", "--out", str(out), *args],
                          cwd=REPO, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [record.load(p) for p in proc.stdout.split()], proc.stderr


def needs(*modules):
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    return pytest.mark.skipif(bool(missing), reason=f"not installed: {', '.join(missing)}")


def assert_ok(result, min_samples=3):
    assert result.status == "ok", result.error
    assert len(result.samples) >= min_samples
    assert result.value > 0 and result.unit == "samples/s" and result.better == "bigger"


@pytest.mark.slow
# Two workers on one backend show the real fixed work and worker lines; the
# worker mechanics themselves are backend-independent (tests/test_protocol2.py),
# so the other backends run one worker and keep the suite short.
@pytest.mark.parametrize("backend, workers", [
    pytest.param("jax", 2, marks=needs("jax")),
    pytest.param("torch", 1, marks=needs("torch")),
    pytest.param("mlx", 1, marks=needs("mlx", "keras_mlx")),
])
def test_quick_run_gives_four_ok_results(backend, workers, tmp_path):
    (rec,), err = bench_run(tmp_path, "--backend", backend, "--quick", "--workers", str(workers),
                            "--modes", "train,predict")
    assert (rec.backend, rec.device) == (backend, "local-cpu")
    assert rec.data["run"]["protocol"] == {"name": "workers", "version": 13, "memory": "least, settled"}
    assert [(r.model, r.mode) for r in rec.results] == [
        ("cnn", "train"), ("cnn", "predict"), ("mlp", "train"), ("mlp", "predict")]
    raw = {(r["model"], r["mode"]): r for r in rec.data["results"]}
    for r in rec.results:
        assert_ok(r, min_samples=2)
        # The headline's samples are the clean workers' repeats, quick_repeats (2 in the
        # tests' config) each. Which workers are clean depends on how busy the host is
        # (a worker still disturbed on its rerun is left out), so count from the record.
        ok = [w for w in pool.counted(raw[r.model, r.mode]["workers"]) if w["status"] == "ok"]
        clean = [w for w in ok if not w["disturbed"]] or ok
        assert all(len(w["samples"]) >= 2 for w in ok)
        assert list(r.samples) == [s for w in clean for s in w["samples"]]
    assert raw["cnn", "train"]["quality"]["held_out_accuracy"] >= 0.9
    assert raw["mlp", "predict"]["quality"]["max_logit_diff"] < 0.1
    assert raw["cnn", "train"]["compile_seconds"] > 0
    for r in raw.values():  # protocol 2: every worker did the first worker's fixed work, checked after timing
        assert len(r["workers"]) >= workers and len({w["steps_per_call"] for w in r["workers"]}) == 1
        assert r["quality"]["timed"]["check"] in ("timed_train", "timed_predict") and r["setup_seconds"] >= 0
    env = rec.environment
    assert env["keras_version"] and env["backend_versions"]["keras-nightly"]
    assert env["accelerator"]["kind"] == "cpu" and env["accelerator"]["device"]
    assert f"worker {workers}" in err and "BACKEND" in err
    if backend == "mlx":  # local-cpu's env in benchmarks.yaml reaches the child
        assert {k: env["settings"].get(k) for k in ("BENCH_MLX_DEVICE", "mlx_device")} == {
            "BENCH_MLX_DEVICE": "cpu", "mlx_device": "cpu"}
        assert env["accelerator"]["device"].startswith("Device(cpu")


@pytest.mark.slow
@needs("openvino", "keras_openvino")
def test_openvino_predicts_both_models_and_cannot_train(tmp_path):
    (rec,), _ = bench_run(tmp_path, "--backend", "openvino", "--quick", "--workers", "2", "--modes", "train,predict")
    by = {(r.model, r.mode): r for r in rec.results}
    for model in ("cnn", "mlp"):
        # one clean worker's 2 repeats when the other is left out as disturbed on a busy host
        assert_ok(by[model, "predict"], min_samples=2)
        assert by[model, "train"].status == "skipped"
        assert by[model, "train"].error.kind == "unsupported"
    assert "precision_hint" in rec.environment["accelerator"]


@needs("jax")
def test_a_one_second_timeout_is_recorded_as_timeout(tmp_path):
    (rec,), err = bench_run(tmp_path, "--backend", "jax", "--timeout", "1", "--models", "cnn", "--modes", "train")
    (r,) = rec.results
    assert (r.status, r.error.kind) == ("failed", "timeout")
    assert "1 s timeout" in r.error.message
    assert "failed (timeout)" in err


@pytest.mark.skipif(importlib.util.find_spec("tensorflow") is not None, reason="tensorflow is installed here")
def test_a_missing_backend_is_recorded_as_install_failures(tmp_path):
    (rec,), _ = bench_run(tmp_path, "--backend", "tensorflow", "--modes", "train,predict")
    assert len(rec.results) == 4
    for r in rec.results:
        assert (r.status, r.error.kind) == ("failed", "install")
        assert "No module named 'tensorflow'" in r.error.message


GATE_SCRIPT = r'''
import json, sys
import numpy as np
from pathlib import Path
from bench.measure import child
from bench.measure.workloads import gate

out = Path(sys.argv[1])
def spec(mode):
    return child.Spec(backend="jax", keras_backend="jax", model="mlp", mode=mode, batch_size=256, repeats=3,
                      min_repeat_seconds=0.05, warmup_steps=1, result_path="")
# train: a bar no model reaches in one epoch
gate.TRAIN_ACCURACY, gate.MAX_EPOCHS = 0.999, 1
train = child.execute(spec("train"))["result"]
# predict: reference logits that are off by a whole unit
ref = np.load(gate.reference_path("mlp"))
arrays = {k: ref[k] for k in ref.files}
arrays["logits"] = arrays["logits"] + 1.0
with open(out / "mlp.npz", "wb") as f:
    np.savez(f, **arrays)
gate.WEIGHTS_DIR = out
predict = child.execute(spec("predict"))["result"]
print(json.dumps([train, predict]))
'''


@pytest.mark.slow
@needs("jax")
def test_a_model_failing_the_gate_is_a_quality_failure_without_a_figure(tmp_path):
    proc = subprocess.run([sys.executable, "-c", GATE_SCRIPT, str(tmp_path)], cwd=REPO, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "KERAS_BACKEND": "jax"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    train, predict = json.loads(proc.stdout.strip().splitlines()[-1])
    assert train["status"] == "failed" and train["error"]["kind"] == "quality"
    assert "after 1 epochs on load_digits; expected >= 0.999" in train["error"]["message"]
    assert train["quality"]["epochs"] == 1 and "value" not in train and "samples" not in train
    assert predict["status"] == "failed" and predict["error"]["kind"] == "quality"
    assert "logits differ from the reference by up to 1" in predict["error"]["message"]
    assert predict["quality"]["max_logit_diff"] >= 1.0 and "value" not in predict


START_STATE_SCRIPT = r'''
import json, os
from bench.measure import backends, child
backend = backends.get(os.environ["KERAS_BACKEND"])
backend.prepare({backends.THREADS_VAR: "1"})
import keras
spec = child.Spec(backend="x", keras_backend=os.environ["KERAS_BACKEND"], model="mlp", mode="train",
                  batch_size=64, repeats=3, min_repeat_seconds=0.1, warmup_steps=1, result_path="")
from bench.measure.workloads import gate
import numpy as np
model, d = child._build(keras, spec)
run = child._runner(model, d, spec, backend)
run(1)
reset = child._start_state(model, spec, backend)
reset()
first = float(run(5))
trained_on = float(run(5))
iterations_before_reset = int(keras.ops.convert_to_numpy(model.optimizer.iterations))
run(7)  # whatever ran before (a gate of another Keras), the reset puts the committed start back
reset()
iterations_after_reset = int(keras.ops.convert_to_numpy(model.optimizer.iterations))
committed = all(np.array_equal(a, b.astype(a.dtype)) for a, b in zip(model.get_weights(),
                                                                       gate.load_reference("mlp").weights))
again = float(run(5))
print(json.dumps([first, trained_on, again, iterations_before_reset, iterations_after_reset,
                  gate.load_train_start("mlp").iterations, committed]))
'''


@pytest.mark.slow
@pytest.mark.parametrize("backend", [pytest.param("jax", marks=needs("jax")),
                                     pytest.param("torch", marks=needs("torch")),
                                     pytest.param("mlx", marks=needs("mlx", "keras_mlx"))])
def test_every_timed_train_call_starts_from_the_same_weights(backend):
    """Workers v13: child._start_state puts the committed weights and Adam's
    committed state back, so a call after reset() trains exactly as the first
    timed call did, whatever trained the model before."""
    proc = subprocess.run([sys.executable, "-c", START_STATE_SCRIPT], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "KERAS_BACKEND": backend, "BENCH_MLX_DEVICE": "cpu"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    first, trained_on, again, before, after, committed_steps, committed = json.loads(
        proc.stdout.strip().splitlines()[-1])
    assert trained_on != first  # without the reset, the next call trains another model
    assert again == first and committed  # the committed weights, then the same training
    # Adam's step count too: the committed one + 5 + 5, then back to the committed one
    assert (before, after) == (committed_steps + 10, committed_steps)


VERIFY_STATE_SCRIPT = r'''
import json
from bench.measure import child

seen = {}
start_state, verify = child._start_state, child._verify

def watched_start_state(model, spec, backend):
    from bench.measure.workloads import gate
    seen["start"] = gate.load_train_start(spec.model).iterations  # where every timed call starts
    return start_state(model, spec, backend)

def watched_verify(model, d, spec, last):
    seen["verify"] = int(model.optimizer.iterations.numpy())
    return verify(model, d, spec, last)

child._start_state, child._verify = watched_start_state, watched_verify
spec = child.Spec(backend="jax", keras_backend="jax", model="mlp", mode="train", batch_size=256, repeats=2,
                  min_repeat_seconds=0.05, warmup_steps=1, result_path="")
result = child.execute(spec)["result"]
print(json.dumps([result["status"], result["steps_per_call"], seen["start"], seen["verify"]]))
'''


@pytest.mark.slow
@needs("jax")
def test_the_timed_train_check_sees_the_model_the_last_timed_call_left():
    """After the repeats, the set-up calls put the gate's state back; the check of
    what was timed (loss, held-out accuracy) must come before them."""
    proc = subprocess.run([sys.executable, "-c", VERIFY_STATE_SCRIPT], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "KERAS_BACKEND": "jax"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    status, steps, start, at_verify = json.loads(proc.stdout.strip().splitlines()[-1])
    assert status == "ok" and steps > 1  # (one step would look like a set-up call's state)
    assert at_verify == start + steps  # the committed start plus exactly one timed call
