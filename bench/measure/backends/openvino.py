"""OpenVINO (the keras-openvino plugin): inference only, on its CPU device."""

from __future__ import annotations

from bench.measure.backends import installed_versions, threads

NAME = "openvino"
PACKAGES = ("openvino", "keras-openvino")
OV_DEVICE = "CPU"  # keras_openvino.src.utils.get_device()


def supports(mode: str) -> bool:
    # keras-openvino's fit() raises NotImplementedError: train is `unsupported`.
    return mode == "predict"


def prepare(env) -> dict:
    n = threads(env)
    if n is None:
        return {}
    import openvino as ov

    # keras-openvino compiles through openvino.compile_model, which makes a new
    # Core each time (so a property set on a Core of ours would not reach it):
    # pass INFERENCE_NUM_THREADS in every compile's config instead.
    plain = ov.compile_model

    def compile_model(model, device_name="AUTO", config=None):
        return plain(model, device_name, {"INFERENCE_NUM_THREADS": n, **(config or {})})

    ov.compile_model = compile_model
    return {"INFERENCE_NUM_THREADS": n}


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


def device_peak_bytes() -> None:
    return None  # OpenVINO on CPU: host memory only (the worker's peak RSS)


def reset_device_peak() -> None:
    pass


def native(model):
    """No native model yet: OpenVINO builds inference graphs, not training
    loops; a native predict (openvino.Model from opset ops) is left for later."""
    from bench.measure.native import Unsupported

    return Unsupported("no native OpenVINO model yet: OpenVINO has no training loop, and a native "
                       "predict graph is not written (bench/measure/backends/openvino.py)")


def profile(call) -> dict:
    # OpenVINO's per-op counters (PERF_COUNT, InferRequest.get_profiling_info)
    # belong to a compiled model that Keras's openvino backend builds and keeps
    # inside itself: not reachable through one shape for every backend yet.
    return {"unavailable": "OpenVINO's per-op counters (PERF_COUNT) sit inside the compiled model Keras's "
                           "backend keeps to itself; not read yet"}
