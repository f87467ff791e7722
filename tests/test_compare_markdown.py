"""bench compare's markdown: literal expected text, and escaping of record text."""

import sys

from bench.compare.envdiff import EnvDiff
from bench.compare.markdown import escape, format_delta, format_value, render_markdown
from bench.compare.outcome import Outcome
from bench.compare.verdicts import VERDICTS, Row, rules
from bench.records.record import ErrorInfo

rows = (
    Row("jax", "rtx-5070-ti", "cnn", "train", "slower", base=9012.0, head=7201.5, delta=-0.2009,
        interval=(-0.2301, -0.1702), p_value=0.00058, p_prediction=0.0003, basis="nights",
        base_n=7, head_n=7, base_runs=7, detectable=0.0612),
    Row("torch", "rtx-5070-ti", "mlp", "train", "failed", base=60100.0,
        error=ErrorInfo("oom", "CUDA out of memory | <b>2 GiB</b> @keras-team [see](http://x)")),
    Row("jax", "rtx-5070-ti", "mlp", "predict", "missing", base=250000.0, base_runs=7),
    Row("jax", "rtx-5070-ti", "cnn", "predict", "faster", unit="ms", better="smaller", base=12.5,
        head=9.4, delta=-0.248, interval=(-0.27, -0.22), p_value=0.0012, basis="samples",
        base_n=21, head_n=6, base_runs=3, head_dips=1, detectable=0.05),
    Row("jax", "rtx-5070-ti", "resnet_50", "train", "new", head=512.0, head_n=7),
    Row("jax", "rtx-5070-ti", "mlp", "train", "unchanged", base=60000.0, head=60420.0, delta=0.007,
        interval=(-0.012, 0.021), p_value=0.62, p_prediction=0.71, basis="nights", base_n=6,
        head_n=7, base_runs=7, base_dips=1, reason="the change is below 3%", detectable=0.0451),
    Row("torch", "local-cpu", "mlp", "predict", "unchanged", base=140000.0, head=70000.0, delta=-0.5,
        interval=(-0.56, -0.44), p_value=0.1, basis="samples", base_n=3, head_n=3, base_runs=1,
        reason="no test can reach p < 0.01 with 3 against 3 values (the smallest p is 0.1)"),
    Row("jax", "local-cpu", "mlp", "train", "slower", base=80000.0, head=72000.0, delta=-0.1,
        interval=(-0.12, -0.08), p_value=0.0004, basis="pairs", base_n=7, head_n=7, base_runs=1,
        detectable=0.031, pairs_left_out=1),
    Row("jax", "local-cpu", "mlp", "train", "unchanged", unit="bytes", better="smaller", base=512e6,
        head=530e6, delta=0.035, basis="runs", base_n=1, head_n=1, base_runs=1, metric="host memory",
        reason="one value per run: 1 base value, the test needs 3"),
)
diffs = (EnvDiff("jax", "rtx-5070-ti", "keras_version", "3.16.0.dev2026120102", "3.16.0.dev2026120202"),
         EnvDiff("jax", "rtx-5070-ti", "backend_versions.jax", "0.7.0", "0.7.1"),
         EnvDiff("jax", "rtx-5070-ti", "runner", None, "gpu`box|2"))

EXPECTED = """\
<!-- keras-nightly-bench:compare -->
### Benchmark comparison: 2 slower, 1 failed, 1 missing, 1 faster, 1 new, 3 unchanged

Head against the last 7 nights of data. A change is called when the medians differ by at least 3% and p < 0.01, shared across the rows by Benjamini–Hochberg (two-sided Mann–Whitney U test of the head's repeats and, given 3 or more nights or base runs, a t test of the head as one more of them); the interval is a 99% bootstrap interval of the change; "sees" is the smallest slowdown it could have called. Every rule is listed below. Rows marked A/B worker pairs pair worker i of the base with worker i of the head (they ran back to back): an exact sign-flip permutation test of the log ratios and the interval it inverts to.

⚠️ too few repeats to see 3% in jax/local-cpu/mlp/train: it could call only changes of 3.1% or more  
⚠️ too few repeats to see 3% in jax/rtx-5070-ti/cnn/train: it could call only changes of 6.1% or more  
⚠️ too few repeats to see 3% in jax/rtx-5070-ti/cnn/predict: it could call only changes of 5.0% or more  
⚠️ too few repeats to see 3% in jax/rtx-5070-ti/mlp/train: it could call only changes of 4.5% or more  
⚠️ too few repeats to see 3% in torch/local-cpu/mlp/predict: it could call no change at all

| verdict | backend | device | model | mode | base | head | delta | 99% interval | sees | note |
|---|---|---|---|---|---|---|---|---|---|---|
| 🔴 slower | jax | local-cpu | mlp | train | 80.0k | 72.0k | -10.0% | -12.0% … -8.0% | ≥3.1% | p=0.0004, 7 A/B worker pairs, 1 pair left out |
| 🔴 slower | jax | rtx-5070-ti | cnn | train | 9.0k | 7.2k | -20.1% | -23.0% … -17.0% | ≥6.1% | p=0.00058, 7 repeats vs 7 nights |
| ❌ failed | torch | rtx-5070-ti | mlp | train | 60.1k | — | — | — | — | oom: CUDA out of memory \\| &lt;b&gt;2 GiB&lt;/b&gt; @\u200bkeras-team \\[see\\]\\(http\u200b://x\\) |
| ⚪ missing | jax | rtx-5070-ti | mlp | predict | 250.0k | — | — | — | — | not in the head |
| 🟢 faster | jax | rtx-5070-ti | cnn | predict | 12.5 ms | 9.40 ms | -24.8% | -27.0% … -22.0% | ≥5.0% | p=0.0012, 6 repeats vs 21 base repeats, 1 head dip left out |
| 🆕 new | jax | rtx-5070-ti | resnet\\_50 | train | — | 512 | — | — | — | no baseline |
| unchanged | jax | local-cpu | mlp | train host memory | 512.0M bytes | 530.0M bytes | +3.5% | — | nothing | one value per run: 1 base value, the test needs 3 |
| unchanged | jax | rtx-5070-ti | mlp | train | 60.0k | 60.4k | +0.7% | -1.2% … +2.1% | ≥4.5% | p=0.71, 7 repeats vs 6 nights, 1 base dip left out; the change is below 3% |
| unchanged | torch | local-cpu | mlp | predict | 140.0k | 70.0k | -50.0% | -56.0% … -44.0% | nothing | p=0.1, 3 repeats vs 3 base repeats; no test can reach p &lt; 0.01 with 3 against 3 values \\(the smallest p is 0.1\\) |

<details><summary>Environment differences (3)</summary>

| backend | device | field | base | head |
|---|---|---|---|---|
| jax | rtx-5070-ti | keras\\_version | 3.16.0.dev2026120102 | 3.16.0.dev2026120202 |
| jax | rtx-5070-ti | backend\\_versions.jax | 0.7.0 | 0.7.1 |
| jax | rtx-5070-ti | runner | — | gpu\\`box\\|2 |

</details>

<details><summary>Rules (10)</summary>

1. dips: a repeat, night or base run more than 10% and 5 robust sigmas worse than its group's median is left out first (a disturbed machine, not Keras)
2. values: the head's repeats are tested against one value per night or base run; when there are fewer than 3 of those, or too few for the test to ever reach p < 0.01, every base repeat stands in; when even that cannot (3 repeats against 3: the smallest p is 0.1), nothing can be called
3. size: the medians must differ by at least 3%
4. test: p < 0.01 in a two-sided Mann-Whitney U test of the head's repeats against those values
5. ordinary run: given 3 or more nights or base runs, p < 0.01 also in a t test of the head's median as one more of them (log scale): a run's repeats share its night, so only runs show the run-to-run spread
6. interval: the 99% bootstrap interval of the change (ratio of the medians) lies wholly on one side of 0, so the interval shown never contradicts the verdict
7. A/B pairs: when base and head are the two sides of one `bench run --ab` run, worker i of one side is paired with worker i of the other; the test is an exact sign-flip permutation test of the pairs' log ratios and the interval the shifts it does not reject at 0.01; a pair is left out only when a worker failed (or, taken in turns, was disturbed), never for its value
8. one-value metrics (latency p99, peak memory; better: smaller): the size rule and the ordinary-run test with its 99% prediction interval; with fewer than 3 nights or base runs they are shown, not called
9. many rows: the p-values of all tested rows of one comparison are held to Benjamini–Hochberg at 0.01: each row's p must be below 0.01 x R / m (m rows tested, R the rows BH calls counting this one), so when nothing changed, the chance that any row is called stays at most 0.01
10. seeing: per benchmark, the smallest slowdown these rules could have called with these values and this noise; when that is more than 3% (or none at all) the comparison says so: too few repeats to see it

</details>
"""


def test_markdown_for_a_small_fixed_case():
    ordered = tuple(sorted(rows, key=lambda r: (VERDICTS.index(r.verdict), r.key, r.metric)))
    outcome = Outcome(ordered, diffs, "last 7 nights of data", 0.03, 0.01)
    assert render_markdown(outcome) == EXPECTED


def test_markdown_without_rows_or_differences():
    text = render_markdown(Outcome((), (), "2 base records", 0.05, 0.05))
    assert text.startswith(
        "<!-- keras-nightly-bench:compare -->\n"
        "### Benchmark comparison: nothing to compare\n\n"
        "Head against the 2 base records. A change is called when the medians differ by at least 5% and "
        "p < 0.05, shared across the rows by Benjamini–Hochberg (two-sided Mann–Whitney U test of the head's repeats and, given 3 or more nights or "
        "base runs, a t test of the head as one more of them); the interval is a 95% bootstrap interval "
        "of the change; \"sees\" is the smallest slowdown it could have called. Every rule is listed below.\n\n"
        "\n<details><summary>Rules (10)</summary>\n\n"
        "1. dips: a repeat, night or base run more than 10% and 5 robust sigmas worse than its group's median "
        "is left out first (a disturbed machine, not Keras)\n")
    assert "3. size: the medians must differ by at least 5%\n" in text


def test_rules_name_the_settings_in_help_and_fill_them_in_outputs():
    assert rules()[2] == "size: the medians must differ by at least compare.min_change"
    assert rules(0.03, 0.01)[3] == ("test: p < 0.01 in a two-sided Mann-Whitney U test of the head's repeats "
                                    "against those values")
    assert "the 1 - compare.alpha bootstrap interval" in rules()[5]


def test_pr_comment_footer_escapes_rejection_reasons():
    from bench.ci import pr_comment as module
    lines = module.footer("a" * 40, "", ("x.json: field run.id is 'a` [x](http://e) `b'\nsecond line",))
    assert lines == ["Benchmarked head `aaaaaaaaaaaa`.", "Records left out (invalid):",
                     "- x.json: field run.id is 'a\\` \\[x\\]\\(http\u200b://e\\) \\`b'"]


def test_escape_makes_record_text_inert():
    assert escape("a|b") == "a\\|b"
    assert escape("`rm -rf`") == "\\`rm -rf\\`"
    assert escape("<img src=x onerror=alert(1)>") == "&lt;img src=x onerror=alert\\(1\\)&gt;"
    assert escape("AT&T") == "AT&amp;T"
    assert escape("![x](http://e/x.png)") == "\\!\\[x\\]\\(http\u200b://e/x.png\\)"
    assert escape("see https://evil.example or www.evil.example") == (
        "see https\u200b://evil.example or www\u200b.evil.example")  # no bare autolink either
    assert escape("line one\nline two") == "line one line two"
    assert escape("ping @keras-team") == "ping @\u200bkeras-team"
    # '#1' is an issue reference on GitHub: a zero-width space breaks it (tests/test_escape.py)
    assert escape("*bold* _it_ ~~s~~ #1 \\") == "\\*bold\\* \\_it\\_ \\~\\~s\\~\\~ \\#\u200b1 \\\\"


def test_value_and_delta_formats():
    assert [format_value(v) for v in (288_700.0, 1_234_567.0, 950.0, 2.531, None)] == \
        ["288.7k", "1.2M", "950", "2.53", "—"]
    assert format_value(12.5, "ms") == "12.5 ms"
    assert [format_delta(d) for d in (-0.2009, 0.25, -0.00001, None)] == ["-20.1%", "+25.0%", "+0.0%", "—"]
