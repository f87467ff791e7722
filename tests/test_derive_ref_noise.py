"""studies/derive_ref_noise.py turns kept `bench run --reference` invocations
into the "ref" noise kind's sets: each series' vs-ref ratio per clean
invocation, in the order measured, injected ones and the reference build's
own records left out; and the kind draws from what it wrote."""

import json
import sys
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from bench.records.record import write
from tests.corpus import streams
from tests.helpers import T0, load_study, make_record, ok

RATIOS = [0.98, 1.01, 0.99, 1.02, 1.00]


def study():
    return load_study("derive_ref_noise")


def pair(folder: Path, ratio: float, when, run_id: str) -> None:
    """One invocation's two records: the nightly's (side b, carrying the ratio) and the frozen build's."""
    for side, value in (("b", 1000.0 * ratio), ("a", 1000.0)):
        extra = {"reference": {"ratio": ratio, "pairs": 8, "log_se": 0.01, "value": 1000.0}} if side == "b" else {}
        rec = make_record([ok("mlp", "train", value, **extra)], started_at=when, run_id=f"{run_id}-{side}",
                          run={"ab": {"id": run_id, "side": side, "reference": True}})
        write(rec, folder, Path(rec.relpath()).name)


def test_clean_invocations_become_one_set_in_order_and_the_kind_draws_from_it(tmp_path, monkeypatch, capsys):
    kept = tmp_path / "native-ref"
    for i, r in enumerate(RATIOS):
        pair(kept / f"run-{i:02d}", r, T0 + timedelta(minutes=3 * i), f"r{i}")
    pair(kept / "inject-0.03-00", 0.90, T0 + timedelta(minutes=30), "inj")  # a built step: never noise
    out = tmp_path / "corpus" / "ref_noise.json"  # a folder not there yet
    monkeypatch.setattr(sys, "argv", ["derive_ref_noise.py", str(kept), "--out", str(out)])
    assert study().main() == 0
    data = json.loads(out.read_text())
    [s] = data["sets"]
    assert s["values"] == RATIOS and s["better"] == "bigger" and s["what"] == "jax mlp/train.vs-ref"
    assert s["source"].startswith("native-ref/run-NN, 5 clean invocations, ") and str(tmp_path) not in s["source"]
    monkeypatch.setattr(streams, "REF_NOISE", out)
    x, sigma = streams.noise("ref", None, 40, np.random.default_rng(1))
    residuals = np.log(RATIOS) - np.log(RATIOS).mean()
    assert set(np.round(x, 12)) <= set(np.round(residuals, 12))
    assert sigma == pytest.approx(np.std(residuals))


def test_a_folder_without_enough_ratios_is_one_line(tmp_path, monkeypatch):
    for i, r in enumerate(RATIOS[:3]):
        pair(tmp_path / f"run-{i:02d}", r, T0, f"r{i}")
    monkeypatch.setattr(sys, "argv", ["derive_ref_noise.py", str(tmp_path), "--out", str(tmp_path / "o.json")])
    with pytest.raises(SystemExit) as e:
        study().main()
    assert str(e.value.code).startswith(f"derive_ref_noise: {tmp_path} holds no series with a vs-ref ratio in at least 4")


def test_a_record_that_is_not_a_run_is_one_line(tmp_path, monkeypatch):
    for i, r in enumerate(RATIOS):
        pair(tmp_path / f"run-{i:02d}", r, T0, f"r{i}")
    (tmp_path / "run-02" / "broken.json").write_text("[1, 2]")
    monkeypatch.setattr(sys, "argv", ["derive_ref_noise.py", str(tmp_path), "--out", str(tmp_path / "new" / "o.json")])
    with pytest.raises(SystemExit) as e:
        study().main()
    assert str(e.value.code).startswith(f"derive_ref_noise: {tmp_path}: a record under run-NN/ is not a bench run record")
