"""PyTorch: eager train and predict steps, on CPU or CUDA."""

from __future__ import annotations

from bench.measure.backends import installed_versions

NAME = "torch"
PACKAGES = ("torch",)


def supports(mode: str) -> bool:
    return mode in ("train", "predict")


def prepare(env) -> dict:
    return {}


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
        info["driver"] = f"cuda {torch.version.cuda}"
    else:
        info["device"] = "cpu"
    return info
