"""Keras's own overhead: the same model in native code, timed beside Keras.

For jax, torch and mlx the backend module (bench/measure/backends/<name>.py,
`native(model)`) builds the benchmark's model in the backend's own terms
(pure jax.numpy under jax.jit, a torch.nn.Module, mlx.nn) from a `Model`:
the layers, weights and Adam hyper-parameters read off the Keras model itself
(`describe`), so the two start equal and a changed workload changes both.
A backend without one returns `Unsupported(reason)`; the reason is recorded.

In a worker, after the Keras benchmark is timed and its memory read
(bench/measure/child.py), `measure`:

1. checks the native model against Keras on the same weights, before any
   timing: the logits of the held-out digits (predict) and, for train, the
   loss and the updated weights after one Adam step from a fresh optimizer
   on both sides (`TOLERANCE`). A disagreement is a `quality` failure of the
   native block and no ratio is produced;
2. times `PAIRS` pairs of calls of the same fixed work (the Keras timed
   calls' `steps_per_call`), a Keras call and a native call back to back, the
   order alternating pair by pair (ABBA), every train call starting from the
   same weights and a fresh Adam on both sides. The host's state at that
   moment slows both calls of a pair alike, so their ratio holds still where
   samples/s drift.

The worker's figure (`ratio`) is the median over its pairs of
Keras seconds / native seconds: a ratio, no unit; above 1 Keras takes longer
than native code for the same steps (its overhead), so smaller is better.
The result's figure is the median over its workers (`combine`); the analyse
stage makes the series (backend, device, model, "<mode>.vs-native") from it.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

# The native implementations' version: a change to them (or to the pairing)
# moves the ratio by itself, so the series' points name it and a new one
# starts a new baseline (run.protocol.native, bench.analyse.series).
#   1 (2026-12-07): jax.numpy + jit, torch.nn eager, mlx.nn; Keras's Adam arithmetic.
VERSION = 1
# Pairs of (Keras call, native call) per worker. Measured: docs/measurements.md, "Keras against native code".
PAIRS = 5
Clock = Callable[[], float]


@dataclass(frozen=True)
class Tolerance:
    """How far native may sit from Keras and still be the same computation (float32).

    logits: max |native - keras| over the held-out logits, relative to
    1 + max |keras logit|; loss: |native - keras| relative to 1 + |keras loss|;
    update: max |native step - keras step| over every weight, relative to the
    learning rate (one Adam step moves a weight by at most ~lr). Measured
    differences sit two to three orders below these (docs/native.md); a wrong
    layer, layout or optimizer formula sits orders above them."""

    logits: float = 1e-4
    loss: float = 1e-5
    update: float = 1e-2

    def __post_init__(self):
        for name in ("logits", "loss", "update"):
            if not getattr(self, name) > 0:
                raise ValueError(f"Tolerance.{name} is {getattr(self, name)!r}; expected a number > 0")


TOLERANCE = Tolerance()
KINDS = ("dense", "conv", "pool", "flatten")
ACTIVATIONS = (None, "relu")


@dataclass(frozen=True)
class Layer:
    """One layer in native terms. kind: dense | conv | pool | flatten;
    activation: None or "relu"; size: conv's kernel (kh, kw), pool's window
    (= stride), flatten's input shape (h, w, c) without the batch, () else;
    weights: how many of Model.weights it owns (kernel and bias: 2)."""

    kind: str
    activation: str | None = None
    size: tuple[int, ...] = ()
    weights: int = 0

    def __post_init__(self):
        if self.kind not in KINDS or self.activation not in ACTIVATIONS or self.weights not in (0, 2):
            raise ValueError(f"Layer({self.kind!r}, {self.activation!r}, weights={self.weights!r}); expected "
                             f"kind in {KINDS}, activation in {ACTIVATIONS}, weights 0 or 2")


@dataclass(frozen=True)
class Adam:
    """Keras's Adam: m += (g - m)(1 - beta_1); v += (g^2 - v)(1 - beta_2);
    w -= lr sqrt(1 - beta_2^t) / (1 - beta_1^t) * m / (sqrt(v) + epsilon)."""

    learning_rate: float
    beta_1: float = 0.9
    beta_2: float = 0.999
    epsilon: float = 1e-7

    def __post_init__(self):
        if not (self.learning_rate > 0 and 0 <= self.beta_1 < 1 and 0 <= self.beta_2 < 1 and self.epsilon > 0):
            raise ValueError(f"{self!r}; expected learning_rate > 0, betas in [0, 1), epsilon > 0")

    def alpha(self, t: int) -> float:
        """The step size of step t (1, 2, ...)."""
        return self.learning_rate * math.sqrt(1 - self.beta_2 ** t) / (1 - self.beta_1 ** t)


@dataclass(frozen=True)
class Model:
    """The benchmark's model in native terms: layers in order, the weights in
    Keras's layout (kernel (in, out) / (kh, kw, in, out), then bias), the
    optimizer, the batch size. Loss: sparse cross-entropy on logits, mean."""

    name: str
    layers: tuple[Layer, ...]
    weights: tuple[np.ndarray, ...] = field(repr=False)
    adam: Adam
    batch_size: int
    jit: bool = False  # whether Keras compiles its steps (model.jit_compile): mlx's native follows it

    def __post_init__(self):
        if sum(layer.weights for layer in self.layers) != len(self.weights) or self.batch_size < 1:
            raise ValueError(f"Model {self.name!r}: {len(self.weights)} weights for layers owning "
                             f"{sum(layer.weights for layer in self.layers)}, batch size {self.batch_size!r}; "
                             "expected them to match and a positive batch size")


@dataclass(frozen=True)
class Unsupported:
    """A backend without a native model, and why (recorded as the result's native.unavailable)."""

    reason: str


class Mismatch(Exception):
    """The native model is not the Keras model: a `quality` failure of the native block."""


def describe(keras_model, batch_size: int) -> Model:
    """The Keras model in native terms; Mismatch naming what has no native counterpart."""
    layers, weights = [], []
    for layer in keras_model.layers:
        kind, cfg = type(layer).__name__, layer.get_config()
        act = cfg.get("activation")
        act = None if act in (None, "linear") else act
        if kind == "InputLayer":
            continue
        if kind == "Dense":
            got = Layer("dense", act, (), 2) if act in ACTIVATIONS else None
        elif kind == "Conv2D" and cfg.get("padding") == "valid" and tuple(cfg.get("strides")) == (1, 1) \
                and tuple(cfg.get("dilation_rate")) == (1, 1) and cfg.get("groups", 1) == 1 and act in ACTIVATIONS:
            got = Layer("conv", act, tuple(cfg["kernel_size"]), 2)
        elif kind == "MaxPooling2D" and cfg.get("padding") == "valid" \
                and tuple(cfg.get("pool_size")) == tuple(cfg.get("strides")) and len(set(cfg["pool_size"])) == 1:
            got = Layer("pool", None, tuple(cfg["pool_size"]))
        elif kind == "Flatten":
            got = Layer("flatten", None, tuple(int(d) for d in layer.input.shape[1:]))
        else:
            got = None
        if got is None or (got.weights and (not cfg.get("use_bias", True) or len(layer.get_weights()) != 2)):
            raise Mismatch(f"layer {layer.name} ({kind}, {cfg.get('activation')}) has no native counterpart "
                           f"(bench/measure/native.py describe)")
        layers.append(got)
        weights += [np.array(w, dtype=np.float32) for w in layer.get_weights()]
    opt = keras_model.optimizer
    if type(opt).__name__ != "Adam" or getattr(opt, "amsgrad", False) or _loss_name(keras_model) is None:
        raise Mismatch(f"optimizer {type(opt).__name__} / loss {keras_model.loss!r}: expected Adam without amsgrad "
                       "and sparse categorical cross-entropy from logits")
    return Model(keras_model.name, tuple(layers), tuple(weights),
                 Adam(float(np.asarray(opt.learning_rate)), float(opt.beta_1), float(opt.beta_2),
                      float(opt.epsilon)), batch_size, getattr(keras_model, "jit_compile", False) is True)


def _loss_name(keras_model) -> str | None:
    cfg = getattr(keras_model.loss, "get_config", lambda: {})()
    ok = cfg.get("name") == "sparse_categorical_crossentropy" and cfg.get("from_logits") is True \
        and cfg.get("reduction") == "sum_over_batch_size" and not cfg.get("label_smoothing") \
        and cfg.get("ignore_class") is None
    return cfg["name"] if ok else None


# -- the check ----------------------------------------------------------------------

def agreement(keras: Mapping[str, Any], native: Mapping[str, Any], adam: Adam,
              tol: Tolerance = TOLERANCE) -> tuple[dict, str | None]:
    """({figure: relative difference}, the first one beyond `tol` as a message or None).

    keras/native: {"logits": array} and, for train, {"loss": float, "before":
    [weights], "after": [weights]} (Keras layout); relative as Tolerance says."""
    k_logits, n_logits = np.asarray(keras["logits"], np.float64), np.asarray(native["logits"], np.float64)
    if k_logits.shape != n_logits.shape:
        return {}, f"native logits have shape {n_logits.shape}, Keras's {k_logits.shape}"
    got = {"logits": float(np.max(np.abs(k_logits - n_logits)) / (1 + np.max(np.abs(k_logits))))}
    if "loss" in keras:
        got["loss"] = abs(float(keras["loss"]) - float(native["loss"])) / (1 + abs(float(keras["loss"])))
        steps = []
        for before, k_after, n_after in zip(keras["before"], keras["after"], native["after"]):
            if np.shape(k_after) != np.shape(n_after):
                return got, f"a native weight has shape {np.shape(n_after)}, Keras's {np.shape(k_after)}"
            delta = (np.asarray(n_after, np.float64) - before) - (np.asarray(k_after, np.float64) - before)
            steps.append(float(np.max(np.abs(delta))) if delta.size else 0.0)
        got["update"] = max(steps) / adam.learning_rate
    for name, value in got.items():
        if not value <= getattr(tol, name):  # NaN fails too
            return got, (f"native {name} differs from Keras's by {value:.3g} (relative), "
                         f"beyond the tolerance {getattr(tol, name):g} (bench/measure/native.py Tolerance)")
    return got, None


# -- the paired timing --------------------------------------------------------------

Run = Callable[[int], object]  # run(steps): host-synchronised, as the harness's
Reset = Callable[[], None]


def pairs(keras: Run, native: Run, steps: int, n: int, clock: Clock = time.perf_counter,
          keras_reset: Reset | None = None, native_reset: Reset | None = None) -> list[tuple[float, float]]:
    """n (keras seconds, native seconds) of `steps` steps each; Keras first in
    even pairs, native first in odd ones, so a drift within a pair cancels over
    two. Each reset runs before its side's call, untimed."""
    out = []
    for i in range(n):
        times = {}
        for side in (("keras", "native") if i % 2 == 0 else ("native", "keras")):
            run, reset = (keras, keras_reset) if side == "keras" else (native, native_reset)
            if reset is not None:
                reset()
            t0 = clock()
            run(steps)
            times[side] = clock() - t0
        out.append((times["keras"], times["native"]))
    return out


def pair_ratio(timed: Sequence[tuple[float, float]]) -> float:
    """Median over the pairs of Keras seconds / native seconds (> 1: Keras slower)."""
    usable = [k / n for k, n in timed if k > 0 and n > 0]
    if not usable:
        raise ValueError(f"pair_ratio: no pair with both times > 0 in {list(timed)!r}")
    return statistics.median(usable)


def combine(blocks: Sequence[Mapping[str, Any] | None]) -> dict | None:
    """The result's native block from its counted workers' ones (None: none had one).

    Ratios present: {"ratio": exp(median log worker ratio), "workers": n,
    "log_se": 1.2533 sd / sqrt(n) of the log ratios with 3+ workers, "version"}.
    Else the first error ({"error": {kind, message}}) or unavailable reason."""
    blocks = [b for b in blocks if isinstance(b, Mapping)]
    ratios = [float(b["ratio"]) for b in blocks if _positive(b.get("ratio"))]
    if ratios:
        logs = [math.log(r) for r in ratios]
        out = {"ratio": math.exp(statistics.median(logs)), "workers": len(ratios),
               "version": blocks[0].get("version", VERSION)}
        if len(logs) >= 3:
            out["log_se"] = 1.2533 * statistics.stdev(logs) / math.sqrt(len(logs))
        return out
    for key in ("error", "unavailable"):
        found = next((b[key] for b in blocks if key in b), None)
        if found is not None:
            return {key: found, "version": blocks[0].get("version", VERSION)}
    return None


def _positive(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0


# -- in the worker --------------------------------------------------------------------

@dataclass(frozen=True)
class Keras:
    """What `measure` needs of the Keras benchmark (bench/measure/child.py)."""

    model: object  # the compiled keras.Model, as its timed calls left it
    run: Run  # the timed calls' run(steps)
    steps: int  # their steps per call
    mode: str  # train | predict
    x_check: np.ndarray  # held-out inputs, a whole number of batches is not needed
    x_time: np.ndarray  # the timed data (chunk batches), as Keras's calls take it
    y_time: np.ndarray
    chunk: int  # batches per Keras call


def measure(backend, k: Keras, batch_size: int, n_pairs: int = PAIRS, clock: Clock = time.perf_counter) -> dict:
    """The worker's native block: {"ratio", "pairs", "check", "version", "keras_seconds",
    "native_seconds", "seconds"}, or {"unavailable": reason} / {"error": {kind, message}}, with
    "version". Never raises: the Keras result stands whatever happens here."""
    from bench.measure import failures

    t0 = clock()
    try:
        model = describe(k.model, batch_size)
        impl = backend.native(model)
        if isinstance(impl, Unsupported):
            return {"unavailable": impl.reason, "version": VERSION}
        check = _check(k, impl, model)
        native_run, native_reset = _native_runner(impl, k, model)
        keras_reset = _fresh_start(k.model, model) if k.mode == "train" else None
        native_run(1)  # warm: what the check did not compile yet
        timed = pairs(k.run, native_run, k.steps, n_pairs, clock, keras_reset, native_reset)
        return {"ratio": pair_ratio(timed), "pairs": len(timed), "check": check, "version": VERSION,
                "keras_seconds": [round(t, 6) for t, _ in timed], "native_seconds": [round(t, 6) for _, t in timed],
                "seconds": round(clock() - t0, 3)}  # the whole phase (check, warm-up, pairs): its cost
    except Mismatch as e:
        return {"error": failures.Failure("quality", f"native {e}").as_error(), "version": VERSION}
    except Exception as e:  # noqa: BLE001 - recorded with its kind, never raised into the Keras result
        import sys
        import traceback

        traceback.print_exc(file=sys.stderr)
        return {"error": failures.from_exception(e, "native").as_error(), "version": VERSION}


def _check(k: Keras, impl, model: Model) -> dict:
    """Native against Keras on the same weights (see the module doc); Mismatch when they differ."""
    import keras

    keras_side = {"logits": k.model.predict(k.x_check, batch_size=model.batch_size, verbose=0)}
    impl.load(list(model.weights))
    native_side = {"logits": impl.predict(impl.data(k.x_check), None)}
    if k.mode == "train":
        bs = model.batch_size
        x, y = k.x_time[:bs], k.y_time[:bs]
        restore = _fresh_start(k.model, model)
        restore()
        h = k.model.fit(x, y, batch_size=bs, epochs=1, verbose=0, shuffle=False)
        keras_side.update(loss=h.history["loss"][-1], before=[np.asarray(w, np.float64) for w in model.weights],
                          after=[keras.ops.convert_to_numpy(v.value) for v in _weights_in_order(k.model)])
        impl.load(list(model.weights))
        native_side.update(loss=impl.fit(impl.data(x, y), 1), after=impl.weights())
        restore()
    numbers, problem = agreement(keras_side, native_side, model.adam)
    if problem:
        raise Mismatch(f"{model.name}/{k.mode}: {problem}")
    return {name: float(f"{v:.3g}") for name, v in numbers.items()}


def _weights_in_order(keras_model) -> list:
    """The Keras model's weight variables in describe's order (layer by layer)."""
    return [v for layer in keras_model.layers for v in layer.weights]


def _fresh_start(keras_model, model: Model) -> Reset:
    """reset(): the Keras model back to `model.weights` and its Adam fresh
    (iteration and moments zero, the learning rate kept), the state every
    native train call starts from too."""
    import keras

    weights = _weights_in_order(keras_model)
    opt = [v for v in keras_model.optimizer.variables if not v.path.endswith("learning_rate")]
    zeros = [np.zeros(v.shape, keras.backend.standardize_dtype(v.dtype)) for v in opt]

    def reset() -> None:
        for v, value in zip(weights, model.weights):
            v.assign(value)
        for v, value in zip(opt, zeros):
            v.assign(value)

    return reset


def _native_runner(impl, k: Keras, model: Model) -> tuple[Run, Reset | None]:
    """run(steps) in Keras's chunks (bench/measure/child.py _runner): the same
    batches of the same data, returning host values."""
    data = impl.data(k.x_time, k.y_time)

    def chunks(steps: int):
        full, rest = divmod(steps, k.chunk)
        return [k.chunk] * full + ([rest] if rest else [])

    if k.mode == "train":
        def run(steps: int):
            for n in chunks(steps):
                loss = impl.fit(data, n)
            return loss

        return run, lambda: impl.load(list(model.weights))

    def predict(steps: int):
        for n in chunks(steps):
            out = impl.predict(data, n)
        return out

    return predict, None
