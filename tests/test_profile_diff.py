"""bench.analyse.profile: the diff of two nights' profile summaries, on made-up summaries."""

from __future__ import annotations

import pytest

from bench.analyse.profile import OpChange, Profile, describe, diff, percent


def summary(ops: dict[str, float], *, host: float = 1.0, other=(), compiles=0, retraces=0, profiler="torch.profiler"):
    """A result's profile as bench/measure/profiling.py writes it, from {op: ms per step}."""
    names = list(ops)
    return {"profiler": profiler, "steps": 8, "wall_ms": sum(ops.values()) + host, "device_ms": sum(ops.values()),
            "host_ms": host, "compiles": compiles, "retraces": retraces,
            "ops": {"name": names, "ms": [ops[n] for n in names], "calls": [1.0] * len(names)},
            "other_ms": 0.1, "other_ops": list(other), "seconds": 1.0}


def test_an_op_that_slows_down_is_named_with_its_change_and_a_new_op_as_new():
    good = Profile.of(summary({"aten::convolution_backward": 10.0, "aten::mm": 5.0, "aten::add": 1.0}))
    bad = Profile.of(summary({"aten::convolution_backward": 13.8, "aten::mm": 5.1, "aten::add": 1.0,
                              "aten::transpose": 2.0}))
    d = diff(good, bad)
    conv = next(c for c in d.ops if c.name == "aten::convolution_backward")
    assert conv.kind == "moved" and conv.change == pytest.approx(0.38)
    assert [c.text() for c in d.notable] == ["aten::convolution_backward +38 %", "new aten::transpose"]
    assert describe(d) == "aten::convolution_backward +38 %, new aten::transpose"


def test_direction_is_the_ops_time_whatever_the_series_direction():
    """A faster op reads negative: change is bad/good - 1 of its ms per step."""
    d = diff(Profile.of(summary({"dot": 4.0, "copy": 1.0})), Profile.of(summary({"dot": 3.0, "copy": 1.0})))
    assert d.notable[0].change == pytest.approx(-0.25) and describe(d) == "dot -25 %"


def test_small_moves_and_small_ops_are_left_out():
    good = Profile.of(summary({"big": 100.0, "tiny": 0.5, "steady": 20.0}))
    bad = Profile.of(summary({"big": 105.0, "tiny": 1.5, "steady": 20.0}))  # +5 %; +200 % of 0.4 % of the time
    d = diff(good, bad)
    assert d.notable == () and describe(d) == "no op moved by 10% or more"
    assert {c.name for c in d.ops} == {"big", "tiny", "steady"}  # every op is in the diff all the same


def test_an_op_among_the_good_nights_other_ops_moved_up_it_is_not_new():
    good = Profile.of(summary({"a": 5.0}, other=["transpose"]))
    bad = Profile.of(summary({"a": 5.0, "transpose": 2.0}))
    assert [c.kind for c in diff(good, bad).notable] == ["up"]
    d = diff(bad, Profile.of(summary({"a": 5.0})))  # the reverse: it no longer runs at all
    assert [(c.name, c.kind) for c in d.notable] == [("transpose", "gone")]
    d = diff(bad, good)  # it still runs, below the top ops
    assert [(c.name, c.kind) for c in d.notable] == [("transpose", "down")]


def test_host_time_compiles_and_retraces_are_compared_too():
    good = Profile.of(summary({"a": 5.0}, host=2.0, retraces=0))
    bad = Profile.of(summary({"a": 5.0}, host=3.0, retraces=8))
    assert describe(diff(good, bad)) == "host +50 %, retraces 0 → 8"


def test_largest_shift_first_and_a_limit_with_a_count_of_the_rest():
    good = Profile.of(summary({f"op{i}": 10.0 for i in range(6)}))
    bad = Profile.of(summary({f"op{i}": 10.0 * (1.2 + i / 10) for i in range(6)}))
    d = diff(good, bad)
    assert [c.name for c in d.notable] == ["op5", "op4", "op3", "op2", "op1", "op0"]
    assert describe(d, limit=2) == "op5 +70 %, op4 +60 %, 4 more"


def test_other_profiler_or_no_summary_gives_no_diff():
    jax = Profile.of(summary({"a": 1.0}, profiler="jax.profiler"))
    assert diff(jax, Profile.of(summary({"a": 1.0}))) is None and describe(None) == ""
    assert Profile.of({"unavailable": "MLX has no op-level profiler"}) is None
    assert Profile.of({"error": {"kind": "timeout", "message": "ran past 120 s"}}) is None
    assert Profile.of(None) is None
    broken = summary({"a": 1.0})
    broken["ops"]["ms"] = ["fast"]
    assert Profile.of(broken) is None
    broken = summary({"a": 1.0})
    broken["ops"]["ms"] = []  # columns of different lengths
    assert Profile.of(broken) is None


def test_values_are_checked():
    with pytest.raises(ValueError, match="OpChange.kind"):
        OpChange("a", "vanished", 1.0, None)
    with pytest.raises(ValueError, match="Profile.host_ms"):
        Profile("p", 8, 1.0, 1.0, -1.0, ())
    assert percent(0.0001) == "±0 %" and percent(0.384) == "+38 %" and percent(-0.12) == "-12 %"


def test_to_json_carries_the_text_and_every_op():
    d = diff(Profile.of(summary({"a": 1.0})), Profile.of(summary({"a": 2.0})))
    out = d.to_json()
    assert out["text"] == "a +100 %" and out["ops"][0] == {"name": "a", "kind": "moved", "before_ms": 1.0,
                                                          "after_ms": 2.0, "change": 1.0}
