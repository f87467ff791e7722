"""The benchmark workloads, written once in backend-neutral Keras.

`get(name)` is the one lookup; each model module has `build()` and
`FLAT_INPUT`. Every model is compiled the same way (`compile_model`), so a
number moves only when Keras or the backend does.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Callable

from bench.measure.workloads import cnn, mlp

_MODULES: dict[str, ModuleType] = {"cnn": cnn, "mlp": mlp}
NAMES = tuple(_MODULES)
LEARNING_RATE = 3e-3  # Adam; reaches the gate's 90 % on digits in 1-3 epochs


@dataclass(frozen=True)
class Workload:
    name: str
    build: Callable
    flat_input: bool  # True: the model takes 784 flat pixels, else 28x28x1


def get(name: str) -> Workload:
    """The workload called `name`; ValueError naming the known ones otherwise."""
    if name not in _MODULES:
        raise ValueError(f"unknown model {name!r}; expected one of: {', '.join(NAMES)}")
    mod = _MODULES[name]
    return Workload(name, mod.build, mod.FLAT_INPUT)


def compile_model(model) -> None:
    """Adam + sparse cross-entropy on logits, no metrics: the timed fit does
    nothing a plain training loop would not (accuracy is measured by the gate)."""
    import keras

    model.compile(
        optimizer=keras.optimizers.Adam(LEARNING_RATE),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
