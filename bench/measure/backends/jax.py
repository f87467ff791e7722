"""JAX: XLA-compiled train and predict steps, on CPU or CUDA."""

from __future__ import annotations

from bench.measure.backends import installed_versions, omp_threads, threads
from bench.measure.telemetry.nvml import cuda_version

NAME = "jax"
# The CUDA plugins too: a new plugin can move GPU figures with jax unchanged (an H100
# machine's jax 0.11.2 ran on jax-cuda13-plugin, which records before 2026-12-06 missed).
PACKAGES = ("jax", "jaxlib", "jax-cuda12-plugin", "jax-cuda12-pjrt", "jax-cuda13-plugin", "jax-cuda13-pjrt")


def supports(mode: str) -> bool:
    return mode in ("train", "predict")


def prepare(env) -> dict:
    # JAX picks its platform itself (JAX_PLATFORMS in the device's env pins it
    # when a device needs that). Threads: XLA:CPU sizes its Eigen pool from the
    # CPUs it may use (the worker's affinity); one thread is XLA's own flag.
    n = threads(env)
    if n is None:
        return {}
    import os

    settings = omp_threads(n)
    if n == 1:
        flags = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
        os.environ["XLA_FLAGS"] = " ".join(filter(None, [os.environ.get("XLA_FLAGS"), flags]))
        settings["XLA_FLAGS"] = os.environ["XLA_FLAGS"]
    return settings


def sync(x):
    import jax

    return jax.block_until_ready(x)


def versions() -> dict:
    return installed_versions(PACKAGES)


def device_info() -> dict:
    import jax

    devices = jax.devices()
    d = devices[0]
    info = {"device": f"{d.platform}:{d.device_kind}", "count": len(devices)}
    if d.platform != "cpu":
        info["cuda"] = cuda_runtime(getattr(d.client, "platform_version", None))
        info["cudnn"] = _cudnn_version()
    return info


def cuda_runtime(platform_version: str | None) -> str | None:
    """The CUDA runtime as torch's record gives it ("13.0"), from jax's platform_version
    ("cuda 13000", seen on an H100 machine: studies/gpu_check.sh); other text as it is.
    Records before 2026-12-06 hold jax's own text (before issue 13 under "driver")."""
    number = (platform_version or "").removeprefix("cuda ")
    return cuda_version(int(number)) if number.isdigit() else platform_version


def _cudnn_version() -> str | None:
    try:
        from jax._src.lib import cuda_versions  # private, but the only place jax says it
    except ImportError:
        return None
    get = getattr(cuda_versions, "cudnn_get_version", None) if cuda_versions else None
    return str(get()) if get else None


def device_peak_bytes() -> int | None:
    """The device's memory_stats() peak_bytes_in_use (None on CPU, where jax keeps no stats)."""
    import jax

    stats = jax.devices()[0].memory_stats()
    if not stats or "peak_bytes_in_use" not in stats:
        return None
    return int(stats["peak_bytes_in_use"])


def reset_device_peak() -> None:
    pass  # jax has no reset: its peak_bytes_in_use covers the whole process
