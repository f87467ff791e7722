"""What differs between the base's and the head's environment (pure).

Per (backend, device) target of the head, the newest base record's
environment against the newest head record's: the Keras version and source,
every backend package version, and what describes the machine (python, os,
cpu, accelerator, driver, jit, runner). Fields absent on both sides are not
listed; absent on one side reads as None.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping

from bench.compare.baseline import Target

FIELDS = ("keras_version", "keras_source", "backend_versions", "python", "os", "cpu",
          "accelerator", "driver", "jit", "runner")


@dataclass(frozen=True)
class EnvDiff:
    backend: str
    device: str
    field: str          # e.g. keras_version, backend_versions.jax
    base: str | None
    head: str | None


def environment_differences(base: Mapping[Target, Mapping[str, Any]],
                            head: Mapping[Target, Mapping[str, Any]]) -> tuple[EnvDiff, ...]:
    """Differing fields, by target then in FIELDS order (package names sorted)."""
    out = []
    for target in sorted(head):
        if target not in base:
            continue  # nothing of this target in the baseline: every row is new
        b, h = _flatten(base[target]), _flatten(head[target])
        names = [f for f in _ordered(set(b) | set(h))]
        out += [EnvDiff(*target, f, b.get(f), h.get(f)) for f in names if b.get(f) != h.get(f)]
    return tuple(out)


def _flatten(env: Mapping[str, Any]) -> dict[str, str]:
    flat = {}
    for name in FIELDS:
        value = env.get(name)
        if isinstance(value, Mapping):
            flat.update({f"{name}.{k}": _text(v) for k, v in value.items()})
        elif value is not None:
            flat[name] = _text(value)
    return flat


def _ordered(names: set[str]) -> list[str]:
    return sorted(names, key=lambda f: (FIELDS.index(f.split(".", 1)[0]), f))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)
