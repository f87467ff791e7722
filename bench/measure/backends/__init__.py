"""Backends behind one small interface: `get(keras_backend_name)`.

Every module here has the same shape, so the harness never branches on a
backend's name:

  NAME                      the KERAS_BACKEND it serves
  supports(mode) -> bool    can this backend run `mode` ('train', 'predict')?
  prepare(env) -> dict      called in the child before Keras is imported;
                            `env` is the device's env settings (plus
                            THREADS_VAR, the device's `threads`, which each
                            backend applies through its own settings);
                            returns the settings it applied (recorded)
  sync(x) -> x              block until the device has finished computing x
  versions() -> dict        {package: version} of what is installed (no import)
  device_info() -> dict     the device Keras computes on: name, cuda, cudnn, ...
                            (imports the backend; call it in the child)
  device_peak_bytes()       peak device memory in bytes since the last
                            reset_device_peak() (or since the process began
                            where the backend cannot reset it), or None where
                            the backend has no device memory to report (CPU)
  reset_device_peak()       start a new peak (before each benchmark of a worker)
  native(model)             the benchmark's model in the backend's own code
                            (bench/measure/native.py: the model in native terms
                            in, an object with data/load/weights/fit/predict
                            out), or native.Unsupported(reason) where there is none
  profile(call)             run call() once under the backend's own profiler:
                            a bench.measure.profiling.Reading, or
                            {"unavailable": reason} where it has none

`versions()` reads package metadata only, so the parent process can fill in
the environment even when the backend cannot be imported.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from types import ModuleType

# KERAS_BACKEND name -> module in this package (`jax` would shadow nothing:
# imports are absolute, so `import jax` inside jax.py is the real jax).
_MODULES = {
    "jax": "jax",
    "torch": "torch",
    "tensorflow": "tensorflow",
    "mlx": "mlx",
    "openvino": "openvino",
    "numpy": "numpy",
}
KNOWN = tuple(_MODULES)
THREADS_VAR = "BENCH_THREADS"  # benchmarks.yaml devices.<d>.threads, passed to prepare(env)


def threads(env) -> int | None:
    """The device's `threads` from prepare's env, or None when not set."""
    value = env.get(THREADS_VAR)
    return int(value) if value else None


def omp_threads(n: int) -> dict:
    """The OpenMP/MKL/OpenBLAS pool sizes (read when the library loads: set them
    before importing it). Shared by the backends whose kernels use those pools."""
    import os

    settings = {k: str(n) for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    os.environ.update(settings)
    return settings


INTERFACE = ("NAME", "supports", "prepare", "sync", "versions", "device_info", "device_peak_bytes",
             "reset_device_peak", "native", "profile")


def get(keras_backend: str) -> ModuleType:
    """The module for `keras_backend`; ValueError listing the known ones otherwise."""
    if keras_backend not in _MODULES:
        raise ValueError(
            f"unknown keras backend {keras_backend!r}; expected one of: {', '.join(KNOWN)}"
        )
    return importlib.import_module(f"{__name__}.{_MODULES[keras_backend]}")


def installed_versions(packages: tuple[str, ...]) -> dict[str, str]:
    """{package: version} for the installed ones among `packages`, plus Keras and
    numpy: every backend's input data and the reference workload run on numpy, so
    a new numpy can move a night (bench/analyse/host.py compares host readings
    under one numpy only)."""
    out = {}
    for name in ("keras-nightly", "keras", "numpy", *packages):
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return out
