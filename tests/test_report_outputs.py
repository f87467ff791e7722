"""The README section, the PNG plots and the report CLI's file outputs."""

from datetime import timedelta

import pytest

from bench import cli
from bench.config import Trends
from bench.present.plots import plot_name, write_plots
from bench.present.readme import END, START, ReadmeError, replace_section, update_readme
from bench.present.table import build_rows
from bench.analyse.series import build_series
from tests.helpers import T0, failed, make_record, ok, write_data

README = f"""# Keras Nightly Bench\r\n\nIntro stays.\n\n{START}\nold table\n{END}\n\nTail stays, untouched.\n"""
TABLE = "| A |\n| --- |\n| 1 |\n"


def test_readme_replaces_only_between_markers(tmp_path):
    path = tmp_path / "README.md"
    path.write_bytes(README.encode())
    assert update_readme(path, TABLE) is True
    assert path.read_bytes().decode() == README.replace("old table", TABLE.strip())
    assert update_readme(path, TABLE) is False  # idempotent


@pytest.mark.parametrize("text, found", [
    ("# no markers\n", f"found {START} 0 times and {END} 0 times"),
    (f"{START}\nonly a start\n", f"found {START} 1 time (line 1) and {END} 0 times"),
    (f"{END}\n{START}\n", f"found {START} 1 time (line 2) and {END} 1 time (line 1)"),
    (f"{START}\n{END}\n{START}\n{END}\n", f"found {START} 2 times (lines 1, 3) and {END} 2 times (lines 2, 4)"),
    (f"x {START}\n{END}\n", f"found {START} 0 times and {END} 1 time (line 2)"),
])
def test_readme_without_markers_is_a_clear_error(text, found):
    with pytest.raises(ReadmeError) as e:
        replace_section(text, TABLE, "README.md")
    assert str(e.value).startswith(f"README.md: expected the marker lines {START} and {END}")
    assert str(e.value).endswith(found)


def test_a_marker_quoted_in_prose_is_text_not_a_marker():
    text = f"see `{START}` and `{END}`\n{START}\nold\n{END}\nand `{END}` again\n"
    new = replace_section(text, TABLE)
    assert new == f"see `{START}` and `{END}`\n{START}\n{TABLE}{END}\nand `{END}` again\n"
    assert replace_section(new, TABLE) == new


def test_the_projects_own_readme_takes_the_table_twice_to_the_same_file(tmp_path):
    from pathlib import Path
    path = tmp_path / "README.md"
    path.write_bytes((Path(__file__).parents[1] / "README.md").read_bytes())
    update_readme(path, TABLE)
    once = path.read_bytes()
    assert update_readme(path, TABLE) is False and path.read_bytes() == once
    assert f"{START}\n{TABLE}{END}\n".encode() in once


def series_folder(tmp_path):
    recs = [make_record([ok("cnn", "train", v), failed("mlp", "train") if i == 6 else ok("mlp", "train", 50.0)],
                        backend="my backend/x", started_at=T0 + timedelta(days=i), run_id=str(i))
            for i, v in enumerate([100.0, 101.0, 99.0, 100.0, 100.0, 90.0, 91.0, 90.0])]
    return write_data(recs, tmp_path / "data")


def test_plots_one_png_per_series_and_an_overview(tmp_path):
    from bench.records.history import load_history
    series = build_series(load_history(series_folder(tmp_path)).records)
    rows = build_rows(series, Trends())
    assert [r.status for r in rows] == ["Regressed", "Steady"]
    paths = write_plots(series, rows, tmp_path / "plots")
    names = sorted(p.name for p in paths)
    assert names == ["my_backend_x-b8f800--local-cpu--cnn--train.png",
                     "my_backend_x-b8f800--local-cpu--mlp--train.png", "overview.png"]
    assert plot_name(("a b", "c/d", "e", "f")) == "a_b-7dbde9--c_d-6d2cc6--e--f.png"
    assert plot_name(("a$b", "d", "m", "x")) != plot_name(("a_b", "d", "m", "x"))  # no shared PNG
    for p in paths:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 5000


def test_cli_readme_and_plots(tmp_path, capsys):
    data = series_folder(tmp_path)
    readme = tmp_path / "README.md"
    readme.write_text(README)
    assert cli.main(["report", "--data", str(data), "--readme", str(readme),
                     "--plots", str(tmp_path / "plots")]) == 0
    out = capsys.readouterr().out
    text = readme.read_text()
    assert out.strip() in text and text.endswith("\nTail stays, untouched.\n")
    assert (tmp_path / "plots" / "overview.png").exists()


def test_cli_readme_without_markers_exits_2(tmp_path, capsys):
    readme = tmp_path / "README.md"
    readme.write_text("# nothing to replace\n")
    assert cli.main(["report", "--data", str(series_folder(tmp_path)), "--readme", str(readme)]) == 2
    assert "bench report: error: " in capsys.readouterr().err
    assert readme.read_text() == "# nothing to replace\n"


def test_cli_missing_data_folder_exits_2(tmp_path, capsys):
    assert cli.main(["report", "--data", str(tmp_path / "nope")]) == 2
    assert "no such folder" in capsys.readouterr().err


@pytest.mark.parametrize("flag, target", [("--out", "table.md"), ("--plots", "runs/plots"), ("--readme", "README.md")])
def test_cli_never_writes_into_the_data_folder(tmp_path, capsys, flag, target):
    data = series_folder(tmp_path)
    (data / "README.md").write_text(README)
    before = sorted(p.name for p in data.rglob("*"))
    assert cli.main(["report", "--data", str(data), flag, str(data / target)]) == 2
    assert f"{flag} {data / target} is inside --data" in capsys.readouterr().err
    assert sorted(p.name for p in data.rglob("*")) == before
