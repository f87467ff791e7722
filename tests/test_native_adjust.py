"""studies/native_adjust.py: a ratio built to follow the native side's time
by a known power is held still once that time is taken out, and a step built
into it reads at its size."""

import json
import math
from pathlib import Path

import pytest

from tests.helpers import load_study

POWER = 0.5  # how the made-up ratios follow the native time: r = 1.2 * (n / 0.6) ** POWER


def study():
    return load_study("native_adjust")


def invocation(folder: Path, native_s: float, step: float = 0.0) -> None:
    """One record of one benchmark: five workers around `native_s`, the ratio `step` above the built curve."""
    workers = []
    for w in range(5):
        n = native_s * (1 + 0.01 * (w - 2))
        r = 1.2 * (n / 0.6) ** POWER * (1 + step)
        workers.append({"native": {"ratio": r, "native_seconds": [n] * 5, "keras_seconds": [n * r] * 5}})
    ratio = math.exp(sorted(math.log(w["native"]["ratio"]) for w in workers)[2])
    folder.mkdir(parents=True)
    (folder / "jax--local-cpu--x-1.json").write_text(json.dumps({
        "run": {}, "target": {"backend": "jax"},
        "results": [{"model": "mlp", "mode": "train", "native": {"ratio": ratio}, "workers": workers}]}))


def test_a_ratio_that_follows_the_native_time_is_held_still_and_a_step_reads_its_size(tmp_path, capsys):
    for i, n in enumerate([0.55, 0.62, 0.58, 0.66, 0.60, 0.57]):  # the host moves the native side ±9 %
        invocation(tmp_path / f"run-{i:02d}", n)
    invocation(tmp_path / "inject-0.03-00", 0.64, step=0.03)  # raw: (0.64 / 0.59) ** 0.5 * 1.03 = +7.3 %
    assert study().main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "slope b +0.50 across invocations, +0.50 within" in out
    raw, adjusted = [line for line in out.splitlines() if "clean, " in line]
    assert float(raw.split("spread ±")[1].split()[0]) > 3  # the raw ratio moves with the host
    assert "spread ±0.0 %" in adjusted  # adjusted, it does not
    assert "inject-0.03-00   raw +7.3%, adjusted +3.0% against the clean median" in out


def test_the_left_out_invocation_never_sets_its_own_slope():
    """Leave one out: the slope that adjusts an invocation is fitted without its ratio."""
    m = study()
    others = [{"n": math.log(n), "r": math.log(1.2 * (n / 0.6) ** POWER)} for n in (0.55, 0.62, 0.58, 0.66)]
    target = {"n": math.log(0.64), "r": math.log(1.5)}
    shifted = {**target, "r": math.log(3.0)}  # its outcome changed: its adjustment moves by that alone
    centre = math.log(0.6)
    assert m.adjusted(shifted, others, centre) - m.adjusted(target, others, centre) == pytest.approx(math.log(2))
    assert m.adjusted(target, others, centre) == pytest.approx(math.log(1.5) - POWER * (math.log(0.64) - centre))


def test_a_given_slope_is_used_and_a_bad_one_is_one_line(tmp_path, capsys):
    for i, n in enumerate([0.55, 0.62, 0.58, 0.66]):
        invocation(tmp_path / f"run-{i:02d}", n)
    assert study().main(["--slope", "0", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "b = +0.00 given" in out
    raw, adjusted = [line for line in out.splitlines() if "clean, " in line]
    assert raw.split(":", 1)[1].split("(")[0].strip() == adjusted.split(":", 1)[1].split("(")[0].strip()  # b = 0: nothing
    assert study().main(["--slope", "x", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("native_adjust: --slope takes a number")
    assert study().main(["--slope", "0.6"]) == 2
    assert capsys.readouterr().err.startswith("native_adjust: name at least one folder")
    assert study().main([str(tmp_path / "nothing")]) == 2
    assert "holds no run-NN/ folder" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [[], ["--help"]])
def test_help(argv, capsys):
    assert study().main(argv) == (2 if not argv else 0)
    assert "vs-native follow the host" in capsys.readouterr().out
