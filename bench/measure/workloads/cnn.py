"""The small CNN: 28x28x1 -> two conv blocks -> dense head -> 10 logits."""

from __future__ import annotations

FLAT_INPUT = False


def build():
    """An uncompiled keras.Model (backend-neutral Keras only)."""
    import keras
    from keras import layers

    inputs = keras.Input(shape=(28, 28, 1), name="image")
    x = layers.Conv2D(16, 3, activation="relu", name="conv1")(inputs)
    x = layers.MaxPooling2D(2, name="pool1")(x)
    x = layers.Conv2D(32, 3, activation="relu", name="conv2")(x)
    x = layers.MaxPooling2D(2, name="pool2")(x)
    x = layers.Flatten(name="flatten")(x)
    x = layers.Dense(64, activation="relu", name="dense")(x)
    outputs = layers.Dense(10, name="logits")(x)
    return keras.Model(inputs, outputs, name="cnn")
