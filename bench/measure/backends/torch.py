"""PyTorch: eager train and predict steps, on CPU or CUDA."""

from __future__ import annotations

from bench.measure.backends import installed_versions, omp_threads, threads

NAME = "torch"
PACKAGES = ("torch",)


def supports(mode: str) -> bool:
    return mode in ("train", "predict")


def prepare(env) -> dict:
    n = threads(env)
    if n is None:
        return {}
    settings = omp_threads(n)
    import torch

    torch.set_num_threads(n)  # intra-op pool (oneDNN/OpenMP kernels)
    return {**settings, "torch.set_num_threads": n}


def sync(x):
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return x


def versions() -> dict:
    return installed_versions(PACKAGES)


def device_info() -> dict:
    import torch

    info = {"threads": torch.get_num_threads()}
    if torch.cuda.is_available():
        info["device"] = f"cuda:{torch.cuda.get_device_name(0)}"
        # The CUDA runtime and cuDNN torch was built with (records before
        # issue 13 stored the runtime as "driver": "cuda X"; the driver now
        # comes from NVML, bench/measure/telemetry/nvml.py).
        info["cuda"] = torch.version.cuda
        info["cudnn"] = str(torch.backends.cudnn.version())
    else:
        info["device"] = "cpu"
    return info


def device_peak_bytes() -> int | None:
    """torch.cuda.max_memory_allocated: the caching allocator's peak of live tensors."""
    import torch

    if not torch.cuda.is_available():
        return None
    return int(torch.cuda.max_memory_allocated())


def reset_device_peak() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
