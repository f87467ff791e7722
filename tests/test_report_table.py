"""`python -m bench report` on a small data folder: the table, cell for cell."""

import json
from datetime import timedelta

import pytest

from bench import cli
from bench.config import Trends
from bench.records.history import load_history
from bench.present.html import render_html
from bench.present.markdown import render_markdown
from bench.present.table import Row, build_rows, rows_to_json
from bench.analyse.series import build_series
from tests.helpers import T0, failed, make_record, ok, skipped, write_data

# docs/DESIGN.md's example row: 15 nights, the last -9.4 % (with dips before it).
JAX = [318000.0, 319000.0, 333000.0, 332000.0, 317000.0, 318500.0, 319500.0, 273000.0,
       274000.0, 318800.0, 259000.0, 229000.0, 318200.0, 318650.0, 288700.0]
TORCH = [9000.0] * 12 + [9100.0, 8800.0]
MLX = [9040.0, 9100.0, 9140.0, 9100.0, 9040.0, 9100.0, 9140.0]
LAST = 14  # nights 0..14; the newest run in the folder is night 14

# Sorted by status (what needs a look first), then name; noise within the
# series' band draws flat (the mlx jitter), the jax dips do not, nor torch's
# newest nights, +1.1 and -3.3 % off a level that never moved (band: the 1.5 % floor).
EXPECTED = """\
**1 Failed, 1 Stale, 1 New, 1 Steady, 1 Skipped**

| BACKEND | DEVICE | MODEL | MODE | LATEST | Δ PREV | TREND | RUNS | STATUS↑ | NOTE |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
| torch | rtx-5070-ti | cnn | train | 8.8k | -3.3% ▼ | ▅▅▅▅▅▅▅▅▅▅▅▅▆▃ | 14 | ✖ Failed | oom: CUDA out of memory \\| while allocating 2.0 GiB |
| mlx | apple-m4 | cnn | train | 9.1k | +0.4% | ▅▅▅▅▅▅▅ | 7 | … Stale |  |
| openvino | ryzen-5800x3d | mlp | predict | 268.2k | — | ▅ | 1 | New |  |
| jax | rtx-5070-ti | cnn | predict | 288.7k | -9.4% ▼ | ▇▇██▇▇▇▄▄▇▃▁▇▇▅ | 15 | Steady | one night off 318.7k samples/s: not a change |
| mlx | apple-m4 | mlp | train | — | — | — | 0 | Skipped | unsupported: no float64 on this device |
"""


def night(i, hours=0):
    return T0 + timedelta(days=i, hours=hours)


def records():
    recs = []
    for i, v in enumerate(JAX[:-1]):
        recs.append(make_record([ok("cnn", "predict", v)], backend="jax", device="rtx-5070-ti",
                                started_at=night(i), run_id=f"9{i:03d}"))
    # the last night ran twice: attempt 2 (a workflow_dispatch rerun) wins
    recs.append(make_record([ok("cnn", "predict", 150000.0)], backend="jax", device="rtx-5070-ti",
                            started_at=night(LAST), run_id="9014", attempt=1))
    recs.append(make_record([ok("cnn", "predict", JAX[-1])], backend="jax", device="rtx-5070-ti",
                            started_at=night(LAST, hours=3), run_id="9014", attempt=2,
                            event="workflow_dispatch"))
    for i, v in enumerate(TORCH):
        recs.append(make_record([ok("cnn", "train", v)], backend="torch", device="rtx-5070-ti",
                                started_at=night(i), run_id=f"8{i:03d}"))
    recs.append(make_record([failed("cnn", "train", "oom", "CUDA out of memory |\nwhile allocating 2.0 GiB")],
                            backend="torch", device="rtx-5070-ti", started_at=night(LAST), run_id="8014"))
    for i, v in enumerate(MLX):  # stops 8 days before the newest run
        recs.append(make_record([ok("cnn", "train", v), skipped("mlp", "train", "no float64 on this device")],
                                backend="mlx", device="apple-m4", started_at=night(i), run_id=f"7{i:03d}"))
    recs.append(make_record([ok("mlp", "predict", 268200.0)], backend="openvino", device="ryzen-5800x3d",
                            started_at=night(LAST), run_id="6014"))
    return recs


@pytest.fixture
def data(tmp_path):
    return write_data(records(), tmp_path / "data")


def rows_of(data):
    return build_rows(build_series(load_history(data).records), Trends())


def test_markdown_cell_for_cell(data):
    assert render_markdown(rows_of(data)) == EXPECTED


def test_cli_prints_the_table_and_a_summary(data, capsys):
    assert cli.main(["report", "--data", str(data)]) == 0
    out, err = capsys.readouterr()
    assert out == EXPECTED
    assert err.strip() == f"bench report: 39 run records read from {data}; none skipped"


def test_rerun_attempt_two_wins(data):
    jax = rows_of(data)[0]
    assert jax.latest == 288700.0 and jax.runs == 15
    assert jax.delta_prev == pytest.approx(288700.0 / 318650.0 - 1)


def test_json_has_the_design_keys(data, capsys):
    assert cli.main(["report", "--data", str(data), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["status"] for r in rows] == ["Failed", "Stale", "New", "Steady", "Skipped"]
    design = ["backend", "device", "model", "mode", "latest", "delta_prev", "trend", "runs", "status"]
    assert all(set(design) <= set(r) for r in rows)
    assert {k: rows[2][k] for k in design} == {
        "backend": "openvino", "device": "ryzen-5800x3d", "model": "mlp", "mode": "predict",
        "latest": 268200.0, "delta_prev": None, "trend": "▅", "runs": 1, "status": "New"}
    assert rows[0]["last_failure"]["kind"] == "oom"
    assert rows[3]["delta_prev"] == pytest.approx(-0.094, abs=1e-4)
    assert rows[3]["delta_off"] == "worse" and rows[1]["delta_off"] is None


def test_rows_to_json_puts_the_design_keys_first():
    row = Row("jax", "d", "cnn", "train", 1.0, None, "█", 1, "New", "samples/s", "bigger", None, None)
    assert list(rows_to_json([row])[0])[:9] == ["backend", "device", "model", "mode", "latest",
                                                "delta_prev", "trend", "runs", "status"]
    with pytest.raises(ValueError, match="'Great'"):
        Row("jax", "d", "cnn", "train", 1.0, None, "█", 1, "Great", "samples/s", "bigger", None, None)


def test_regressed_row_notes_the_change(tmp_path):
    values = [1000.0, 1010.0, 995.0, 1005.0, 990.0] * 4 + [900.0, 902.0, 899.0]
    recs = [make_record([ok("mlp", "train", v)], started_at=night(i), run_id=str(i)) for i, v in enumerate(values)]
    row = rows_of(write_data(recs, tmp_path))[0]
    assert row.status == "Regressed" and row.change.index == 20
    assert render_markdown([row]).splitlines()[4].endswith(
        "| 23 | ▼ Regressed | -10.0%: 1.0k → 900 samples/s; Keras 3.16.0.dev2026110102 \\(2026-11-20\\) "
        "→ 3.16.0.dev2026110102 \\(2026-11-21\\) [Keras commits]"
        "(https://github.com/keras-team/keras/commits/master"
        "?since=2026-11-01T02:00:00Z&until=2026-11-01T02:00:00Z) |")


def test_html_is_standalone_and_escaped(data):
    recs = [make_record([failed("<script>", "train", "crash", "<b>boom</b> & more")], backend="a&b",
                        started_at=night(0))]
    page = render_html(rows_of(data) + build_rows(build_series(recs), Trends()))
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "&lt;b&gt;boom&lt;/b&gt; &amp; more" in page and "a&amp;b" in page
    assert "<td>288.7k</td>" not in page and '<td class="num">288.7k</td>' in page
    assert "src=" not in page and "href=" not in page  # nothing external


def test_html_and_out_file(data, tmp_path, capsys):
    out = tmp_path / "site" / "table.html"
    assert cli.main(["report", "--data", str(data), "--format", "html", "--out", str(out)]) == 0
    assert capsys.readouterr().out == ""
    assert '<td class="Stale">… Stale</td>' in out.read_text()
    assert '<p class="summary"><strong>1 Failed, 1 Stale, 1 New, 1 Steady, 1 Skipped</strong></p>' in out.read_text()
