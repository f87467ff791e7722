"""The machine's state around a run, for the record's environment (issue 13).

`bench run` takes telemetry.snapshot() before a backend's benchmarks and
again after them; `environment_block` turns both, and what the children
reported, into these environment keys (every one optional for readers):

  gpu            NVML: driver, cuda_driver, devices [{name, clocks, power,
                 temperature, throttle_reasons, memory, processes}] or
                 {"unavailable": reason}                        (at the start)
  cpu_state      model, governor, frequency_mhz, load_average, steal_percent,
                 pressure, logical_cpus                          (at the start)
  telemetry_end  {"gpu": ..., "cpu_state": ...} at the end of the run
  thread_settings  the environment variables that set thread counts, the
                 CPUs `bench run` may run on, and what the backend chose
                 (`threads`/`cpus` are protocol 2's configured settings)
  keras_config   {"floatx", "dtype_policy"} as the children saw them
  driver         the NVML driver version when NVML is there (records before
                 issue 13 held the CUDA runtime here, "cuda 12.8"; the
                 runtime is now accelerator.cuda, cuDNN accelerator.cudnn)
"""

from __future__ import annotations

import os
from typing import Mapping

# Variables that set how many threads the math libraries use.
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
               "TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS", "XLA_FLAGS")


def threads(environ: Mapping[str, str], children: list[dict]) -> dict:
    out: dict = {"env": {v: environ[v] for v in THREAD_VARS if v in environ}}
    try:
        out["affinity_cpus"] = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # macOS has no sched_getaffinity
        out["affinity_cpus"] = os.cpu_count()
    for child in children:
        chosen = child.get("device", {}).get("threads")
        if chosen is not None:
            out["backend_threads"] = chosen  # e.g. torch.get_num_threads()
            break
    return out


def environment_block(start: Mapping, end: Mapping, children: list[dict], environ: Mapping[str, str]) -> dict:
    """The environment keys above from two telemetry snapshots and the children's reports (pure)."""
    out = {"gpu": start.get("gpu"), "cpu_state": start.get("cpu_state"),
           "telemetry_end": dict(end), "thread_settings": threads(environ, children)}
    config = next((c["keras_config"] for c in children if c.get("keras_config")), None)
    if config:
        out["keras_config"] = config
    driver = (start.get("gpu") or {}).get("driver")
    if isinstance(driver, str) and driver:
        out["driver"] = driver
    return {k: v for k, v in out.items() if v is not None}
