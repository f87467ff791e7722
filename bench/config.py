"""benchmarks.yaml: load, validate, and expose as immutable objects.

Format history:
  version 1 (2026-12): harness, models, modes, backends, devices, trends, compare;
  an optional `latency` section (calls, warmup_calls) for mode "latency" (issue 13).

Every error names the file, the key path (e.g. ``devices.apple-m4.backends``),
the bad value and the expected form, so a typo in the YAML is a one-line fix.
"""

from __future__ import annotations

import os
import re
from dataclasses import MISSING, dataclass, field
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

import yaml

from bench.errors import BenchError, read_text

CONFIG_VERSION = 1
REPO_ROOT = Path(__file__).resolve().parent.parent
FILE_NAME = "benchmarks.yaml"
ENV_VAR = "BENCH_CONFIG"
# Harness field -> the glibc variable that carries it into every worker (Harness.worker_env).
MALLOC_VARS = {"malloc_mmap_threshold": "MALLOC_MMAP_THRESHOLD_", "malloc_trim_threshold": "MALLOC_TRIM_THRESHOLD_"}
# Harness field -> the glibc tunable that carries it (GLIBC_TUNABLES, glibc 2.26 on;
# settings that have no MALLOC_*_ variable of their own).
TUNABLES_VAR = "GLIBC_TUNABLES"
MALLOC_TUNABLES = {"malloc_tcache_count": "glibc.malloc.tcache_count"}
# The package's copy: bench/benchmarks.yaml is a link to the repository's
# ./benchmarks.yaml (the file users edit), so one file serves a checkout and
# an installed package (the wheel holds the link's content).
DEFAULT_PATH = Path(str(resources.files("bench") / FILE_NAME))

_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class ConfigError(BenchError, ValueError):
    """benchmarks.yaml is malformed; the message names key, value and form."""


@dataclass(frozen=True)
class Harness:
    timeout: float
    repeats: int
    quick_repeats: int
    min_repeat_seconds: float
    quick_min_repeat_seconds: float
    warmup_steps: int
    # Protocol 2 (bench/measure/schedule.py): worker processes per backend.
    workers: int = 5
    quick_workers: int = 2
    ab_workers: int = 8  # worker pairs of a (not --quick) --ab run; benchmarks.yaml says why
    # A result whose clean workers lie further than this from the headline is
    # flagged `unstable` (a fraction; pyperf warns at 10 % too).
    unstable_spread: float = 0.10
    # A timed repeat whose canary reads this many times the fastest canary ran on
    # a slowed CPU (bench/measure/harness.py); more than 1.
    canary_tolerance: float = 3.0
    # Throughput repeats that disagree by more than this fraction get extra repeats
    # (bench/measure/harness.py); absent: none. benchmarks.yaml says why.
    spread_goal: float | None = None
    # glibc's malloc thresholds in every worker (bytes; MALLOC_MMAP_THRESHOLD_ and
    # MALLOC_TRIM_THRESHOLD_, ignored by other C libraries); absent: glibc's own,
    # which moves them as a process frees memory. benchmarks.yaml says why.
    malloc_mmap_threshold: int | None = None
    malloc_trim_threshold: int | None = None
    # glibc's per-thread cache of freed small blocks, blocks kept per size (0: none;
    # GLIBC_TUNABLES glibc.malloc.tcache_count); absent: glibc's own (7). benchmarks.yaml says why.
    malloc_tcache_count: int | None = field(default=None, metadata={"at_least": 0})

    def worker_env(self) -> dict[str, str]:
        """The environment variables that carry these settings into every worker."""
        env = {var: str(getattr(self, name)) for name, var in MALLOC_VARS.items()
               if getattr(self, name) is not None}
        tunables = [f"{tunable}={getattr(self, name)}" for name, tunable in MALLOC_TUNABLES.items()
                    if getattr(self, name) is not None]
        if tunables:
            env[TUNABLES_VAR] = ":".join(tunables)
        return env


@dataclass(frozen=True)
class Model:
    name: str
    batch_size: int


@dataclass(frozen=True)
class Backend:
    label: str
    keras_backend: str
    install: tuple[str, ...]
    plugins: tuple[str, ...]


@dataclass(frozen=True)
class Device:
    label: str
    runs_on: tuple[str, ...]
    backends: tuple[str, ...]
    accelerator: str
    local_only: bool
    install: Mapping[str, tuple[str, ...]]
    env: Mapping[str, str]
    threads: int | None = None  # compute threads per worker (every backend's own setting)
    cpus: tuple[int, ...] | None = None  # CPU ids the workers are pinned to (sched_setaffinity)
    # Each (non-duet) worker process pinned to this many of `cpus` (or of all CPUs),
    # the slice moving on with the worker index (bench/measure/schedule.py).
    worker_cpus: int | None = None
    # A frozen keras-nightly version run beside each night (bench run --reference;
    # docs/protocol.md, "The reference build"): None runs the nightly alone.
    reference: str | None = None
    # Time each train/predict benchmark against the backend's native code too
    # (bench/measure/native.py; the "<mode>.vs-native" series; docs/native.md).
    native: bool = False

    def install_spec(self, backend: Backend) -> tuple[str, ...]:
        """What pip installs for `backend` on this device (its override wins)."""
        return self.install.get(backend.label, backend.install)


@dataclass(frozen=True)
class Trends:
    """Status thresholds (docs/DESIGN.md): days, points and fractions."""

    stale_days: int = 3
    min_points: int = 5
    window: int = 10
    confirm: int = 3
    min_change: float = 0.015
    noise_factor: float = 4.0
    sparkline_points: int = 15


@dataclass(frozen=True)
class Compare:
    nights: int = 7
    min_change: float = 0.03
    alpha: float = 0.01


@dataclass(frozen=True)
class Latency:
    """Mode "latency" (bench/measure/latency.py): timed batch-1 calls per worker, after warm-up."""
    calls: int = 200
    warmup_calls: int = 20


@dataclass(frozen=True)
class Config:
    path: Path
    harness: Harness
    models: Mapping[str, Model]
    modes: tuple[str, ...]
    backends: Mapping[str, Backend]
    devices: Mapping[str, Device]
    trends: Trends = field(default_factory=Trends)
    compare: Compare = field(default_factory=Compare)
    latency: Latency = field(default_factory=Latency)

    def backend(self, label: str) -> Backend:
        if label not in self.backends:
            raise ConfigError(
                f"{self.path}: unknown backend {label!r}; "
                f"expected one of: {', '.join(self.backends)}"
            )
        return self.backends[label]

    def device(self, label: str) -> Device:
        if label not in self.devices:
            raise ConfigError(
                f"{self.path}: unknown device {label!r}; "
                f"expected one of: {', '.join(self.devices)}"
            )
        return self.devices[label]


def load(path: str | Path | None = None) -> Config:
    """Read and validate benchmarks.yaml (`default_path()` when `path` is None)."""
    path = Path(path) if path is not None else default_path()
    text = read_text(path, ConfigError)
    try:
        # libyaml's loader where PyYAML has it: the same values, a tenth of the
        # time (benchmarks.yaml: 1.5 ms against 17 ms, at every verb's start).
        raw = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: not valid YAML: {e}") from None
    return parse(raw, path)


def default_path() -> Path:
    """$BENCH_CONFIG when set, else ./benchmarks.yaml when the current folder
    has one (a checkout, a fork), else the package's copy: every verb works
    from any folder."""
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR])
    here = Path.cwd() / FILE_NAME
    return here if here.is_file() else DEFAULT_PATH


def parse(raw: Any, path: Path | str = "benchmarks.yaml") -> Config:
    path = Path(path)
    c = _Checker(path)
    top = c.mapping(raw, "")
    version = top.get("version")
    if version != CONFIG_VERSION:
        raise ConfigError(
            f"{path}: key 'version' is {version!r}; this bench reads version "
            f"{CONFIG_VERSION} (update bench, or fix the file)"
        )
    c.known_keys(top, "", {"version", "harness", "models", "modes", "backends",
                            "devices", "trends", "compare", "latency"})
    models = {
        name: Model(name, c.pos_int(c.mapping(m, f"models.{name}").get("batch_size"),
                                    f"models.{name}.batch_size"))
        for name, m in c.labelled(top.get("models"), "models").items()
    }
    modes = c.labels(top.get("modes"), "modes")
    backends = {lab: _backend(c, lab, b) for lab, b in c.labelled(top.get("backends"), "backends").items()}
    devices = {lab: _device(c, lab, d, backends) for lab, d in c.labelled(top.get("devices"), "devices").items()}
    return Config(
        path=path,
        harness=_harness(c, top.get("harness")),
        models=MappingProxyType(models),
        modes=modes,
        backends=MappingProxyType(backends),
        devices=MappingProxyType(devices),
        trends=_section(c, Trends, top.get("trends", {}), "trends"),
        compare=_section(c, Compare, top.get("compare", {}), "compare"),
        latency=_latency(c, top.get("latency", {})),
    )


def _latency(c: "_Checker", raw: Any) -> Latency:
    lat = _section(c, Latency, raw, "latency")
    if lat.calls < Latency.calls:  # issue 13: p99 of fewer calls is one or two outliers
        c.fail("latency.calls", lat.calls, f"at least {Latency.calls} timed calls")
    return lat


def _harness(c: "_Checker", raw: Any) -> Harness:
    h = _section(c, Harness, raw, "harness", required=True)
    if h.canary_tolerance <= 1:
        raise ConfigError(f"{c.path}: key 'harness.canary_tolerance' is {raw['canary_tolerance']!r}; "
                          f"expected a number above 1 (times the fastest canary)")
    return h


def _section(c: "_Checker", cls, raw: Any, key: str, required: bool = False):
    """Build a flat dataclass of positive numbers from a mapping (an int field whose
    metadata says `at_least: 0` may be 0)."""
    m = c.mapping(raw, key)
    names = {f for f in cls.__dataclass_fields__}
    c.known_keys(m, key, names)
    kwargs = {}
    for name, f in cls.__dataclass_fields__.items():
        if name not in m:
            if required and f.default is MISSING:
                raise ConfigError(f"{c.path}: key '{key}.{name}' is missing; expected a positive number")
            continue
        whole = f.type in ("int", "int | None")
        if whole and f.metadata.get("at_least") == 0:
            kwargs[name] = c.count(m[name], f"{key}.{name}")
        else:
            kwargs[name] = c.pos_int(m[name], f"{key}.{name}") if whole else c.pos_num(m[name], f"{key}.{name}")
    return cls(**kwargs)


def _backend(c: "_Checker", label: str, raw: Any) -> Backend:
    key = f"backends.{label}"
    m = c.mapping(raw, key)
    c.known_keys(m, key, {"keras_backend", "install", "plugins"})
    kb = m.get("keras_backend")
    if not isinstance(kb, str) or not _LABEL.match(kb):
        raise ConfigError(f"{c.path}: key '{key}.keras_backend' is {kb!r}; expected a KERAS_BACKEND name such as 'jax'")
    return Backend(label, kb, c.strings(m.get("install", []), f"{key}.install"),
                   c.strings(m.get("plugins", []), f"{key}.plugins"))


def _device(c: "_Checker", label: str, raw: Any, backends: Mapping[str, Backend]) -> Device:
    key = f"devices.{label}"
    m = c.mapping(raw, key)
    c.known_keys(m, key, {"runs_on", "backends", "accelerator", "local_only", "install", "env", "threads", "cpus", "worker_cpus",
                          "reference", "native"})
    names = c.labels(m.get("backends"), f"{key}.backends")
    for b in names:
        if b not in backends:
            raise ConfigError(f"{c.path}: key '{key}.backends' names {b!r}; expected one of the backends: {', '.join(backends)}")
    install = c.mapping(m.get("install", {}), f"{key}.install")
    for b in install:
        if b not in names:  # an override for a backend this device never runs is a typo or stale
            raise ConfigError(f"{c.path}: key '{key}.install' names {b!r}; expected one of this device's "
                              f"backends ({key}.backends): {', '.join(names)}")
    env = c.mapping(m.get("env", {}), f"{key}.env")
    for k, v in env.items():
        if not isinstance(v, (str, int, float)):
            raise ConfigError(f"{c.path}: key '{key}.env.{k}' is {v!r}; expected a string")
    accel = m.get("accelerator", "cpu")
    if accel not in ("cpu", "gpu"):
        raise ConfigError(f"{c.path}: key '{key}.accelerator' is {accel!r}; expected 'cpu' or 'gpu'")
    local_only = m.get("local_only", False)
    if not isinstance(local_only, bool):
        raise ConfigError(f"{c.path}: key '{key}.local_only' is {local_only!r}; expected true or false")
    native = m.get("native", False)
    if not isinstance(native, bool):
        raise ConfigError(f"{c.path}: key '{key}.native' is {native!r}; expected true or false")
    return Device(
        label=label,
        runs_on=c.strings(m.get("runs_on", []), f"{key}.runs_on"),
        backends=names,
        accelerator=accel,
        local_only=local_only,
        install=MappingProxyType({b: c.strings(v, f"{key}.install.{b}") for b, v in install.items()}),
        env=MappingProxyType({str(k): str(v) for k, v in env.items()}),
        threads=c.pos_int(m["threads"], f"{key}.threads") if "threads" in m else None,
        cpus=_cpus(c, m["cpus"], f"{key}.cpus") if "cpus" in m else None,
        worker_cpus=c.pos_int(m["worker_cpus"], f"{key}.worker_cpus") if "worker_cpus" in m else None,
        reference=_version(c, m["reference"], f"{key}.reference") if m.get("reference") is not None else None,
        native=native,
    )


# What scripts/install-backend.sh accepts as BENCH_KERAS_VERSION.
VERSION = re.compile(r"[0-9][0-9A-Za-z.+!-]*")


def _version(c: "_Checker", v: Any, key: str) -> str:
    """`reference: 3.13.0.dev2026110103`: a keras-nightly version (YAML may
    read a short one as a number, so it must be quoted then)."""
    if not isinstance(v, str) or not VERSION.fullmatch(v):
        c.fail(key, v, "a keras-nightly version in quotes, such as '3.13.0.dev2026110103'")
    return v


def _cpus(c: "_Checker", v: Any, key: str) -> tuple[int, ...]:
    """`cpus: [0, 1]`: CPU ids (whether they exist is checked on the machine, by bench run)."""
    if not isinstance(v, list) or not v or not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in v):
        c.fail(key, v, "a non-empty list of CPU ids such as [0, 1]")
    return tuple(sorted(set(v)))


@dataclass(frozen=True)
class _Checker:
    path: Path

    def fail(self, key: str, value: Any, expected: str):
        where = f"key '{key}'" if key else "the top level"
        raise ConfigError(f"{self.path}: {where} is {value!r}; expected {expected}")

    def mapping(self, v: Any, key: str) -> dict:
        if not isinstance(v, dict):
            self.fail(key, v, "a mapping")
        return v

    def labelled(self, v: Any, key: str) -> dict:
        m = self.mapping(v, key)
        if not m:
            self.fail(key, v, "at least one entry")
        for k in m:
            if not isinstance(k, str) or not _LABEL.match(k):
                self.fail(f"{key}.{k}", k, "a label of letters, digits, '.', '_' or '-'")
        return m

    def known_keys(self, m: dict, key: str, allowed: set[str]) -> None:
        for k in m:
            if k not in allowed:
                where = f"{key}.{k}" if key else k
                raise ConfigError(f"{self.path}: unknown key '{where}'; expected one of: {', '.join(sorted(allowed))}")

    def strings(self, v: Any, key: str) -> tuple[str, ...]:
        if not isinstance(v, list) or not all(isinstance(s, str) and s for s in v):
            self.fail(key, v, "a list of non-empty strings")
        return tuple(v)

    def labels(self, v: Any, key: str) -> tuple[str, ...]:
        items = self.strings(v, key)
        if not items:
            self.fail(key, v, "a non-empty list of labels")
        return items

    def pos_int(self, v: Any, key: str) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            self.fail(key, v, "a positive integer")
        return v

    def count(self, v: Any, key: str) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            self.fail(key, v, "a whole number, 0 or more")
        return v

    def pos_num(self, v: Any, key: str) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
            self.fail(key, v, "a positive number")
        return float(v)
