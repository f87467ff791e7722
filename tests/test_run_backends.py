"""`python -m bench run` on the real backends installed here (subprocesses).

The full four-results checks are slow (a minute each on 2 shared cores);
the timeout and the missing-backend cases take seconds.
"""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from bench import record

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
@pytest.mark.parametrize("backend", [
    pytest.param("jax", marks=needs("jax")),
    pytest.param("torch", marks=needs("torch")),
    pytest.param("mlx", marks=needs("mlx", "keras_mlx")),
])
def test_quick_run_gives_four_ok_results(backend, tmp_path):
    (rec,), err = bench_run(tmp_path, "--backend", backend, "--quick")
    assert (rec.backend, rec.device) == (backend, "local-cpu")
    assert [(r.model, r.mode) for r in rec.results] == [
        ("cnn", "train"), ("cnn", "predict"), ("mlp", "train"), ("mlp", "predict")]
    for r in rec.results:
        assert_ok(r)
    raw = {(r["model"], r["mode"]): r for r in rec.data["results"]}
    assert raw["cnn", "train"]["quality"]["held_out_accuracy"] >= 0.9
    assert raw["mlp", "predict"]["quality"]["max_logit_diff"] < 0.1
    assert raw["cnn", "train"]["compile_seconds"] > 0
    env = rec.environment
    assert env["keras_version"] and env["backend_versions"]["keras-nightly"]
    assert env["accelerator"]["kind"] == "cpu" and env["accelerator"]["device"]
    assert "[4/4]" in err and "BACKEND" in err
    if backend == "mlx":  # local-cpu's env in benchmarks.yaml reaches the child
        assert env["settings"] == {"BENCH_MLX_DEVICE": "cpu", "mlx_device": "cpu"}
        assert env["accelerator"]["device"].startswith("Device(cpu")


@pytest.mark.slow
@needs("openvino", "keras_openvino")
def test_openvino_predicts_both_models_and_cannot_train(tmp_path):
    (rec,), _ = bench_run(tmp_path, "--backend", "openvino", "--quick")
    by = {(r.model, r.mode): r for r in rec.results}
    for model in ("cnn", "mlp"):
        assert_ok(by[model, "predict"])
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
    (rec,), _ = bench_run(tmp_path, "--backend", "tensorflow")
    assert len(rec.results) == 4
    for r in rec.results:
        assert (r.status, r.error.kind) == ("failed", "install")
        assert "No module named 'tensorflow'" in r.error.message
