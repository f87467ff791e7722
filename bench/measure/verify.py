"""Check what was actually timed (issue 10, item 2). Pure checks on numpy arrays.

The quality gate (workloads/gate.py) runs before timing; these run after it,
on the timed calls' own results, so a backend that computes wrong results
quickly (a skipped layer, a stale cache, NaNs from a fast path) fails as
`quality` instead of becoming a fast number:

- predict: the timed inputs are the held-out digits tiled end to end, so row i
  of the last timed call's output must match the committed reference logits of
  held-out digit i mod 360 (same tolerance as the gate).
- train: the last timed call's loss is finite, and held-out accuracy after all
  the timed training still reaches the gate's threshold.
"""

from __future__ import annotations

import math

import numpy as np

from bench.measure.workloads import gate


def timed_predict(outputs, reference: gate.Reference) -> gate.GateResult:
    """`outputs`: the last timed predict call's logits, rows in tiled held-out order."""
    out = np.asarray(outputs, dtype=np.float64)
    n_ref = len(reference.logits)
    if out.ndim != 2 or out.shape[1:] != reference.logits.shape[1:]:
        return gate.GateResult(False, {"check": "timed_predict", "shape": list(out.shape)},
                               f"the last timed predict gave shape {out.shape}; expected (n, {reference.logits.shape[1]})")
    expected = reference.logits[np.arange(len(out)) % n_ref]
    finite = bool(np.all(np.isfinite(out)))
    diff = np.abs(out - expected)
    worst = float(np.max(diff / (gate.LOGIT_ATOL + gate.LOGIT_RTOL * np.abs(expected)))) if finite else math.inf
    numbers = {"check": "timed_predict", "rows": int(len(out)),
               "max_logit_diff": round(float(np.max(diff)), 6) if finite else None}
    if not finite:
        return gate.GateResult(False, numbers, "the last timed predict call gave non-finite logits")
    if worst > 1:
        return gate.GateResult(False, numbers, f"the last timed predict call's logits differ from the reference "
                                               f"by up to {numbers['max_logit_diff']:.4g} (tolerance "
                                               f"{gate.LOGIT_ATOL} + {gate.LOGIT_RTOL} x |reference|)")
    return gate.GateResult(True, numbers)


def timed_train(last_loss, held_out_accuracy: float, threshold: float = gate.TRAIN_ACCURACY) -> gate.GateResult:
    """After the timed fit calls: their last loss and the model's held-out accuracy."""
    loss = float(np.asarray(last_loss))
    numbers = {"check": "timed_train", "last_loss": round(loss, 6) if math.isfinite(loss) else None,
               "held_out_accuracy": round(held_out_accuracy, 4), "threshold": threshold}
    if not math.isfinite(loss):
        return gate.GateResult(False, numbers, f"the last timed fit call's loss is {loss}; expected a finite number")
    if held_out_accuracy < threshold:
        return gate.GateResult(False, numbers, f"held-out accuracy {held_out_accuracy:.3f} after the timed training; "
                                               f"expected >= {threshold:g}")
    return gate.GateResult(True, numbers)
