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
