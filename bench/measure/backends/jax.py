"""JAX: XLA-compiled train and predict steps, on CPU or CUDA."""

from __future__ import annotations

import re

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


def native(model):
    """The benchmark's model in pure jax.numpy under jax.jit (bench/measure/native.py):
    a jitted train step (the state donated, as Keras's jax trainer does) and predict."""
    return _Native(model)


class _Native:
    """bench/measure/native.py's native interface: data, load, weights, fit, predict."""

    def __init__(self, model):
        import jax
        import jax.numpy as jnp
        from jax import lax

        self.bs, adam, layers = model.batch_size, model.adam, model.layers

        def forward(params, x):
            i = 0
            for layer in layers:
                if layer.kind == "dense":
                    x = x @ params[i] + params[i + 1]
                elif layer.kind == "conv":
                    x = lax.conv_general_dilated(x, params[i], (1, 1), "VALID",
                                                 dimension_numbers=("NHWC", "HWIO", "NHWC")) + params[i + 1]
                elif layer.kind == "pool":
                    window = (1, *layer.size, 1)
                    x = lax.reduce_window(x, -jnp.inf, lax.max, window, window, "VALID")
                else:  # flatten, NHWC order as Keras's
                    x = x.reshape(x.shape[0], -1)
                if layer.activation == "relu":
                    x = jnp.maximum(x, 0)
                i += layer.weights
            return x

        def loss_fn(params, x, y):
            logits = forward(params, x)
            picked = jnp.take_along_axis(logits, y[:, None], axis=-1)[:, 0]
            return jnp.mean(jax.nn.logsumexp(logits, axis=-1) - picked)

        def step(state, x, y):
            params, m, v, t = state
            loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
            t = t + 1
            alpha = adam.learning_rate * jnp.sqrt(1 - adam.beta_2 ** t) / (1 - adam.beta_1 ** t)
            m = [a + (g - a) * (1 - adam.beta_1) for a, g in zip(m, grads)]
            v = [a + (g * g - a) * (1 - adam.beta_2) for a, g in zip(v, grads)]
            params = [p - (a * alpha) / (jnp.sqrt(b) + adam.epsilon) for p, a, b in zip(params, m, v)]
            return (params, m, v, t), loss

        self._jnp = jnp
        self._step = jax.jit(step, donate_argnums=0)
        self._forward = jax.jit(forward)
        self.state = None

    def data(self, x, y=None):
        return x, y  # numpy: each batch goes to the device as Keras's data adapter sends it

    def load(self, weights) -> None:
        jnp = self._jnp
        params = [jnp.asarray(w) for w in weights]
        self.state = (params, [jnp.zeros_like(p) for p in params], [jnp.zeros_like(p) for p in params],
                      jnp.zeros((), jnp.float32))

    def weights(self) -> list:
        import numpy as np

        return [np.asarray(p) for p in self.state[0]]

    def fit(self, data, steps: int) -> float:
        x, y = data
        bs, loss = self.bs, None
        for i in range(steps):
            self.state, loss = self._step(self.state, x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs])
        return float(loss)

    def predict(self, data, steps: int | None):
        import numpy as np

        x, bs = data[0], self.bs
        rows = len(x) if steps is None else steps * bs
        params = self.state[0]
        return np.concatenate([np.asarray(self._forward(params, x[i:i + bs])) for i in range(0, rows, bs)])


# -- profile (bench/measure/profiling.py) ---------------------------------------

_COUNTS: dict[str, int] = {}  # jax.monitoring's compile events in this process, by name
_TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"      # a function traced (again)
_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"  # XLA compiled one


def _count_compiles() -> None:
    import jax

    if not _COUNTS:
        _COUNTS["listening"] = 1
        jax.monitoring.register_event_duration_secs_listener(
            lambda event, duration, **kw: _COUNTS.__setitem__(event, _COUNTS.get(event, 0) + 1))


def profile(call):
    """jax.profiler over one call: a trace to a temporary folder, read back with
    jax.profiler.ProfileData (no TensorBoard needed). The ops are the events
    that name an XLA op (the `hlo_op` stat): on a GPU those of the device
    planes, on a CPU the thunks XLA runs on its host threads. An op's
    instances (`fusion.3`, `fusion.12`) count as one op, `fusion`: XLA numbers
    them per compile, and a diff across nights matches names.
    Python tracing stays off (python_tracer_level 0): it would time Keras's
    Python, not the ops, and slow the call down."""
    import glob
    import tempfile
    import time

    import jax

    from bench.measure.profiling import Reading

    _count_compiles()
    before = dict(_COUNTS)
    options = jax.profiler.ProfileOptions()
    options.python_tracer_level = 0
    with tempfile.TemporaryDirectory(prefix="bench-jax-profile-") as folder:
        jax.profiler.start_trace(folder, profiler_options=options)
        try:
            t0 = time.perf_counter_ns()
            call()
            wall = time.perf_counter_ns() - t0
        finally:
            jax.profiler.stop_trace()
        found = glob.glob(f"{folder}/**/*.xplane.pb", recursive=True)
        if not found:
            return {"unavailable": "jax.profiler wrote no .xplane.pb trace"}
        data = jax.profiler.ProfileData.from_file(found[0])
    ops, spans = _xla_ops(data)
    return Reading("jax.profiler", ops, _busy(spans), wall,
                   _COUNTS.get(_COMPILE_EVENT, 0) - before.get(_COMPILE_EVENT, 0),
                   _COUNTS.get(_TRACE_EVENT, 0) - before.get(_TRACE_EVENT, 0))


_INSTANCE = re.compile(r"\.\d+$")


def _op_name(hlo_op: str) -> str:
    """'fusion.12' -> 'fusion', 'copy.3' -> 'copy' (XLA's instance numbers dropped)."""
    return _INSTANCE.sub("", hlo_op)


def _xla_ops(data) -> tuple[dict, list]:
    """({op: (ns, count)}, [(start_ns, end_ns)]) of the events naming an XLA op,
    from the device planes when there are any, else from the host's."""
    planes = list(data.planes)
    device = [p for p in planes if p.name.startswith("/device:")]
    ops: dict[str, tuple[int, int]] = {}
    spans = []
    for plane in device or planes:
        for line in plane.lines:
            for ev in line.events:
                hlo = next((v for k, v in ev.stats if k == "hlo_op"), None)
                if not isinstance(hlo, str):
                    continue
                ns, n = ops.get(_op_name(hlo), (0, 0))
                ops[_op_name(hlo)] = (ns + int(ev.duration_ns), n + 1)
                spans.append((ev.start_ns, ev.start_ns + ev.duration_ns))
    return ops, spans


def _busy(spans: list) -> int:
    """Nanoseconds covered by at least one span (ops on parallel threads or streams count once)."""
    total, end = 0, None
    for s, e in sorted(spans):
        if end is None or s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return int(total)
