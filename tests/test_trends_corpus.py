"""The status rule on drawn streams whose labels come from how each was
built (tests/corpus/streams.py, which imports nothing from bench.analyse):
a fixed-seed slice of studies/status_eval.py's goals, small enough for the
fast suite."""

from pathlib import Path

import numpy as np
import pytest

from bench import config
from bench.analyse.trends import find_change
from tests.corpus.streams import HARNESS_BLOCK, LEVELS, harness_residuals, noise, stream

T = config.load(Path(__file__).parents[1] / "benchmarks.yaml").trends  # the shipped `trends`
SPAN = T.window + 36


def _calls(s, nights):
    """Each replayed night's call: +1 Faster, -1 Regressed, 0 none."""
    logs = np.log(s.values)
    out = []
    for night in nights:
        f = find_change(list(logs[max(0, night + 1 - SPAN):night + 1]), T)
        out.append(0 if f is None else (1 if f.after > f.before else -1))
    return out


@pytest.mark.parametrize("kind", ["precise", "dips", "vm", "real"])
def test_flat_streams_replayed_night_by_night_never_alarm(kind):
    rng = np.random.default_rng(52)
    for level in LEVELS[kind]:
        s = stream(kind, level, SPAN + 300, None, 0.0, rng)
        assert not any(_calls(s, range(SPAN, len(s.values)))), (kind, level)


def test_a_3_percent_step_on_a_precise_series_is_called_by_its_third_night():
    rng = np.random.default_rng(53)
    called = 0
    for i in range(20):
        size = 0.03 if i % 2 else -0.03
        s = stream("precise", 0.005, SPAN + 3, SPAN, size, rng)
        called += _calls(s, [SPAN + 2]) == [np.sign(size)]
    assert called >= 19


def test_a_step_on_the_gpus_dips_is_called_in_its_direction_within_the_window():
    rng = np.random.default_rng(54)
    for i in range(20):
        size = 0.08 if i % 2 else -0.08
        s = stream("dips", 0.01, SPAN + T.window, SPAN, size, rng)
        calls = [c for c in _calls(s, range(SPAN, SPAN + T.window)) if c]
        assert calls and set(calls) == {np.sign(size)}, (i, np.round(np.log(s.values[-12:]), 3))


def test_the_streams_label_comes_from_how_they_are_built():
    rng = np.random.default_rng(1)
    s = stream("precise", 0.005, 50, 40, -0.03, rng)
    assert s.steps == ((40, -0.03),) and len(s.values) == 50
    logs = np.log(s.values)
    assert np.median(logs[40:]) - np.median(logs[:40]) == pytest.approx(np.log(0.97), abs=0.006)
    dipped, _ = noise("dips", 0.01, 2000, rng)
    assert (dipped < np.log(0.85)).mean() > 0.04 and (dipped > 0.05).mean() < 0.001  # one-sided
    with pytest.raises(ValueError, match="noise kind 'gpu'"):
        noise("gpu", 0.01, 5, rng)


def test_the_harness_kind_resamples_this_harness_s_own_invocations_in_blocks():
    sets = harness_residuals()
    assert len(sets) >= 5 and all(len(s) == 5 for s in sets)
    blocks = {tuple(np.round(s[i:i + HARNESS_BLOCK], 12)) for s in sets for i in range(len(s) - HARNESS_BLOCK + 1)}
    x, sigma = noise("harness", None, 40, np.random.default_rng(3))
    assert all(tuple(np.round(x[i:i + HARNESS_BLOCK], 12)) in blocks for i in range(0, 40, HARNESS_BLOCK))
    assert sigma == pytest.approx(np.std(np.concatenate(sets)))
    s = stream("harness", None, 50, 40, 0.05, np.random.default_rng(4))
    assert s.steps == ((40, 0.05),) and s.kind == "harness"
