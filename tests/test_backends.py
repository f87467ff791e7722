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
    assert all(isinstance(k, str) and isinstance(x, str) for k, x in v.items())


def test_inference_only_backends_cannot_train():
    trains = {name: backends.get(name).supports("train") for name in backends.KNOWN}
    assert trains == {"jax": True, "torch": True, "tensorflow": True, "mlx": True,
                      "openvino": False, "numpy": False}


def test_mlx_device_setting_is_checked():
    with pytest.raises(ValueError, match="BENCH_MLX_DEVICE is 'metal'; expected 'cpu' or 'gpu'"):
        backends.get("mlx").prepare({"BENCH_MLX_DEVICE": "metal"})
