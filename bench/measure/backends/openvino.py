"""OpenVINO (the keras-openvino plugin): inference only, on its CPU device."""

from __future__ import annotations

from bench.measure.backends import installed_versions

NAME = "openvino"
PACKAGES = ("openvino", "keras-openvino")
OV_DEVICE = "CPU"  # keras_openvino.src.utils.get_device()


def supports(mode: str) -> bool:
    # keras-openvino's fit() raises NotImplementedError: train is `unsupported`.
    return mode == "predict"


def prepare(env) -> dict:
    return {}


def sync(x):
    # Compiled-model inference returns host numpy arrays: already synchronous.
    return x


def versions() -> dict:
    return installed_versions(PACKAGES)


def device_info() -> dict:
    import openvino as ov

    core = ov.Core()
    return {
        "device": f"{OV_DEVICE}:{core.get_property(OV_DEVICE, 'FULL_DEVICE_NAME')}",
        "precision_hint": str(core.get_property(OV_DEVICE, "INFERENCE_PRECISION_HINT")),
    }
