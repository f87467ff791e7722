"""What a comparison can and cannot see (issue 10, item 4): the two cases a
new user hit, reproduced with fixed figures, and what the output says."""

import json

from bench import cli
from bench.compare.baseline import baseline_from_records
from bench.compare.head import head_from_records
from bench.compare.markdown import render_markdown
from bench.compare.outcome import build_outcome
from bench.config import Compare
from tests.helpers import make_record, ok

SETTINGS = Compare(nights=7, min_change=0.03, alpha=0.01)

# Case 2: a full run cut by ~10 % (14 repeats against 14), in a process that
# lands in one of two speed modes (as protocol 1's single process did): the
# U test is clear, but the medians can jump between modes, so the interval
# of their ratio reaches past 0.
BIMODAL_BASE = [81144.0, 81596.0, 81687.0, 84025.0, 94959.0, 98741.0, 100278.0, 100338.0, 100580.0,
                100764.0, 101238.0, 102768.0, 103622.0, 103940.0]
BIMODAL_HEAD = [71655.0, 72080.0, 72558.0, 73231.0, 74311.0, 74594.0, 87511.0, 90123.0, 90917.0,
                91077.0, 91373.0, 91795.0, 91906.0, 93666.0]


def one_run(samples, run_id, **kw):
    samples = list(samples)
    return make_record([ok("mlp", "predict", sorted(samples)[len(samples) // 2], samples)],
                       backend="torch", run_id=run_id, **kw)


def outcome_of(base_samples, head_samples):
    base = baseline_from_records([one_run(base_samples, "base")], "1 base record")
    head = head_from_records([one_run(head_samples, "head", event="pull_request",
                                      environment={"keras_source": "git"})])
    return build_outcome(base, head, SETTINGS)


def test_halved_samples_at_three_repeats_cannot_be_called_and_say_why():
    o = outcome_of([140000.0, 141800.0, 138300.0], [70000.0, 71000.0, 69500.0])
    (row,) = o.rows
    assert (row.verdict, row.p_value, row.detectable) == ("unchanged", 0.1, None)
    assert row.reason == "no test can reach p < 0.01 with 3 against 3 values (the smallest p is 0.1)"
    text = render_markdown(o)
    assert ("⚠️ too few repeats to see 3% in torch/local-cpu/mlp/predict: it could call no change at all\n"
            in text)
    assert ("| unchanged | torch | local-cpu | mlp | predict | 140.0k | 70.0k | -50.0% | -51.0% … -48.7% "
            "| nothing | p=0.1, 3 repeats vs 3 base repeats; no test can reach p &lt; 0.01 with 3 against 3 "
            "values \\(the smallest p is 0.1\\) |") in text


def test_ten_percent_at_fourteen_repeats_held_back_by_the_interval_rule_says_so():
    o = outcome_of(BIMODAL_BASE, BIMODAL_HEAD)
    (row,) = o.rows
    assert row.verdict == "unchanged" and row.p_value < 0.01 and row.delta < -0.10
    assert row.reason == "the 99% interval -27.5% … +8.7% includes 0"
    assert round(row.detectable, 3) == 0.186  # the medians jump between modes: only a big change shows
    text = render_markdown(o)
    assert (f"⚠️ too few repeats to see 3% in torch/local-cpu/mlp/predict: it could call only changes of "
            f"{row.detectable * 100:.1f}% or more\n") in text
    assert "p=0.0017, 14 repeats vs 14 base repeats; the 99% interval -27.5% … +8.7% includes 0" in text
    assert "6. interval: the 99% bootstrap interval of the change (ratio of the medians) lies wholly" in text


def test_the_smallest_callable_slowdown_is_what_the_rules_would_call():
    # Scale the head to just past the figure it reports: called; just short: not.
    base = [100.0 + d for d in (-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, -0.2, 0.3, 0.8, -0.8, 1.2, -1.2, 0.1)]
    o = outcome_of(base, base)
    (row,) = o.rows
    assert row.verdict == "unchanged" and 0.03 <= row.detectable < 0.06
    for factor, verdict in ((1 - row.detectable - 0.002, "slower"), (1 - row.detectable + 0.002, "unchanged")):
        (scaled,) = outcome_of(base, [v * factor for v in base]).rows
        assert scaled.verdict == verdict, (factor, scaled)
    assert o.blind() == ()  # it can see 3 %


def test_json_carries_rules_reasons_and_warnings(tmp_path, capsys):
    base, head = tmp_path / "base.json", tmp_path / "head.json"
    base.write_text(one_run([140000.0, 141800.0, 138300.0], "base").to_json())
    head.write_text(one_run([70000.0, 71000.0, 69500.0], "head").to_json())
    assert cli.main(["compare", "--base", str(base), "--head", str(head), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["warnings"] == ["too few repeats to see 3% in torch/local-cpu/mlp/predict: it could call "
                               "no change at all"]
    assert doc["rules"][2] == "size: the medians must differ by at least 3%"
    (row,) = doc["benchmarks"]
    assert (row["reason"], row["detectable"], row["metric"]) == (
        "no test can reach p < 0.01 with 3 against 3 values (the smallest p is 0.1)", None, "")
