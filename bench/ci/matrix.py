"""The GitHub Actions matrix: one job per (device, backend) from benchmarks.yaml.

Pure logic: `build_matrix(config, ...)` turns the configured devices and their
backends into `Entry` objects; the `bench matrix` verb prints them as the
`{"include": [...]}` object that `strategy.matrix` takes via fromJSON().
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Iterable

from bench.config import Config, ConfigError


@dataclass(frozen=True)
class Entry:
    """One benchmark job: `backend` on `device`, on the runner with labels `runs_on`.

    `install` and `plugins` are pip arguments, kept as tuples here and joined
    with POSIX shell quoting in the JSON (a requirement such as
    "keras-mlx @ git+https://..." contains spaces), which
    scripts/install-backend.sh splits back with shlex.
    """

    device: str
    backend: str
    keras_backend: str
    runs_on: tuple[str, ...]
    install: tuple[str, ...]
    plugins: tuple[str, ...]
    # Every model and mode of benchmarks.yaml: what a job whose set-up failed
    # records as failed/install (`bench failure-record` reads no YAML: it runs with the runner's own Python).
    models: tuple[str, ...] = ()
    modes: tuple[str, ...] = ()
    # The device's reference build (devices.<d>.reference), "" for none: a
    # keras-nightly version the job installs beside the nightly and runs with
    # `bench run --reference`.
    reference: str = ""

    def __post_init__(self):
        for name in ("device", "backend", "keras_backend"):
            if not getattr(self, name):
                raise ValueError(f"matrix entry {self!r}: {name} is empty; expected a label")

    def to_json(self) -> dict:
        return {
            "device": self.device,
            "backend": self.backend,
            "keras_backend": self.keras_backend,
            "runs_on": list(self.runs_on),
            "install": shlex.join(self.install),
            "plugins": shlex.join(self.plugins),
            "models": ",".join(self.models),
            "modes": ",".join(self.modes),
            "reference": self.reference,
        }


def build_matrix(
    config: Config,
    devices: Iterable[str] = (),
    backends: Iterable[str] = (),
    include_local: bool = False,
) -> tuple[Entry, ...]:
    """Every (device, backend) pair of `config`, in config order, filtered.

    Empty `devices`/`backends` mean all. Unknown names are refused (ConfigError
    naming the valid ones); so is a local_only device named without
    `include_local`, because it has no runner to run on.
    """
    devices, backends = tuple(devices), tuple(backends)
    _check_known("device", devices, config.devices)
    _check_known("backend", backends, config.backends)
    for label in devices:
        if config.devices[label].local_only and not include_local:
            raise ConfigError(
                f"{config.path}: device {label!r} is local_only (no runner); run it on this machine "
                f"with `bench run --device {label}` (or list it here with --include-local)"
            )
    entries = []
    for device in config.devices.values():
        if devices and device.label not in devices:
            continue
        if device.local_only and not include_local:
            continue
        for label in device.backends:
            if backends and label not in backends:
                continue
            backend = config.backends[label]
            entries.append(Entry(
                device=device.label,
                backend=label,
                keras_backend=backend.keras_backend,
                runs_on=device.runs_on,
                install=device.install_spec(backend),
                plugins=backend.plugins,
                models=tuple(config.models),
                modes=tuple(config.modes),
                reference=device.reference or "",
            ))
    return tuple(entries)


# Labels actionlint knows without being told (lower case).
BUILTIN_LABELS = frozenset({"self-hosted", "linux", "macos", "windows", "x64", "x86", "arm", "arm64"})


def undeclared_labels(config: Config, actionlint_yaml: str) -> tuple[str, ...]:
    """Self-hosted runner labels of `config`'s devices that .github/actionlint.yaml
    (its text) does not declare: actionlint would fail ci.yml on each."""
    import yaml  # only when checking

    raw = yaml.safe_load(actionlint_yaml) or {}
    runner = raw.get("self-hosted-runner") if isinstance(raw, dict) else None
    declared = set((runner or {}).get("labels") or ())
    used = dict.fromkeys(label for d in config.devices.values() for label in d.runs_on)
    return tuple(label for label in used if label.lower() not in BUILTIN_LABELS and label not in declared)


def _check_known(kind: str, names: tuple[str, ...], known) -> None:
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ConfigError(
            f"unknown {kind} {', '.join(map(repr, unknown))} in --{kind}s; "
            f"expected one of: {', '.join(known)}"
        )
