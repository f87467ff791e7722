"""The quality gate: a model must learn (train) or match its reference (predict)
before its throughput counts. Pure checks on numpy arrays plus the reference
file reader; the Keras calls that produce the arrays live in bench/measure/child.py.

- train: from a fresh seed, fit load_digits one epoch at a time (at the
  benchmark's batch size, so the timed region reuses the compiled step) until
  held-out accuracy >= TRAIN_ACCURACY, for at most MAX_EPOCHS epochs.
- predict: load the committed weights (studies/make_weights.py), predict the
  held-out digits; accuracy must equal the reference's to within one digit and
  every logit must be within LOGIT_ATOL + LOGIT_RTOL * |reference| of it.

Accuracy is a fraction of the 360 held-out digits, bigger is better; logit
differences are in logit units, smaller is better.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

TRAIN_ACCURACY = 0.90
MAX_EPOCHS = 8
# Backends differ in float32 summation order, and OpenVINO may run in bf16 on
# CPUs that have it (INFERENCE_PRECISION_HINT): the tolerance allows that much,
# while a wrong layer, a wrong weight order or NaNs are off by whole units.
LOGIT_ATOL = 0.1
LOGIT_RTOL = 0.02
ACCURACY_SLACK = 1  # held-out digits whose argmax may flip on a near tie
WEIGHTS_DIR = Path(__file__).with_name("weights")


@dataclass(frozen=True)
class GateResult:
    """passed, the numbers behind the verdict (JSON-ready), and why it failed."""

    passed: bool
    numbers: dict
    message: str = ""


@dataclass(frozen=True)
class Reference:
    """Committed weights (float32, in model.get_weights() order), the logits
    they give on the held-out digits, and that accuracy."""

    weights: tuple[np.ndarray, ...]
    logits: np.ndarray
    accuracy: float
    source: str
    meta: dict = field(default_factory=dict)  # how it was built: backend, versions, seed


def accuracy(logits: np.ndarray, labels: np.ndarray) -> float:
    """Fraction of rows whose largest logit is the label; 0 if any is non-finite."""
    logits = np.asarray(logits)
    if not np.all(np.isfinite(logits)):
        return 0.0
    return float(np.mean(np.argmax(logits, axis=1) == labels))


def check_train(accuracies: list[float], threshold: float = TRAIN_ACCURACY) -> GateResult:
    """`accuracies`: held-out accuracy after each epoch, in order."""
    best = max(accuracies) if accuracies else 0.0
    numbers = {"check": "train", "held_out_accuracy": round(accuracies[-1], 4) if accuracies else None,
               "threshold": threshold, "epochs": len(accuracies), "max_epochs": MAX_EPOCHS}
    if accuracies and accuracies[-1] >= threshold:
        return GateResult(True, numbers)
    return GateResult(False, numbers, f"held-out accuracy {best:.3f} after {len(accuracies)} epochs "
                                      f"on load_digits; expected >= {threshold:g}")


def check_predict(logits: np.ndarray, labels: np.ndarray, ref: Reference) -> GateResult:
    logits = np.asarray(logits, dtype=np.float64)
    if logits.shape != ref.logits.shape:
        return GateResult(False, {"check": "predict", "shape": list(logits.shape)},
                          f"logits have shape {logits.shape}; expected {ref.logits.shape}")
    acc = accuracy(logits, labels)
    finite = bool(np.all(np.isfinite(logits)))
    diff = np.abs(logits - ref.logits)
    worst = float(np.max(diff / (LOGIT_ATOL + LOGIT_RTOL * np.abs(ref.logits)))) if finite else float("inf")
    numbers = {"check": "predict", "held_out_accuracy": round(acc, 4),
               "reference_accuracy": round(ref.accuracy, 4),
               "max_logit_diff": round(float(np.max(diff)), 6) if finite else None,
               "logit_tolerance": {"atol": LOGIT_ATOL, "rtol": LOGIT_RTOL}}
    problems = []
    if not finite:
        problems.append("non-finite logits")
    elif worst > 1:
        problems.append(f"logits differ from the reference by up to {numbers['max_logit_diff']:.4g} "
                        f"(tolerance {LOGIT_ATOL} + {LOGIT_RTOL} x |reference|)")
    if abs(acc - ref.accuracy) * len(labels) > ACCURACY_SLACK + 1e-9:
        problems.append(f"held-out accuracy {acc:.4f}; reference {ref.accuracy:.4f}")
    return GateResult(not problems, numbers, "; ".join(problems) + (f" ({ref.source})" if problems else ""))


def reference_path(model: str) -> Path:
    return WEIGHTS_DIR / f"{model}.npz"


def load_reference(model: str, path: Path | None = None) -> Reference:
    """Read `weights/<model>.npz` (weights stored as float16 to stay small)."""
    path = path or reference_path(model)
    with np.load(path) as f:
        count = int(f["count"])
        weights = tuple(f[f"w{i}"].astype(np.float32) for i in range(count))
        meta = {k.removeprefix("meta_"): str(f[k]) for k in f.files if k.startswith("meta_")}
        return Reference(weights, f["logits"].astype(np.float64), float(f["accuracy"]), str(path), meta)


def save_reference(path: Path, weights, logits: np.ndarray, acc: float, meta: dict) -> None:
    arrays = {f"w{i}": np.asarray(w, dtype=np.float16) for i, w in enumerate(weights)}
    arrays.update(count=np.array(len(arrays)), logits=np.asarray(logits, dtype=np.float32),
                  accuracy=np.array(acc))
    arrays.update({f"meta_{k}": np.array(str(v)) for k, v in meta.items()})
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:  # np.savez_compressed(path) would append .npz to odd names
        np.savez_compressed(f, **arrays)


@dataclass(frozen=True)
class TrainStart:
    """Adam's state to go with the committed weights (workers v13): where every
    timed train call starts, on both sides of a pair and on every night.
    `momentums`/`velocities`: one array per trainable variable, in the model's
    `trainable_variables` order; `iterations`: Adam's step count."""

    iterations: int
    momentums: tuple
    velocities: tuple
    source: str

    def __post_init__(self):
        if self.iterations < 0 or len(self.momentums) != len(self.velocities):
            raise ValueError(f"{self.source}: iterations {self.iterations!r}, {len(self.momentums)} momentums and "
                             f"{len(self.velocities)} velocities; expected iterations >= 0 and one of each per variable")


def train_start_path(model: str) -> Path:
    return WEIGHTS_DIR / f"{model}.train.npz"


def load_train_start(model: str, path: Path | None = None) -> TrainStart:
    """Read `weights/<model>.train.npz` (float32: Adam's velocities are far below float16's range)."""
    path = path or train_start_path(model)
    with np.load(path) as f:
        count = int(f["count"])
        return TrainStart(int(f["iterations"]), tuple(f[f"m{i}"].astype(np.float32) for i in range(count)),
                          tuple(f[f"v{i}"].astype(np.float32) for i in range(count)), str(path))


def save_train_start(path: Path, iterations: int, momentums, velocities, meta: dict) -> None:
    arrays = {f"m{i}": np.asarray(m, dtype=np.float32) for i, m in enumerate(momentums)}
    arrays.update({f"v{i}": np.asarray(v, dtype=np.float32) for i, v in enumerate(velocities)})
    arrays.update(count=np.array(len(momentums)), iterations=np.array(int(iterations)))
    arrays.update({f"meta_{k}": np.array(str(v)) for k, v in meta.items()})
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        np.savez_compressed(f, **arrays)
