"""The quality-gate and timing data: scikit-learn's load_digits, no download.

The 8x8 digits (pixel values 0..16) are upscaled 3x to 24x24 and padded by 2
pixels to the 28x28x1 the CNN takes; the MLP sees the same image flattened to
784 values. Pixels are scaled to [0, 1]. The train/held-out split is a fixed
permutation (seed 0), so every backend, every night, sees the same split.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

IMAGE_SHAPE = (28, 28, 1)
FLAT_SIZE = 28 * 28
CLASSES = 10
HELD_OUT = 360  # 20 % of the 1797 digits
SPLIT_SEED = 0


@dataclass(frozen=True)
class Split:
    """Images (n, 28, 28, 1) float32 in [0, 1] and int32 labels 0..9."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray

    def __post_init__(self):
        for name in ("x_train", "x_test"):
            shape = getattr(self, name).shape
            if shape[1:] != IMAGE_SHAPE:
                raise ValueError(f"Split.{name} has shape {shape}; expected (n, 28, 28, 1)")
        if len(self.x_train) != len(self.y_train) or len(self.x_test) != len(self.y_test):
            raise ValueError("Split: images and labels differ in length")


def to_image(digits8: np.ndarray) -> np.ndarray:
    """(n, 64) digits 0..16 -> (n, 28, 28, 1) float32 in [0, 1]."""
    x = np.asarray(digits8, dtype=np.float32).reshape(-1, 8, 8) / 16.0
    x = np.kron(x, np.ones((3, 3), dtype=np.float32))  # nearest-neighbour 3x: 24x24
    x = np.pad(x, ((0, 0), (2, 2), (2, 2)))
    return x[..., None]


@lru_cache(maxsize=1)
def digits() -> Split:
    """The fixed split of load_digits as 28x28x1 images (cached; do not mutate)."""
    pixels, labels = load_digits_arrays()
    order = np.random.default_rng(SPLIT_SEED).permutation(len(labels))
    x, y = to_image(pixels[order]), labels[order].astype(np.int32)
    return Split(x[HELD_OUT:], y[HELD_OUT:], x[:HELD_OUT], y[:HELD_OUT])


def load_digits_arrays() -> tuple[np.ndarray, np.ndarray]:
    """(1797, 64) pixels 0..16 and labels, as sklearn.datasets.load_digits gives them.

    Every benchmark child needs them, and importing scikit-learn costs about
    1.5 s per process here; so read the CSV that load_digits itself reads
    (sklearn/datasets/data/digits.csv.gz) without importing the package, and
    fall back to load_digits when the file is not where it has always been.
    """
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("sklearn")  # locates the package without importing it
    for root in (spec.submodule_search_locations or []) if spec else []:
        csv = Path(root) / "datasets" / "data" / "digits.csv.gz"
        if csv.is_file():
            table = np.loadtxt(csv, delimiter=",")
            return table[:, :-1], table[:, -1].astype(np.int64)
    from sklearn.datasets import load_digits

    d = load_digits()
    return d.data, d.target


def for_model(x: np.ndarray, flat: bool) -> np.ndarray:
    """Images as the model takes them: flattened to 784 for the MLP."""
    return x.reshape(len(x), FLAT_SIZE) if flat else x


def tiled(x: np.ndarray, y: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The first `n` samples of (x, y) repeated end to end: a fixed, real
    in-memory dataset of any size for the timed region."""
    idx = np.arange(n) % len(x)
    return np.ascontiguousarray(x[idx]), np.ascontiguousarray(y[idx])
