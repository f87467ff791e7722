"""The MLP: 784 -> 256 -> 256 -> 10 logits."""

from __future__ import annotations

FLAT_INPUT = True


def build():
    """An uncompiled keras.Model (backend-neutral Keras only)."""
    import keras
    from keras import layers

    inputs = keras.Input(shape=(784,), name="pixels")
    x = layers.Dense(256, activation="relu", name="dense1")(inputs)
    x = layers.Dense(256, activation="relu", name="dense2")(x)
    outputs = layers.Dense(10, name="logits")(x)
    return keras.Model(inputs, outputs, name="mlp")
