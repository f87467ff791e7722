"""Keras Nightly Bench: continuous benchmarks of nightly Keras 3 on every backend."""

__version__ = "0.1.0"
