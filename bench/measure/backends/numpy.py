"""NumPy: Keras's reference backend, inference only (no gradients)."""

from __future__ import annotations

from bench.measure.backends import installed_versions

NAME = "numpy"
PACKAGES = ("numpy",)


def supports(mode: str) -> bool:
    # The numpy backend cannot compute gradients: train is `unsupported`.
    return mode == "predict"


def prepare(env) -> dict:
    return {}


def sync(x):
    return x


def versions() -> dict:
    return installed_versions(PACKAGES)


def device_info() -> dict:
    return {"device": "cpu"}


def device_peak_bytes() -> None:
    return None  # host memory only (the worker's peak RSS)


def reset_device_peak() -> None:
    pass


def native(model):
    """No native model: Keras's numpy backend is numpy itself, without gradients
    (train is unsupported), so there is no Keras overhead to set apart."""
    from bench.measure.native import Unsupported

    return Unsupported("the numpy backend has no native counterpart: Keras's numpy backend runs numpy "
                       "itself, without gradients (bench/measure/backends/numpy.py)")


def profile(call) -> dict:
    return {"unavailable": "NumPy has no profiler of its own (its ops are plain C calls)"}
