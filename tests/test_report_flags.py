"""`bench report --status/--sort/--fail-on`, `bench show`, and sparklines
that draw noise within the series' band flat."""

from datetime import timedelta

import pytest

from bench import cli
from bench.present.format import sparkline
from tests.helpers import T0, make_record, ok, write_data

FLAT = [1000.0, 1010.0, 995.0, 1005.0, 990.0] * 4
STEP = FLAT + [850.0, 855.0, 848.0, 852.0, 849.0]


def series_records(model, values):
    return [make_record([ok(model, "train", v)], started_at=T0 + timedelta(days=i), run_id=f"{model}{i}",
                        keras_version=f"3.14.0.dev{(T0 + timedelta(days=i)):%Y%m%d}01")
            for i, v in enumerate(values)]


@pytest.fixture
def data(tmp_path):
    # 'a' steady, 'b' regressed, 'c' watch (newest two nights -20 %), 25 nights each
    recs = (series_records("a", FLAT + FLAT[:5]) + series_records("b", STEP)
            + series_records("c", FLAT + FLAT[:3] + [800.0, 801.0]))
    return write_data(recs, tmp_path / "data")


def table_rows(out):
    return [line.split(" | ")[2] for line in out.splitlines() if line.startswith("| jax")]


def test_rows_sort_by_status_then_name_and_a_summary_heads_them(data, capsys):
    assert cli.main(["report", "--data", str(data)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "**1 Regressed, 1 Watch, 1 Steady**"
    assert table_rows(out) == ["b", "c", "a"]
    assert "| ▼ Regressed |" in out and "| ⚠ Watch |" in out
    assert "newest 2 nights -20.0% from 1.0k samples/s: a change if the next night agrees" in out


def test_sort_name_keeps_the_old_order(data, capsys):
    assert cli.main(["report", "--data", str(data), "--sort", "name"]) == 0
    out = capsys.readouterr().out
    assert table_rows(out) == ["a", "b", "c"]
    assert "| BACKEND↑ |" in out


def test_status_filter(data, capsys):
    assert cli.main(["report", "--data", str(data), "--status", "Regressed,Watch"]) == 0
    assert table_rows(capsys.readouterr().out) == ["b", "c"]
    assert cli.main(["report", "--data", str(data), "--status", "Regresed"]) == 2
    assert "--status 'Regresed'; expected names from Failed, Stale" in capsys.readouterr().err


def test_fail_on_regressed(data, tmp_path, capsys):
    assert cli.main(["report", "--data", str(data), "--fail-on", "regressed"]) == 1
    assert "bench report: 1 Regressed: jax/local-cpu/b/train" in capsys.readouterr().err
    clean = write_data(series_records("a", FLAT), tmp_path / "clean")
    assert cli.main(["report", "--data", str(clean), "--fail-on", "regressed"]) == 0


def test_show_prints_the_nights_with_marks(data, capsys):
    assert cli.main(["show", "jax/local-cpu/b/train", "--data", str(data)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == ("jax/local-cpu/b/train: Regressed, 25 nights, samples/s (bigger is better); "
                        "level 850, noise band ±3.8%")
    assert lines[1].split() == ["NIGHT", "VALUE", "Δ", "PREV", "KERAS", "COMMIT", "HOST", "MARK"]
    assert lines[2].split() == ["2026-11-01", "1000", "—", "3.14.0.dev2026110101", "—", "—"]
    assert lines[22].split() == ["2026-11-21", "850", "-14.1%", "3.14.0.dev2026112101", "—", "—", "◆", "change"]
    assert lines[-2] == "change: Keras 3.14.0.dev2026112001 (2026-11-20) → 3.14.0.dev2026112101 (2026-11-21)"


def test_show_bad_series(data, capsys):
    assert cli.main(["show", "jax/local-cpu/zzz/train", "--data", str(data)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bench show: error: series 'jax/local-cpu/zzz/train' is not in")
    assert "it has: jax/local-cpu/a/train, jax/local-cpu/b/train, jax/local-cpu/c/train" in err
    assert cli.main(["show", "jax-cnn", "--data", str(data)]) == 2
    assert "expected BACKEND/DEVICE/MODEL/MODE" in capsys.readouterr().err


def test_sparkline_draws_noise_in_the_band_flat():
    noisy = [100.0, 102.0, 98.0, 101.0, 99.0, 102.0]
    assert sparkline(noisy) == "▅█▁▆▃█"            # min-max: 2 % noise looks like big swings
    assert sparkline(noisy, levels=(100.0,), band=0.05) == "▅▅▅▅▅▅"
    assert sparkline(noisy + [70.0], levels=(100.0,), band=0.05) == "██████▁"  # a real dip stands out
    step = [100.0, 101.0, 99.0, 90.0, 91.0, 89.5]
    assert sparkline(step, levels=(100.0, 90.0), band=0.02) == "███▁▁▁"


def test_html_colours_only_a_delta_beyond_the_noise(tmp_path, capsys):
    # 'a' moves -1.5 % within its band; 'd' drops 40 % for one night.
    data = write_data(series_records("a", FLAT + FLAT[:5]) + series_records("d", FLAT + FLAT[:4] + [600.0]),
                      tmp_path / "data")
    assert cli.main(["report", "--data", str(data), "--format", "html"]) == 0
    page = capsys.readouterr().out
    assert '<td class="num worse">-40.3% ▼</td>' in page
    assert '<td class="num">-1.5%</td>' in page


def test_latency_rows_get_their_own_table_after_throughput(tmp_path, capsys):
    lat = {"unit": "ms", "better": "smaller"}
    recs = [make_record([ok("mlp", "predict", 1000.0), ok("mlp", "latency", 1.5, **lat)],
                        started_at=T0 + timedelta(days=d), run_id=f"r{d}") for d in range(2)]
    data = write_data(recs, tmp_path / "data")
    assert cli.main(["report", "--data", str(data)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:3] == ["**2 New**", "", "_samples/s, bigger is better_"]
    assert out.index("_ms, smaller is better_") == 8
    assert out[6].startswith("| jax | local-cpu | mlp | predict | 1.0k |")
    assert out[12].startswith("| jax | local-cpu | mlp | latency | 1.50 |")
