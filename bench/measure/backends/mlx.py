"""MLX (the keras-mlx plugin): Metal GPU or CPU, chosen by BENCH_MLX_DEVICE.

The device comes from the device's env in benchmarks.yaml
(`BENCH_MLX_DEVICE: gpu|cpu`); unset means MLX's own default.
"""

from __future__ import annotations

from bench.measure.backends import installed_versions, omp_threads, threads

NAME = "mlx"
PACKAGES = ("mlx", "mlx-cpu", "mlx-metal", "keras-mlx")
DEVICE_VAR = "BENCH_MLX_DEVICE"


def supports(mode: str) -> bool:
    return mode in ("train", "predict")


def prepare(env) -> dict:
    # MLX has no thread setting of its own: its CPU work is bounded by the
    # worker's CPU affinity (devices.<d>.cpus); OpenMP/BLAS pools get `threads`.
    n = threads(env)
    applied = omp_threads(n) if n is not None else {}
    choice = env.get(DEVICE_VAR)
    if not choice:
        return applied
    if choice not in ("cpu", "gpu"):
        raise ValueError(f"{DEVICE_VAR} is {choice!r}; expected 'cpu' or 'gpu'")
    import mlx.core as mx

    if choice == "gpu" and not mx.metal.is_available():
        raise RuntimeError(f"{DEVICE_VAR}=gpu but this MLX has no Metal GPU (mlx[cpu]?)")
    mx.set_default_device(mx.gpu if choice == "gpu" else mx.cpu)
    return {**applied, "mlx_device": choice}


def sync(x):
    import mlx.core as mx

    if isinstance(x, mx.array):
        mx.eval(x)
    mx.synchronize()
    return x


def versions() -> dict:
    return installed_versions(PACKAGES)


def device_info() -> dict:
    import mlx.core as mx

    info = {"device": str(mx.default_device())}
    if mx.metal.is_available():
        meta = mx.metal.device_info()
        info["accelerator"] = str(meta.get("device_name") or meta.get("architecture", "metal"))
    return info


def device_peak_bytes() -> int | None:
    """mx.get_peak_memory(): MLX's allocator peak (Metal buffers on a GPU; the
    arrays' memory with mlx[cpu])."""
    import mlx.core as mx

    get = getattr(mx, "get_peak_memory", None) or mx.metal.get_peak_memory
    return int(get())


def reset_device_peak() -> None:
    import mlx.core as mx

    (getattr(mx, "reset_peak_memory", None) or mx.metal.reset_peak_memory)()


def profile(call) -> dict:
    # What MLX offers (0.32): mx.metal.start_capture/stop_capture, a Metal GPU
    # capture for Xcode's debugger (a .gputrace bundle, no CPU ops, not readable
    # here). No op timings reach Python, so the record says why instead.
    return {"unavailable": "MLX has no op-level profiler in Python (mx.metal.start_capture writes a "
                           "Metal .gputrace for Xcode only)"}
