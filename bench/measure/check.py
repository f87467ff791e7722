"""`bench check`: a pre-flight check of the machine, like `pyperf system check`.

`readings()` gathers the facts (MET's telemetry readers for the CPU and NVIDIA
GPUs, psutil for swap and memory, the environment for thread settings);
`findings(readings, device)` turns them into one finding per topic, each
{"topic", "status": "ok"|"warn"|"unknown", "value", "advice"} (pure, tested
with fixtures). `bench run` records them in the environment (`check`).

Thresholds: load above 0.5 per CPU before a run means something else is busy;
CPU pressure above 10 % (PSI some avg10) likewise; any swap in use, or another
process on the benchmark's GPU, moves the numbers.
"""

from __future__ import annotations

import os
from typing import Mapping

from bench.errors import shown

LOAD_PER_CPU = 0.5
PRESSURE_PCT = 10.0
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "XLA_FLAGS")


def readings(environ: Mapping[str, str] = os.environ) -> dict:
    from bench.measure.telemetry import cpu

    out: dict = {"cpu": cpu.state(), "environ": {k: environ[k] for k in THREAD_VARS if k in environ}}
    if hasattr(os, "sched_getaffinity"):
        out["affinity"] = sorted(os.sched_getaffinity(0))
    try:
        import psutil

        sw = psutil.swap_memory()
        out["swap"] = {"total_bytes": int(sw.total), "used_bytes": int(sw.used)}
    except Exception as e:  # noqa: BLE001 - a missing reading is a finding of its own
        out["swap"] = {"unavailable": f"{type(e).__name__}: {e}"}
    try:
        from bench.measure.telemetry import nvml

        out["gpu"] = nvml.state()
    except Exception as e:  # noqa: BLE001 - no NVIDIA driver: nothing to check
        out["gpu"] = {"unavailable": f"{type(e).__name__}: {e}".rstrip(": ")}
    return out


def _f(topic: str, status: str, value, advice: str = "") -> dict:
    return {"topic": topic, "status": status, "value": value, "advice": advice}


def findings(r: dict, threads: int | None = None, cpus=None) -> list[dict]:
    """One finding per topic; `threads`/`cpus`: the device's settings in benchmarks.yaml."""
    cpu = r.get("cpu", {})
    missing = cpu.get("unavailable", {})
    out = []
    gov = cpu.get("governor")
    if gov is None:
        out.append(_f("governor", "unknown", missing.get("governor"), "no cpufreq here (a VM?): nothing to set"))
    else:
        out.append(_f("governor", "ok" if gov == "performance" else "warn", gov,
                      "" if gov == "performance" else
                      "set the performance governor: sudo cpupower frequency-set -g performance"))
    freq = cpu.get("frequency_mhz")
    if not freq:
        out.append(_f("frequency", "unknown", missing.get("frequency_mhz"), "cannot see frequency scaling here"))
    else:
        scaling = freq.get("min") and freq.get("max") and freq["min"] < freq["max"]
        out.append(_f("frequency", "warn" if scaling else "ok", freq,
                      "the clock scales between min and max: pin it (cpupower frequency-set -d/-u, "
                      "or turn off boost) for steadier numbers" if scaling else ""))
    ncpu = cpu.get("logical_cpus") or 1
    load = cpu.get("load_average")
    if load is None:
        out.append(_f("load", "unknown", missing.get("load_average"), ""))
    else:
        busy = load[0] > LOAD_PER_CPU * ncpu
        out.append(_f("load", "warn" if busy else "ok", load,
                      f"1-minute load {load[0]} on {ncpu} CPUs: stop other jobs before benchmarking" if busy else ""))
    psi = cpu.get("pressure")
    if psi is not None:
        high = psi["some_avg10"] > PRESSURE_PCT
        out.append(_f("cpu_pressure", "warn" if high else "ok", psi,
                      f"tasks waited for a CPU {psi['some_avg10']}% of the last 10 s: something else is running"
                      if high else ""))
    steal = cpu.get("steal_percent")
    if steal is not None:
        out.append(_f("steal", "warn" if steal > 1 else "ok", steal,
                      "the hypervisor gives this VM's CPU time to others: use a dedicated host" if steal > 1 else ""))
    swap = r.get("swap", {})
    if "unavailable" in swap:
        out.append(_f("swap", "unknown", swap["unavailable"], ""))
    else:
        used = swap.get("used_bytes", 0)
        out.append(_f("swap", "warn" if used else "ok", swap,
                      f"{used / 2**20:.0f} MiB swapped out: free memory (or swapoff -a && swapon -a)" if used else ""))
    gpu = r.get("gpu", {})
    if "unavailable" in gpu:
        out.append(_f("gpu_processes", "unknown", gpu["unavailable"], "no NVIDIA GPU visible: nothing to check"))
    else:
        others = [p for d in gpu.get("devices", []) for p in d.get("processes", []) if p.get("pid") != os.getpid()]
        out.append(_f("gpu_processes", "warn" if others else "ok", others,
                      f"{len(others)} other process(es) on the GPU: their work shares the card" if others else ""))
    env = r.get("environ", {})
    affinity = r.get("affinity")
    if threads is None and cpus is None:
        out.append(_f("threads", "warn", {"environ": env, "affinity": affinity},
                      "this device sets no `threads`/`cpus` in benchmarks.yaml: each library sizes its own pools"))
    else:
        out.append(_f("threads", "ok", {"threads": threads, "cpus": list(cpus) if cpus else None,
                                        "environ": env, "affinity": affinity}, ""))
    return out


def render(items: list[dict]) -> str:
    width = max(len(i["topic"]) for i in items)
    lines = []
    for i in items:
        advice = f" -> {i['advice']}" if i["advice"] else ""
        lines.append(f"{i['status']:<7} {i['topic']:<{width}}  {shown(i['value'], 60, as_text=str)}{advice}")
    return "\n".join(lines) + "\n"


def resources(threads: int | None, cpus, available: set[int] | None, key: str,
              worker_cpus: int | None = None) -> str | None:
    """Why the device's `threads`/`cpus`/`worker_cpus` do not exist on this machine, or None.

    `available`: the CPU ids this process may run on (os.sched_getaffinity);
    `key`: 'devices.<label>' for the message.
    """
    if available is None:
        if cpus or worker_cpus:
            name, value = ("cpus", list(cpus)) if cpus else ("worker_cpus", worker_cpus)
            return f"key '{key}.{name}' is {value}; this OS cannot pin CPUs (no sched_setaffinity)"
        return None
    if cpus:
        bad = [c for c in cpus if c not in available]
        if bad:
            return (f"key '{key}.cpus' is {list(cpus)}; CPU(s) {bad} do not exist here "
                    f"(expected ids among {sorted(available)})")
    limit = len(cpus) if cpus else len(available)
    if worker_cpus is not None and worker_cpus > limit:
        return (f"key '{key}.worker_cpus' is {worker_cpus}; this machine gives the workers {limit} CPU(s) "
                f"(expected 1..{limit})")
    limit = worker_cpus or limit
    if threads is not None and threads > limit:
        return (f"key '{key}.threads' is {threads}; this machine gives the workers {limit} CPU(s) "
                f"(expected 1..{limit})")
    return None
