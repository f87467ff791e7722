"""The `bench` command: --version, --config on either side of the verb, one error path."""

import subprocess
import sys

import pytest

from bench import __version__, cli
from bench.commands import arguments
from bench.errors import BenchError, EXIT_BAD_INPUT, EXIT_NO
from bench.records.store import PublishError


def test_version(capsys):
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out == f"bench {__version__}\n"


@pytest.mark.parametrize("argv", [
    ["--config", "{cfg}", "matrix", "--include-local"],
    ["matrix", "--include-local", "--config", "{cfg}"],
])
def test_config_before_or_after_the_verb(argv, tmp_path, capsys):
    cfg = tmp_path / "nope.yaml"
    assert cli.main([a.format(cfg=cfg) for a in argv]) == EXIT_BAD_INPUT
    assert capsys.readouterr().err == f"bench matrix: error: {cfg}: cannot read: No such file or directory\n"


def test_config_after_the_verb_wins(tmp_path, capsys):
    assert cli.main(["--config", str(tmp_path / "a.yaml"), "matrix", "--config", str(tmp_path / "b.yaml")]) == 2
    assert "b.yaml: cannot read" in capsys.readouterr().err


@pytest.mark.parametrize("error, code, line", [
    (BenchError("--data x: bad"), EXIT_BAD_INPUT, "bench matrix: error: --data x: bad\n"),
    (PublishError("push rejected"), EXIT_NO, f"bench matrix: {PublishError.label}: push rejected\n"),
    (FileNotFoundError(2, "No such file or directory", "gone.json"), EXIT_BAD_INPUT,
     "bench matrix: error: gone.json: no such file or folder; expected an existing path\n"),
])
def test_every_error_is_one_line_and_an_exit_code(error, code, line, monkeypatch, capsys):
    import bench.commands.matrix as verb

    def fail(args):
        raise error
    monkeypatch.setattr(verb, "main", fail)
    assert cli.main(["matrix"]) == code
    assert capsys.readouterr().err == line


def test_positive_int_and_float_name_the_bad_value():
    assert arguments.positive_int("3") == 3
    assert arguments.positive_float("2.5") == 2.5
    for bad in ("0", "-1", "x", "1.5"):
        with pytest.raises(Exception, match=f"'{bad}'; expected a whole number >= 1"):
            arguments.positive_int(bad)
    for bad in ("0", "nan", "inf", "x"):
        with pytest.raises(Exception, match=f"'{bad}'; expected a number > 0"):
            arguments.positive_float(bad)


def test_split_names():
    assert arguments.split_names(["a,b", "c", "", " d , e "]) == ["a", "b", "c", "d", "e"]


def test_python_m_bench_runs_from_another_directory(tmp_path):
    out = subprocess.run([sys.executable, "-m", "bench", "--version"], cwd=tmp_path,
                         capture_output=True, text=True, check=True)
    assert out.stdout == f"bench {__version__}\n"


def test_report_and_site_work_from_another_folder_with_the_packaged_config(data_folder, tmp_path):
    import os
    env = {k: v for k, v in os.environ.items() if k != "BENCH_CONFIG"}
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for argv in (["report", "--data", str(data_folder)],
                 ["site", "--data", str(data_folder), "--out", "site", "--no-plots"]):
        out = subprocess.run([sys.executable, "-m", "bench", *argv], cwd=elsewhere, env=env,
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
    assert (elsewhere / "site" / "index.html").is_file() and (elsewhere / "site" / "palette.css").is_file()
