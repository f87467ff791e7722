"""studies/ab_injection.py's injections do what they say: the step wrapper adds
FRACTION of the step's own time per call, the widened MLP FRACTION of its work."""

import importlib.util
import sys
import types

import pytest

from tests.helpers import load_study



@pytest.fixture
def study(monkeypatch):
    return load_study("ab_injection", monkeypatch)


def _stepping(study, monkeypatch, fraction: float, spend: str | None = None, only: str | None = None):
    """A made-up Keras whose train step takes 20 ms of a made-up clock (each
    reading costs 0.1 ms), with the step injection of `fraction` on it:
    (model, clock's [now], the site's namespace)."""
    now = [0.0]

    def clock():
        now[0] += 0.0001
        return now[0]

    class Model:
        def make_train_function(self):
            def step():
                now[0] += 0.02
            self.train_function = step

        make_predict_function = make_train_function

    keras = types.SimpleNamespace(Model=Model, backend=types.SimpleNamespace(backend=lambda: "numpy"))
    monkeypatch.setitem(sys.modules, "keras", keras)
    site = {}
    exec(study.step_site(fraction, spend or study.SPIN, only), site)
    site["_clock"] = clock
    m = Model()
    m.make_train_function()
    return m, now, site


@pytest.mark.parametrize("spend", ["SPIN", "STREAM"])
def test_the_step_injection_spins_its_fraction_of_each_steps_own_time(study, monkeypatch, spend):
    """Spun on its own CPU or spent streaming memory (studies/ab_bandwidth.py), the same time."""
    m, now, site = _stepping(study, monkeypatch, 0.5, getattr(study, spend))
    copies = []
    if spend == "STREAM":
        np = site["_np"]
        site["_np"] = types.SimpleNamespace(copyto=lambda dst, src: copies.append(src.size) or np.copyto(dst, src),
                                            ones=np.ones, empty=np.empty)
    for _ in range(6):
        m.train_function()
    # 6 steps of ~20 ms; from the second on, each followed by a spin of half the
    # unmodified interval before it (~10 ms): 5 spins, about 170 ms in all
    assert now[0] == pytest.approx(6 * 0.02 + 5 * 0.01, rel=0.03)
    if spend == "STREAM":  # a mebibyte a clock reading: each of the ~500 readings of the spins copied one
        assert len(copies) > 400 and set(copies) == {2**20 // 8}


def test_the_step_injection_leaves_out_the_gaps_between_timed_calls(study, monkeypatch):
    """A worker times calls of several steps, with a native call between them:
    the step's time is the median interval, not the mean, which the gaps would double."""
    m, now, _ = _stepping(study, monkeypatch, 0.1)
    for call in range(100):  # 400 steps: past the 256 intervals kept
        start = now[0]
        for _ in range(4):
            m.train_function()
        if call >= 30:  # 4 steps of ~20 ms, each followed by a ~2 ms spin
            assert now[0] - start == pytest.approx(4 * (0.02 + 0.002), rel=0.03)
        now[0] += 0.1  # the native call and the rest between two timed calls


def test_the_step_injection_sorts_its_intervals_every_16th_call_once_warm(study, monkeypatch):
    """The median's sort runs inside the timed step: past the first 16 calls, once in 16."""
    m, _, site = _stepping(study, monkeypatch, 0.1)
    sorts = []
    site["sorted"] = lambda xs: sorts.append(len(xs)) or sorted(xs)  # found before the builtin
    for _ in range(16 + 16 * 20 + 1):
        m.train_function()
    assert len(sorts) == 16 + 20


def test_the_compute_injection_adds_its_fraction_of_multiply_adds(study):
    for fraction in (0.02, 0.03, 0.05):
        h = study.width_for(fraction)
        work = (784 * h + h * h + 10 * h) / (794 * 256 + 256 ** 2) - 1
        assert abs(work - fraction) < 0.0025


def test_b_is_this_python_behind_a_wrapper_either_way(study, tmp_path):
    for kind in ("identical", "compute"):
        b = study.make_b_python(tmp_path / kind, kind, 0.03)
        assert b.read_text().endswith(f'exec "{sys.executable}" "$@"\n')
    assert not (tmp_path / "identical" / "sitecustomize.py").exists()
    assert "WIDTH = 262\n" in (tmp_path / "compute" / "sitecustomize.py").read_text()


def _fresh(monkeypatch, *names):
    """sys.meta_path and these modules restored after the test: a site's hook may import them again."""
    import bench.measure.workloads as package

    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    for name in names:
        monkeypatch.delitem(sys.modules, name, raising=False)
        monkeypatch.setattr(package, name.rsplit(".", 1)[1], getattr(package, name.rsplit(".", 1)[1]))


def test_the_widened_mlp_starts_from_the_committed_weights_grown_with_zeros(study, monkeypatch):
    """Under workers v13 every timed train call starts from the committed weights
    and Adam state, and predict's gate compares with them: the widened MLP gets
    them grown to its width, and computes the same logits from them."""
    import numpy as np

    from bench.measure.workloads import gate

    _fresh(monkeypatch, "bench.measure.workloads.gate", "bench.measure.workloads.mlp")
    site = {}
    exec(study.widen_site(study.width_for(0.03)), site)
    fake = types.SimpleNamespace(load_reference=gate.load_reference, load_train_start=gate.load_train_start)
    site["widen_gate"](fake)
    ref, wide = gate.load_reference("mlp"), fake.load_reference("mlp")
    assert [w.shape for w in wide.weights] == [(784, 262), (262,), (262, 262), (262,), (262, 10), (10,)]

    def logits(w, x):
        h = np.maximum(x @ w[0] + w[1], 0)
        return np.maximum(h @ w[2] + w[3], 0) @ w[4] + w[5]

    x = np.random.default_rng(0).random((16, 784), dtype=np.float32)
    assert np.allclose(logits(wide.weights, x), logits(ref.weights, x), atol=1e-5)
    start, grown = gate.load_train_start("mlp"), fake.load_train_start("mlp")
    assert [m.shape for m in grown.momentums] == [w.shape for w in wide.weights] == [v.shape for v in grown.velocities]
    assert grown.iterations == start.iterations and np.array_equal(grown.momentums[0][:, :256], start.momentums[0])
    cnn = fake.load_reference("cnn")  # other models as committed
    assert all(np.array_equal(a, b) for a, b in zip(cnn.weights, gate.load_reference("cnn").weights))


def test_the_step_injection_slows_only_the_build_it_names(study, monkeypatch):
    """A reference build's workers inherit the injection's PYTHONPATH (bench_native.py
    --reference): a process of another venv (sys.prefix) is left as it is."""
    m, now, _ = _stepping(study, monkeypatch, 0.5, only=sys.prefix + "-another-venv")
    for _ in range(6):
        m.train_function()
    assert now[0] == pytest.approx(6 * 0.02, abs=1e-9)  # no spin, no clock readings
    m, now, _ = _stepping(study, monkeypatch, 0.5, only=sys.prefix)
    for _ in range(6):
        m.train_function()
    assert now[0] == pytest.approx(6 * 0.02 + 5 * 0.01, rel=0.03)


def test_the_step_injection_wraps_keras_when_the_process_imports_it(study, monkeypatch, tmp_path):
    """Installed before keras is imported (a worker's start), the site waits for the import:
    a probe first does not use it up, and once keras has run its Model is wrapped."""
    (tmp_path / "keras").mkdir()
    (tmp_path / "keras" / "__init__.py").write_text(
        "class Model:\n"
        "    def make_train_function(self):\n"
        "        self.train_function = lambda: None\n"
        "    make_predict_function = make_train_function\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "keras", raising=False)
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    site = {}
    exec(study.step_site(0.5), site)
    assert "keras" not in sys.modules  # nothing imported at the start
    assert importlib.util.find_spec("keras") is not None  # a probe, before the import
    import keras

    assert keras.Model.make_train_function.__qualname__.startswith("_wrap")
    m = keras.Model()
    m.make_train_function()
    assert m.train_function._injected
    assert not any(type(f).__name__ == "_AfterImport" for f in sys.meta_path)  # the hook has gone


def test_the_widened_site_patches_the_mlp_and_the_gate_when_the_worker_imports_them(study, monkeypatch):
    """The same hook (studies/site_hooks.py) serves the widened MLP: nothing at the start, each
    module patched once when imported, a probe first using nothing up, then the hook gone."""
    mlp, gate = "bench.measure.workloads.mlp", "bench.measure.workloads.gate"
    _fresh(monkeypatch, mlp, gate)
    site = {}
    exec(study.widen_site(300), site)
    assert mlp not in sys.modules and gate not in sys.modules
    assert importlib.util.find_spec(mlp) is not None  # a probe
    patched = []
    widen_gate = site["widen_gate"]
    site["widen_gate"] = lambda module: patched.append(module.__name__) or widen_gate(module)  # looked up per call
    assert importlib.import_module(mlp).build is site["build"]
    assert any(type(f).__name__ == "_AfterImport" for f in sys.meta_path)  # the gate still to come
    assert importlib.import_module(gate).load_reference("mlp").weights[0].shape == (784, 300)
    assert not any(type(f).__name__ == "_AfterImport" for f in sys.meta_path)
    assert patched == [gate]  # once
