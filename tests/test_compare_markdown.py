"""bench compare's markdown: literal expected text, and escaping of record text."""

from bench.compare.envdiff import EnvDiff
from bench.compare.markdown import escape, format_delta, format_value, render_markdown
from bench.compare.outcome import Outcome
from bench.compare.verdicts import Row
from bench.records.record import ErrorInfo

rows = (
    Row("jax", "rtx-5070-ti", "cnn", "train", "slower", base=9012.0, head=7201.5, delta=-0.2009,
        interval=(-0.2301, -0.1702), p_value=0.00058, p_prediction=0.0003, basis="nights",
        base_n=7, head_n=7, base_runs=7),
    Row("torch", "rtx-5070-ti", "mlp", "train", "failed", base=60100.0,
        error=ErrorInfo("oom", "CUDA out of memory | <b>2 GiB</b> @keras-team [see](http://x)")),
    Row("jax", "rtx-5070-ti", "mlp", "predict", "missing", base=250000.0, base_runs=7),
    Row("jax", "rtx-5070-ti", "cnn", "predict", "faster", unit="ms", better="smaller", base=12.5,
        head=9.4, delta=-0.248, interval=(-0.27, -0.22), p_value=0.0012, basis="samples",
        base_n=21, head_n=6, base_runs=3, head_dips=1),
    Row("jax", "rtx-5070-ti", "resnet_50", "train", "new", head=512.0, head_n=7),
    Row("jax", "rtx-5070-ti", "mlp", "train", "unchanged", base=60000.0, head=60420.0, delta=0.007,
        interval=(-0.012, 0.021), p_value=0.62, p_prediction=0.71, basis="nights", base_n=6,
        head_n=7, base_runs=7, base_dips=1),
)
diffs = (EnvDiff("jax", "rtx-5070-ti", "keras_version", "3.16.0.dev2026120102", "3.16.0.dev2026120202"),
         EnvDiff("jax", "rtx-5070-ti", "backend_versions.jax", "0.7.0", "0.7.1"),
         EnvDiff("jax", "rtx-5070-ti", "runner", None, "gpu`box|2"))

EXPECTED = """\
<!-- keras-nightly-bench:compare -->
### Benchmark comparison: 1 slower, 1 failed, 1 missing, 1 faster, 1 new, 1 unchanged

Head against the last 7 nights of data. A change is called when the medians differ by at least 3% and p < 0.01 (two-sided Mann–Whitney U test of the head's repeats and, given 3 or more nights or base runs, a t test of the head as one more of them); the interval is a 99% bootstrap interval of the change.

| verdict | backend | device | model | mode | base | head | delta | 99% interval | note |
|---|---|---|---|---|---|---|---|---|---|
| 🔴 slower | jax | rtx-5070-ti | cnn | train | 9.0k | 7.2k | -20.1% | -23.0% … -17.0% | p=0.00058, 7 repeats vs 7 nights |
| ❌ failed | torch | rtx-5070-ti | mlp | train | 60.1k | — | — | — | oom: CUDA out of memory \\| &lt;b&gt;2 GiB&lt;/b&gt; @\u200bkeras-team \\[see\\]\\(http://x\\) |
| ⚪ missing | jax | rtx-5070-ti | mlp | predict | 250.0k | — | — | — | not in the head |
| 🟢 faster | jax | rtx-5070-ti | cnn | predict | 12.5 ms | 9.40 ms | -24.8% | -27.0% … -22.0% | p=0.0012, 6 repeats vs 21 base repeats, 1 head dip left out |
| 🆕 new | jax | rtx-5070-ti | resnet\\_50 | train | — | 512 | — | — | no baseline |
| unchanged | jax | rtx-5070-ti | mlp | train | 60.0k | 60.4k | +0.7% | -1.2% … +2.1% | p=0.71, 7 repeats vs 6 nights, 1 base dip left out |

<details><summary>Environment differences (3)</summary>

| backend | device | field | base | head |
|---|---|---|---|---|
| jax | rtx-5070-ti | keras\\_version | 3.16.0.dev2026120102 | 3.16.0.dev2026120202 |
| jax | rtx-5070-ti | backend\\_versions.jax | 0.7.0 | 0.7.1 |
| jax | rtx-5070-ti | runner | — | gpu\\`box\\|2 |

</details>
"""


def test_markdown_for_a_small_fixed_case():
    outcome = Outcome(rows, diffs, "last 7 nights of data", 0.03, 0.01)
    assert render_markdown(outcome) == EXPECTED


def test_markdown_without_rows_or_differences():
    assert render_markdown(Outcome((), (), "2 base records", 0.05, 0.05)) == (
        "<!-- keras-nightly-bench:compare -->\n"
        "### Benchmark comparison: nothing to compare\n\n"
        "Head against the 2 base records. A change is called when the medians differ by at least 5% and "
        "p < 0.05 (two-sided Mann–Whitney U test of the head's repeats and, given 3 or more nights or "
        "base runs, a t test of the head as one more of them); the interval is a 95% bootstrap interval "
        "of the change.\n\n")


def test_escape_makes_record_text_inert():
    assert escape("a|b") == "a\\|b"
    assert escape("`rm -rf`") == "\\`rm -rf\\`"
    assert escape("<img src=x onerror=alert(1)>") == "&lt;img src=x onerror=alert\\(1\\)&gt;"
    assert escape("AT&T") == "AT&amp;T"
    assert escape("![x](http://e/x.png)") == "\\!\\[x\\]\\(http://e/x.png\\)"
    assert escape("line one\nline two") == "line one line two"
    assert escape("ping @keras-team") == "ping @\u200bkeras-team"
    assert escape("*bold* _it_ ~~s~~ #1 \\") == "\\*bold\\* \\_it\\_ \\~\\~s\\~\\~ \\#1 \\\\"


def test_value_and_delta_formats():
    assert [format_value(v) for v in (288_700.0, 1_234_567.0, 950.0, 2.531, None)] == \
        ["288.7k", "1.2M", "950", "2.53", "—"]
    assert format_value(12.5, "ms") == "12.5 ms"
    assert [format_delta(d) for d in (-0.2009, 0.25, -0.00001, None)] == ["-20.1%", "+25.0%", "+0.0%", "—"]
