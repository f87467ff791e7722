"""TensorFlow: graph-compiled train and predict steps, on CPU or GPU."""

from __future__ import annotations

from bench.measure.backends import installed_versions

NAME = "tensorflow"
PACKAGES = ("tensorflow", "tensorflow-cpu", "tf-nightly")


def supports(mode: str) -> bool:
    return mode in ("train", "predict")


def prepare(env) -> dict:
    return {}


def sync(x):
    # Keras returns host values from fit/predict; numpy() forces any tensor.
    return x.numpy() if hasattr(x, "numpy") else x


def versions() -> dict:
    return installed_versions(PACKAGES)


def device_info() -> dict:
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    if gpus:
        details = tf.config.experimental.get_device_details(gpus[0])
        return {"device": f"gpu:{details.get('device_name', gpus[0].name)}", "count": len(gpus)}
    return {"device": "cpu"}


def device_peak_bytes() -> int | None:
    import tensorflow as tf

    if not tf.config.list_physical_devices("GPU"):
        return None
    return int(tf.config.experimental.get_memory_info("GPU:0")["peak"])


def reset_device_peak() -> None:
    import tensorflow as tf

    if tf.config.list_physical_devices("GPU"):
        tf.config.experimental.reset_memory_stats("GPU:0")


def native(model):
    """No native model yet: issue 56 asks for jax, torch and mlx; a tf.function
    and tf.Module counterpart is left for later."""
    from bench.measure.native import Unsupported

    return Unsupported("no native TensorFlow model yet: issue 56 covers jax, torch and mlx "
                       "(bench/measure/backends/tensorflow.py)")


def profile(call) -> dict:
    # tf.profiler writes an XSpace trace like jax's, but reading it back needs
    # the TensorBoard profile plugin, which the benchmark venv does not install.
    return {"unavailable": "tf.profiler's trace needs the TensorBoard profile plugin to read; not installed"}
