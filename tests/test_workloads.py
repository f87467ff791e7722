"""Workload data, the quality gate's checks, and the committed reference weights."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bench.measure import workloads
from bench.measure.workloads import data, gate

REPO = Path(__file__).resolve().parent.parent


def test_digits_become_28x28x1_images_in_a_fixed_split():
    s = data.digits()
    assert s.x_train.shape == (1437, 28, 28, 1) and s.x_test.shape == (360, 28, 28, 1)
    assert s.x_train.dtype == np.float32 and 0.0 <= s.x_train.min() and s.x_train.max() <= 1.0
    assert sorted(set(s.y_test.tolist())) == list(range(10))
    from sklearn.datasets import load_digits
    d = load_digits()
    order = np.random.default_rng(data.SPLIT_SEED).permutation(1797)
    assert np.array_equal(s.y_test, d.target[order][:360])
    assert np.array_equal(s.x_test, data.to_image(d.data[order][:360]))


def test_digits_read_without_sklearn_match_load_digits():
    from sklearn.datasets import load_digits
    pixels, labels = data.load_digits_arrays()
    d = load_digits()
    assert np.array_equal(pixels, d.data) and np.array_equal(labels, d.target)


def test_to_image_upscales_each_pixel_to_3x3_inside_a_2_pixel_border():
    d = np.zeros((1, 64))
    d[0, 0] = 16  # top-left pixel of the 8x8 digit, full ink
    img = data.to_image(d)[0, :, :, 0]
    assert img.shape == (28, 28)
    assert np.all(img[2:5, 2:5] == 1.0)
    assert img.sum() == 9.0  # nothing else, the border included


def test_the_mlp_sees_the_same_pixels_flattened():
    x = data.digits().x_test[:5]
    flat = data.for_model(x, flat=True)
    assert flat.shape == (5, 784)
    assert np.array_equal(flat[2], x[2].ravel())


def test_tiled_repeats_real_samples_to_any_size():
    x, y = np.arange(10).reshape(5, 2), np.arange(5)
    xt, yt = data.tiled(x, y, 12)
    assert xt.shape == (12, 2) and list(yt) == [0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1]


def test_unknown_workload_names_the_known_ones():
    with pytest.raises(ValueError, match="unknown model 'resnet'; expected one of: cnn, mlp"):
        workloads.get("resnet")


# -- gate checks ---------------------------------------------------------------

def test_train_gate_passes_at_90_percent_and_fails_below_with_the_numbers():
    passed = gate.check_train([0.7, 0.85, 0.93])
    assert passed.passed and passed.numbers["epochs"] == 3 and passed.numbers["held_out_accuracy"] == 0.93
    failed = gate.check_train([0.1, 0.12, 0.11])
    assert not failed.passed
    assert failed.message == "held-out accuracy 0.120 after 3 epochs on load_digits; expected >= 0.9"


@pytest.fixture(scope="module")
def ref():
    return gate.load_reference("cnn")


def test_predict_gate_accepts_the_reference_and_float_noise(ref):
    labels = data.digits().y_test
    noisy = ref.logits + np.random.default_rng(0).normal(0, 1e-3, ref.logits.shape)
    v = gate.check_predict(noisy, labels, ref)
    assert v.passed, v.message
    assert v.numbers["held_out_accuracy"] == pytest.approx(ref.accuracy, abs=1 / 360)


@pytest.mark.parametrize("damage, words", [
    (lambda lg: lg + 1.0, "logits differ from the reference by up to 1"),
    (lambda lg: np.where(np.arange(len(lg))[:, None] == 7, np.nan, lg), "non-finite logits"),
    (lambda lg: lg[:, ::-1], "held-out accuracy"),
    (lambda lg: lg[:100], "logits have shape (100, 10); expected (360, 10)"),
])
def test_predict_gate_fails_on_wrong_logits_saying_why(ref, damage, words):
    v = gate.check_predict(damage(ref.logits.copy()), data.digits().y_test, ref)
    assert not v.passed and words in v.message


@pytest.mark.parametrize("model", workloads.NAMES)
def test_committed_references_are_small_and_consistent(model):
    path = gate.reference_path(model)
    assert path.stat().st_size < 600_000
    r = gate.load_reference(model)
    assert r.logits.shape == (360, 10)
    assert r.accuracy >= gate.TRAIN_ACCURACY
    assert gate.accuracy(r.logits, data.digits().y_test) == pytest.approx(r.accuracy)
    assert all(w.dtype == np.float32 for w in r.weights)


def make_weights_check(*args):
    return subprocess.run([sys.executable, "studies/make_weights.py", "--check", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=600)


def installed_versions() -> dict:
    spec = importlib.util.spec_from_file_location("make_weights", REPO / "studies/make_weights.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.versions()


def rewrite_reference(model, out: Path, meta: dict, nudge: float = 0.0) -> None:
    """Copy the committed file to out/<model>.npz with `meta` and the first weight nudged."""
    ref = gate.load_reference(model)
    weights = [w + nudge if i == 0 else w for i, w in enumerate(ref.weights)]
    gate.save_reference(out / f"{model}.npz", weights, ref.logits, ref.accuracy, meta)


@pytest.mark.slow
def test_make_weights_reproduces_the_committed_files():
    proc = make_weights_check()
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    # identical where the versions are the committed ones; else the same model up to rounding
    assert proc.stdout.count("weights identical") + proc.stdout.count("as expected across versions") == 2


@pytest.mark.slow
def test_make_weights_check_fails_when_the_same_versions_give_other_weights(tmp_path):
    rewrite_reference("mlp", tmp_path, installed_versions(), nudge=0.01)
    proc = make_weights_check("--models", "mlp", "--out", str(tmp_path))
    assert proc.returncode == 1, proc.stdout + proc.stderr[-2000:]
    assert "mlp: weights DIFFER with the same versions" in proc.stdout


@pytest.mark.slow
def test_make_weights_check_accepts_other_versions_when_the_model_passes_the_gate(tmp_path):
    here = installed_versions()
    rewrite_reference("mlp", tmp_path, {**here, "jax_version": "0.0.1"}, nudge=0.01)
    proc = make_weights_check("--models", "mlp", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    assert f"as expected across versions (jax 0.0.1 -> {here['jax_version']})" in proc.stdout
    assert "gate passes" in proc.stdout


class _RecordingModel:
    """Stands in for a Keras model: fit learns nothing, predict answers every
    digit right and records the batch size it was called with."""

    def __init__(self, y_test):
        self.y_test, self.predict_batches = y_test, []

    def fit(self, x, y, batch_size, **kw):
        return None

    def predict(self, x, batch_size, verbose=0):
        self.predict_batches.append(batch_size)
        return np.eye(10)[self.y_test[:len(x)]]


def test_a_train_benchmarks_gate_and_check_predict_at_its_own_batch_size():
    """Protocol workers v5: one batch of all 360 held-out digits grew torch's
    heap by up to 31 MiB before the timed calls, by a different amount in
    each process, and the benchmark's peak memory with it."""
    from bench.measure import child

    y = np.arange(360) % 10
    x = np.zeros((360, 64), dtype="float32")
    d = child._Data(x[:256], y[:256], x, y, x[:128], y[:128], chunk=1)
    spec = child.Spec(backend="torch", keras_backend="torch", model="mlp", mode="train", batch_size=128,
                      repeats=3, min_repeat_seconds=0.1, warmup_steps=1, result_path="")
    model = _RecordingModel(y)
    assert child._gate(model, d, spec, clock=lambda: 0.0)["epochs"] == 1
    assert child._verify(model, d, spec, last=0.5)["held_out_accuracy"] == 1.0
    assert model.predict_batches == [128, 128]
