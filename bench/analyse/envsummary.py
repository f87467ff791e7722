"""A record's environment as flat text fields, for a point's tooltip and for
"what changed from the previous point" (pure).

Every field is optional (old records lack most of them) and a value of an
unexpected type is left out rather than trusted. Records before issue 13
stored the CUDA runtime as environment.driver ("cuda 12.8"); such a value is
read as `cuda`, never as the driver.
"""

from __future__ import annotations

from typing import Any, Mapping

from bench.config import MALLOC_TUNABLES, MALLOC_VARS, TUNABLES_VAR

# Fields whose change can explain a step in a series; the dashboard lists the
# ones that differ from the previous point. Load, temperature, power draw and
# pressure move every night: they are shown, never listed as a change.
CHANGES = ("keras", "keras_commit", "backend", "driver", "cuda", "cudnn", "gpu", "sm_clock_mhz",
           "memory_clock_mhz", "power_limit_w", "cpu", "governor", "threads", "malloc", "floatx", "dtype_policy",
           "protocol", "reference", "runner", "os")
_KERAS = {"keras", "keras-nightly", "keras_nightly"}


def _text(v: Any) -> str | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float, str)):
        return str(v) if str(v) else None
    return None


def _dict(v: Any) -> Mapping:
    return v if isinstance(v, Mapping) else {}


def _malloc(settings: Mapping) -> str | None:
    """The glibc malloc settings every worker ran with (environment.settings): the
    thresholds from workers v4 on ("mmap 33554432, trim 1073741824") and the tunables
    from workers v8 on (", tcache_count 0")."""
    parts = [f"{name.split('_')[1]} {_text(settings.get(var))}" for name, var in MALLOC_VARS.items()
             if _text(settings.get(var))]
    pairs = (item.split("=", 1) for item in (_text(settings.get(TUNABLES_VAR)) or "").split(":"))
    tunables = dict(pair for pair in pairs if len(pair) == 2)
    parts += [f"{name.removeprefix('malloc_')} {tunables[tunable]}" for name, tunable in MALLOC_TUNABLES.items()
              if tunables.get(tunable)]
    return ", ".join(parts) or None


def summary(environment: Mapping[str, Any], run: Mapping[str, Any] | None = None) -> tuple[tuple[str, str], ...]:
    """Sorted (field, text) pairs; see CHANGES for the fields compared between points."""
    env, out = _dict(environment), {}

    def put(name: str, value: Any) -> None:
        t = _text(value)
        if t is not None:
            out[name] = t

    put("keras", env.get("keras_version"))
    put("keras_commit", env.get("keras_commit"))
    versions = _dict(env.get("backend_versions"))
    put("backend", " ".join(f"{k} {v}" for k, v in sorted(versions.items())
                            if k not in _KERAS and _text(v)) or None)
    driver, accel = _text(env.get("driver")), _dict(env.get("accelerator"))
    if driver and driver.startswith("cuda "):  # before issue 13: the CUDA runtime, not the driver
        put("cuda", driver[5:])
    else:
        put("driver", driver)
    put("cuda", accel.get("cuda") or out.get("cuda"))
    put("cudnn", accel.get("cudnn"))
    devices = _dict(env.get("gpu")).get("devices")
    gpu = _dict(devices[0]) if isinstance(devices, list) and devices else {}
    put("gpu", gpu.get("name"))
    for name in ("sm_clock_mhz", "memory_clock_mhz", "power_limit_w", "power_draw_w", "temperature_c"):
        put(name, gpu.get(name))
    if isinstance(gpu.get("throttle_reasons"), list):
        put("throttle", ", ".join(str(t) for t in gpu["throttle_reasons"]) or "none")
    procs = gpu.get("processes")
    if isinstance(procs, list):
        used = sum(p.get("used_bytes") or 0 for p in procs if isinstance(p, Mapping)
                   and isinstance(p.get("used_bytes"), int))
        put("gpu_processes", f"{len(procs)} ({used / 2**20:.0f} MiB)")
    cpu = _dict(env.get("cpu_state"))
    put("cpu", cpu.get("model") or env.get("cpu"))
    put("governor", cpu.get("governor"))
    put("cpu_mhz", _dict(cpu.get("frequency_mhz")).get("current"))
    load = cpu.get("load_average")
    if isinstance(load, list) and load:
        put("load", load[0])
    put("steal_percent", cpu.get("steal_percent"))
    put("cpu_pressure", _dict(cpu.get("pressure")).get("some_avg60"))
    put("threads", _dict(env.get("thread_settings")).get("backend_threads") or env.get("threads"))
    put("malloc", _malloc(_dict(env.get("settings"))))
    config = _dict(env.get("keras_config"))
    put("floatx", config.get("floatx"))
    put("dtype_policy", config.get("dtype_policy"))
    protocol, ab = _dict(_dict(run).get("protocol")), _dict(_dict(run).get("ab"))
    if _text(protocol.get("name")):
        # A duet's worker shares the host with its partner (threads capped to
        # half the CPUs): its samples/s sit lower than a solo run's, so a
        # device that starts running beside a reference starts a new protocol.
        duet = " duet" if ab.get("mode") == "duet" else ""
        put("protocol", f"{protocol['name']} v{protocol.get('version', '?')}{duet}")
    if ab.get("reference") is True:  # bench run --reference: the frozen build beside this one
        put("reference", ab.get("reference_keras_version") or "unknown")
    put("runner", env.get("runner"))
    # The runner's OS as Python names it (environment.os, platform.platform():
    # kernel and C library included), so an OS update shows as a change.
    put("os", env.get("os"))
    return tuple(sorted(out.items()))


def changes(before: tuple[tuple[str, str], ...], after: tuple[tuple[str, str], ...]) -> list[tuple[str, str | None, str | None]]:
    """(field, old, new) for each CHANGES field that differs, in CHANGES order."""
    b, a = dict(before), dict(after)
    return [(f, b.get(f), a.get(f)) for f in CHANGES if b.get(f) != a.get(f)]
