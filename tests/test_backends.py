"""bench/measure/backends: one dispatch point, every module the same shape."""

import pytest

from bench.measure import backends

MODULES = [backends.get(name) for name in backends.KNOWN]


def test_get_refuses_an_unknown_backend_listing_the_known_ones():
    with pytest.raises(ValueError) as e:
        backends.get("paddle")
    assert "unknown keras backend 'paddle'" in str(e.value)
    for name in ("jax", "torch", "tensorflow", "mlx", "openvino", "numpy"):
        assert name in str(e.value)


@pytest.mark.parametrize("module", MODULES, ids=backends.KNOWN)
def test_every_backend_module_has_the_same_interface(module):
    for name in backends.INTERFACE:
        assert hasattr(module, name), f"{module.__name__} lacks {name}"
    assert module.supports("predict")
    assert not module.supports("eval")
    assert isinstance(module.prepare({}), dict)


@pytest.mark.parametrize("module", MODULES, ids=backends.KNOWN)
def test_versions_read_package_metadata(module):
    v = module.versions()
    assert v["keras-nightly"]  # installed in every environment that runs the harness
    # every backend's data and the reference workload run on numpy (bench/analyse/host.py)
    import numpy
    assert v["numpy"] == numpy.__version__
    assert all(isinstance(k, str) and isinstance(x, str) for k, x in v.items())


def test_inference_only_backends_cannot_train():
    trains = {name: backends.get(name).supports("train") for name in backends.KNOWN}
    assert trains == {"jax": True, "torch": True, "tensorflow": True, "mlx": True,
                      "openvino": False, "numpy": False}


def test_mlx_device_setting_is_checked():
    with pytest.raises(ValueError, match="BENCH_MLX_DEVICE is 'metal'; expected 'cpu' or 'gpu'"):
        backends.get("mlx").prepare({"BENCH_MLX_DEVICE": "metal"})


def test_jax_on_cuda_records_the_runtime_as_torch_does(monkeypatch):
    # What jax 0.11.2 gave on an H100 machine (studies/gpu_check.sh): platform_version
    # "cuda 13000"; torch there gave "13.0", and the dashboard prints "CUDA <value>".
    jax = pytest.importorskip("jax")

    class Client:
        platform_version = "cuda 13000"

    class Device:
        platform, device_kind, client = "gpu", "NVIDIA H100 80GB HBM3", Client()

    monkeypatch.setattr(jax, "devices", lambda: [Device()])
    info = backends.get("jax").device_info()
    assert (info["device"], info["count"], info["cuda"]) == ("gpu:NVIDIA H100 80GB HBM3", 1, "13.0")
    assert backends.get("jax").cuda_runtime("rocm 60300") == "rocm 60300"  # other text as jax gave it


def test_jax_versions_include_its_cuda_plugin(monkeypatch):
    import importlib.metadata

    real = importlib.metadata.version
    plugin = {"jax-cuda13-plugin": "0.11.2", "jax-cuda13-pjrt": "0.11.2"}
    monkeypatch.setattr(importlib.metadata, "version", lambda name: plugin.get(name) or real(name))
    assert {k: v for k, v in backends.get("jax").versions().items() if k in plugin} == plugin
