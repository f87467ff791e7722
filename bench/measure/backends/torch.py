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


def native(model):
    """The benchmark's model as a torch.nn.Module, eager as Keras's torch
    backend runs it (bench/measure/native.py), on the device Keras uses."""
    return _Native(model)


class _Native:
    """bench/measure/native.py's native interface: data, load, weights, fit, predict.

    Images go NCHW (torch's own layout, converted once, untimed); the weights
    are converted from Keras's layout on load and back in weights(). Adam is
    Keras's arithmetic (native.Adam) in torch's multi-tensor (_foreach) ops,
    as torch.optim.Adam(foreach=True) and Keras's torch optimizer compute it."""

    def __init__(self, model):
        import torch
        from torch import nn

        self.torch, self.bs, self.adam = torch, model.batch_size, model.adam
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        mods, self.kinds, shapes, flat = [], [], iter([w.shape for w in model.weights[::2]]), None
        for layer in model.layers:
            if layer.kind == "dense":
                n_in, n_out = next(shapes)
                mods.append(nn.Linear(n_in, n_out))
                self.kinds.append(("dense", flat))
                flat = None
            elif layer.kind == "conv":
                kh, kw, c_in, c_out = next(shapes)
                mods.append(nn.Conv2d(c_in, c_out, (kh, kw)))
                self.kinds.append(("conv", None))
            elif layer.kind == "pool":
                mods.append(nn.MaxPool2d(layer.size))
            else:
                mods.append(nn.Flatten())
                flat = layer.size if len(layer.size) == 3 else None  # (h, w, c): Keras flattens NHWC
            if layer.activation == "relu":
                mods.append(nn.ReLU())
        self.net = nn.Sequential(*mods).to(self.device)
        self.params = [p for p in self.net.parameters()]
        self.t, self.m, self.v = 0, [], []

    def data(self, x, y=None):
        import numpy as np

        torch = self.torch
        x = np.ascontiguousarray(x.transpose(0, 3, 1, 2)) if x.ndim == 4 else x
        return torch.from_numpy(x), (torch.from_numpy(y.astype(np.int64)) if y is not None else None)

    def _to_torch(self, w, kind):
        what, flat = kind
        if what == "conv":
            return w.transpose(3, 2, 0, 1) if w.ndim == 4 else w
        if w.ndim == 2 and flat is not None:  # rows (h, w, c) -> (c, h, w), then (out, in)
            h, wd, c = flat
            return w.reshape(h, wd, c, -1).transpose(2, 0, 1, 3).reshape(h * wd * c, -1).T
        return w.T if w.ndim == 2 else w

    def _to_keras(self, w, kind):
        what, flat = kind
        if what == "conv":
            return w.transpose(2, 3, 1, 0) if w.ndim == 4 else w
        if w.ndim == 2 and flat is not None:
            h, wd, c = flat
            return w.T.reshape(c, h, wd, -1).transpose(1, 2, 0, 3).reshape(h * wd * c, -1)
        return w.T if w.ndim == 2 else w

    def load(self, weights) -> None:
        import numpy as np

        torch = self.torch
        with torch.no_grad():
            for i, (p, w) in enumerate(zip(self.params, weights)):
                p.copy_(torch.from_numpy(np.ascontiguousarray(self._to_torch(w, self.kinds[i // 2]))))
                p.grad = None
        self.t = 0
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]

    def weights(self) -> list:
        return [self._to_keras(p.detach().cpu().numpy(), self.kinds[i // 2]) for i, p in enumerate(self.params)]

    def fit(self, data, steps: int) -> float:
        torch, a, bs = self.torch, self.adam, self.bs
        x, y = data
        loss = None
        for i in range(steps):
            xb = x[i * bs:(i + 1) * bs].to(self.device, non_blocking=True)
            yb = y[i * bs:(i + 1) * bs].to(self.device, non_blocking=True)
            loss = torch.nn.functional.cross_entropy(self.net(xb), yb)
            for p in self.params:
                p.grad = None
            loss.backward()
            with torch.no_grad():
                self.t += 1
                grads = [p.grad for p in self.params]
                torch._foreach_lerp_(self.m, grads, 1 - a.beta_1)  # m += (g - m)(1 - beta_1)
                torch._foreach_lerp_(self.v, torch._foreach_mul(grads, grads), 1 - a.beta_2)
                denom = torch._foreach_sqrt(self.v)
                torch._foreach_add_(denom, a.epsilon)
                step = torch._foreach_mul(self.m, a.alpha(self.t))
                torch._foreach_div_(step, denom)
                torch._foreach_sub_(self.params, step)
        return float(loss.detach())

    def predict(self, data, steps: int | None):
        import numpy as np

        torch, bs, x = self.torch, self.bs, data[0]
        rows = len(x) if steps is None else steps * bs
        with torch.no_grad():
            return np.concatenate([self.net(x[i:i + bs].to(self.device)).cpu().numpy() for i in range(0, rows, bs)])


def profile(call):
    """torch.profiler over one call, summed by op (key_averages): each op's
    self time, on the GPU where torch runs on one (its kernels), else on the
    CPU (Keras's torch backend runs eagerly: the aten ops run one after
    another on the calling thread, so their self times add up without
    overlap). Compiles and retraces: torch._dynamo's counters when Keras
    compiled through it (jit_compile), else 0 (nothing compiled)."""
    import time

    import torch
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    from bench.measure.profiling import Reading

    gpu = torch.cuda.is_available()
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if gpu else [])
    before = _dynamo_counts()
    with torch_profile(activities=activities) as prof:
        t0 = time.perf_counter_ns()
        call()
        if gpu:
            torch.cuda.synchronize()
        wall = time.perf_counter_ns() - t0
    after = _dynamo_counts()
    ops = {}
    for e in prof.key_averages():
        us = e.self_device_time_total if gpu else e.self_cpu_time_total
        if us > 0:
            ops[e.key] = (int(us * 1000), int(e.count))
    return Reading("torch.profiler", ops, sum(ns for ns, _ in ops.values()), wall,
                   after[0] - before[0], after[1] - before[1])


def _dynamo_counts() -> tuple[int, int]:
    """(graphs compiled, recompiles) so far; (0, 0) when torch._dynamo was never imported."""
    import sys

    dynamo = sys.modules.get("torch._dynamo.utils")
    if dynamo is None:
        return 0, 0
    counters = dynamo.counters
    return int(counters["stats"].get("unique_graphs", 0)), int(sum(counters["recompiles"].values()))
