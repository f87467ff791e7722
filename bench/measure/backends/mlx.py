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


def native(model):
    """The benchmark's model in mlx.nn (bench/measure/native.py): NHWC as
    Keras's, the train step under mx.compile when Keras compiles its own
    (model.jit), evaluated every step as Keras's mlx trainer does."""
    return _Native(model)


class _Native:
    """bench/measure/native.py's native interface: data, load, weights, fit, predict."""

    def __init__(self, model):
        from functools import partial

        import mlx.core as mx
        import mlx.nn as nn

        class Flatten(nn.Module):
            def __call__(self, x):
                return x.reshape(x.shape[0], -1)

        self.mx, self.bs, adam = mx, model.batch_size, model.adam
        mods, shapes = [], iter([w.shape for w in model.weights[::2]])
        for layer in model.layers:
            if layer.kind == "dense":
                n_in, n_out = next(shapes)
                mods.append(nn.Linear(n_in, n_out))
            elif layer.kind == "conv":
                kh, kw, c_in, c_out = next(shapes)
                mods.append(nn.Conv2d(c_in, c_out, (kh, kw)))
            elif layer.kind == "pool":
                mods.append(nn.MaxPool2d(layer.size, stride=layer.size))
            else:
                mods.append(Flatten())
            if layer.activation == "relu":
                mods.append(nn.ReLU())
        self.net = nn.Sequential(*mods)
        self.opt = {"m": None, "v": None, "t": mx.array(0.0)}
        from mlx.utils import tree_map

        def loss_fn(net, x, y):
            return nn.losses.cross_entropy(net(x), y, reduction="mean")

        grad = nn.value_and_grad(self.net, loss_fn)

        def step(x, y):
            loss, grads = grad(self.net, x, y)
            t = self.opt["t"] + 1
            alpha = adam.learning_rate * mx.sqrt(1 - adam.beta_2 ** t) / (1 - adam.beta_1 ** t)
            m = tree_map(lambda a, g: a + (g - a) * (1 - adam.beta_1), self.opt["m"], grads)
            v = tree_map(lambda a, g: a + (g * g - a) * (1 - adam.beta_2), self.opt["v"], grads)
            self.net.update(tree_map(lambda p, a, b: p - (a * alpha) / (mx.sqrt(b) + adam.epsilon),
                                     self.net.parameters(), m, v))
            self.opt.update(m=m, v=v, t=t)
            return loss

        state = [self.net.state, self.opt]
        self._step = partial(mx.compile, inputs=state, outputs=state)(step) if model.jit else step
        self._forward = partial(mx.compile, inputs=[self.net.state])(self.net) if model.jit else self.net
        self._tree_map = tree_map

    def data(self, x, y=None):
        return x, y  # numpy: each batch becomes an mx.array as Keras's data adapter makes it

    def load(self, weights) -> None:
        mx = self.mx
        converted = []
        for w in weights:  # Keras (in, out) / (kh, kw, in, out) -> mlx (out, in) / (out, kh, kw, in)
            converted.append(mx.array(w.T if w.ndim == 2 else w.transpose(3, 0, 1, 2) if w.ndim == 4 else w))
        params, it = self.net.parameters(), iter(converted)
        self.net.update(self._tree_map(lambda p: next(it), params))
        zeros = self._tree_map(lambda p: mx.zeros_like(p), self.net.parameters())
        self.opt.update(m=zeros, v=self._tree_map(lambda p: mx.zeros_like(p), self.net.parameters()),
                        t=mx.array(0.0))
        mx.eval(self.net.parameters(), self.opt)

    def weights(self) -> list:
        import numpy as np
        from mlx.utils import tree_flatten

        out = []
        for _, w in tree_flatten(self.net.parameters()):
            w = np.array(w)
            out.append(w.T if w.ndim == 2 else w.transpose(1, 2, 3, 0) if w.ndim == 4 else w)
        return out

    def fit(self, data, steps: int) -> float:
        mx, bs = self.mx, self.bs
        x, y = data
        loss = None
        for i in range(steps):
            loss = self._step(mx.array(x[i * bs:(i + 1) * bs]), mx.array(y[i * bs:(i + 1) * bs]))
            mx.eval(loss, self.net.state, self.opt)
        return loss.item()

    def predict(self, data, steps: int | None):
        import numpy as np

        mx, bs, x = self.mx, self.bs, data[0]
        rows = len(x) if steps is None else steps * bs
        return np.concatenate([np.array(self._forward(mx.array(x[i:i + bs]))) for i in range(0, rows, bs)])


def profile(call) -> dict:
    # What MLX offers (0.32): mx.metal.start_capture/stop_capture, a Metal GPU
    # capture for Xcode's debugger (a .gputrace bundle, no CPU ops, not readable
    # here). No op timings reach Python, so the record says why instead.
    return {"unavailable": "MLX has no op-level profiler in Python (mx.metal.start_capture writes a "
                           "Metal .gputrace for Xcode only)"}
