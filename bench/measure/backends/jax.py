"""JAX: XLA-compiled train and predict steps, on CPU or CUDA."""

from __future__ import annotations

from bench.measure.backends import installed_versions

NAME = "jax"
PACKAGES = ("jax", "jaxlib", "jax-cuda12-plugin", "jax-cuda12-pjrt")


def supports(mode: str) -> bool:
    return mode in ("train", "predict")


def prepare(env) -> dict:
    # Nothing to set: JAX picks its platform itself (JAX_PLATFORMS in the
    # device's env pins it when a device needs that).
    return {}


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
        info["driver"] = getattr(d.client, "platform_version", None)
    return info
