"""`bench matrix`: the GitHub Actions matrix from benchmarks.yaml, and which
backends a pull request's changes affect."""

import json
import shlex
import subprocess
import sys

import pytest
import yaml

from bench import config
from bench.ci.affected import STAGES, affected_backends
from bench.cli import main as cli_main
from bench.ci.matrix import Entry, build_matrix, undeclared_labels

ROOT = config.REPO_ROOT


def _pairs(entries):
    return [(e.device, e.backend) for e in entries]


def test_matrix_lists_every_device_backend_pair_but_local_only_devices():
    entries = build_matrix(config.load())
    assert _pairs(entries) == [
        ("rtx-5070-ti", "jax"), ("rtx-5070-ti", "torch"), ("apple-m4", "mlx"),
        ("apple-m4-cpu", "mlx-main"), ("ryzen-5800x3d", "openvino"),
    ]


def test_entry_carries_runner_labels_keras_backend_and_device_install_override():
    by = {(e.device, e.backend): e for e in build_matrix(config.load())}
    gpu_torch = by["rtx-5070-ti", "torch"].to_json()
    assert gpu_torch == {
        "device": "rtx-5070-ti", "backend": "torch", "keras_backend": "torch",
        "runs_on": ["self-hosted", "linux", "x64", "rtx-5070-ti"],
        "install": "torch --index-url https://download.pytorch.org/whl/cu128", "plugins": "",
        "models": ",".join(config.load().models), "modes": ",".join(config.load().modes), "reference": "",
    }
    mlx_main = by["apple-m4-cpu", "mlx-main"].to_json()
    assert mlx_main["keras_backend"] == "mlx"
    # A requirement with spaces survives the round trip through the shell-quoted string.
    assert shlex.split(mlx_main["plugins"]) == ["keras-mlx @ git+https://github.com/keras-team/keras-mlx@main"]
    assert shlex.split(by["rtx-5070-ti", "jax"].to_json()["install"]) == ["jax[cuda12]"]


def test_filters_and_include_local():
    cfg = config.load()
    assert _pairs(build_matrix(cfg, devices=["local-cpu"], backends=["jax", "torch"], include_local=True)) == [
        ("local-cpu", "jax"), ("local-cpu", "torch")]
    assert _pairs(build_matrix(cfg, backends=["jax"], include_local=True)) == [
        ("rtx-5070-ti", "jax"), ("local-cpu", "jax")]
    assert build_matrix(cfg, devices=["apple-m4"], backends=["jax"]) == ()


@pytest.mark.parametrize("kwargs, message", [
    (dict(devices=["rtx-5070"]), "unknown device 'rtx-5070' in --devices; expected one of: rtx-5070-ti, apple-m4"),
    (dict(backends=["jaxx", "tf"]), "unknown backend 'jaxx', 'tf' in --backends; expected one of: jax, torch"),
    (dict(devices=["local-cpu"]), "device 'local-cpu' is local_only (no runner); run it on this machine"),
])
def test_bad_filters_are_refused_naming_the_valid_ones(kwargs, message):
    with pytest.raises(config.ConfigError) as e:
        build_matrix(config.load(), **kwargs)
    assert message in str(e.value)


def test_entry_rejects_empty_labels():
    with pytest.raises(ValueError, match="device is empty"):
        Entry("", "jax", "jax", (), (), ())


def test_cli_prints_one_json_line_and_writes_github_output(tmp_path, capsys):
    out = tmp_path / "github_output"
    out.write_text("earlier=1\n")
    # Unset workflow inputs arrive as empty strings: they mean "all".
    code = cli_main(["matrix", "--devices", "", "--backends", "jax, torch", "--github-output", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert printed.count("\n") == 1
    matrix = json.loads(printed)
    assert [(e["device"], e["backend"]) for e in matrix["include"]] == [
        ("rtx-5070-ti", "jax"), ("rtx-5070-ti", "torch")]
    assert out.read_text() == f"earlier=1\nmatrix={printed.strip()}\ncount=2\n"


def test_cli_refuses_unknown_names_with_exit_2(capsys):
    assert cli_main(["matrix", "--backends", "jax,nope"]) == 2
    assert "bench matrix: error: unknown backend 'nope' in --backends; expected one of:" in capsys.readouterr().err


def test_cli_reads_another_config(tmp_path, capsys):
    raw = yaml.safe_load(config.load().path.read_text())
    raw["devices"] = {"box": {"runs_on": ["self-hosted", "box"], "backends": ["numpy"]}}
    path = tmp_path / "b.yaml"
    path.write_text(yaml.safe_dump(raw))
    lint = tmp_path / "actionlint.yaml"
    lint.write_text("self-hosted-runner:\n  labels: [box]\n")
    assert cli_main(["--config", str(path), "matrix", "--actionlint", str(lint)]) == 0
    assert json.loads(capsys.readouterr().out)["include"] == [{
        "device": "box", "backend": "numpy", "keras_backend": "numpy",
        "runs_on": ["self-hosted", "box"], "install": "", "plugins": "",
        "models": ",".join(raw["models"]), "modes": ",".join(raw["modes"]), "reference": ""}]


@pytest.mark.parametrize("changed, expected", [
    (["README.md", "docs/x.md", "tests/test_a.py", "gh-pages-template/app.js", "bench/present/table.py"], ()),
    ([".github/workflows/nightly.yml", "scripts/publish-records.sh"], ()),
    (["bench/measure/backends/mlx.py"], ("mlx", "mlx-main")),
    (["bench/measure/backends/jax.py", "bench/measure/backends/torch.py"], ("jax", "torch")),
    (["./bench/measure/backends/openvino.py", ""], ("openvino",)),
    (["bench/measure/harness.py"], "all"),
    (["benchmarks.yaml"], "all"),
    (["scripts/install-backend.sh"], "all"),
    (["bench/measure/backends/__init__.py"], "all"),
    (["bench/measure/workloads/cnn.py", "README.md"], "all"),
    (["something/new.txt"], "all"),
])
def test_affected_backends(changed, expected):
    cfg = config.load()
    want = tuple(cfg.backends) if expected == "all" else expected
    assert affected_backends(cfg, changed) == want


@pytest.mark.parametrize("changed, expected", [
    (["bench/records/store.py", "bench/analyse/trends.py", "bench/compare/stats.py", "bench/ci/matrix.py",
      "bench/commands/report.py", "gh-pages-template/vendor/x.js"], ()),
    (["bench/commands/run.py"], "all"),
    (["bench/newstage/thing.py"], "all"),
])
def test_affected_by_stage_folder(changed, expected):
    cfg = config.load()
    want = tuple(cfg.backends) if expected == "all" else expected
    assert affected_backends(cfg, changed) == want


def test_every_stage_folder_of_bench_is_classified():
    folders = {p.parent.relative_to(ROOT / "bench").parts[0]
               for p in (ROOT / "bench").glob("*/*.py")}
    assert folders - set(STAGES) == set(), "add the new bench/ folder to bench.ci.affected.STAGES"


def test_cli_changed_files_keeps_only_affected_backends(tmp_path):
    changed = tmp_path / "changed.txt"
    changed.write_text("bench/measure/backends/mlx.py\nREADME.md\n")
    out = subprocess.run([sys.executable, "-m", "bench", "matrix", "--changed-files", str(changed)],
                         cwd=ROOT, capture_output=True, text=True, check=True)
    assert [(e["device"], e["backend"]) for e in json.loads(out.stdout)["include"]] == [
        ("apple-m4", "mlx"), ("apple-m4-cpu", "mlx-main")]
    assert "affected by the change: mlx, mlx-main" in out.stderr


def test_cli_changed_files_with_nothing_affected_gives_an_empty_matrix(tmp_path):
    changed = tmp_path / "changed.txt"
    changed.write_text("README.md\n")
    gh_out = tmp_path / "out"
    code = cli_main(["matrix", "--changed-files", str(changed), "--github-output", str(gh_out)])
    assert code == 0
    assert gh_out.read_text() == 'matrix={"include": []}\ncount=0\n'


def test_matrix_refuses_a_runner_label_actionlint_does_not_know(tmp_path, capsys):
    raw = yaml.safe_load(config.load().path.read_text())
    raw["devices"]["my-gpu-box"] = {"runs_on": ["self-hosted", "Linux", "my-gpu-box"], "backends": ["jax"]}
    path = tmp_path / "b.yaml"
    path.write_text(yaml.safe_dump(raw))
    lint = tmp_path / "actionlint.yaml"
    lint.write_text("self-hosted-runner:\n  labels: [rtx-5070-ti, apple-m4, ryzen-5800x3d]\n")
    assert cli_main(["matrix", "--config", str(path), "--actionlint", str(lint)]) == 2
    assert capsys.readouterr().err == (
        f"bench matrix: error: {path}: runner label(s) my-gpu-box (devices.*.runs_on) are not declared in "
        f"{lint}; expected each under self-hosted-runner.labels\n")
    lint.write_text("self-hosted-runner:\n  labels: [rtx-5070-ti, apple-m4, ryzen-5800x3d, my-gpu-box]\n")
    assert cli_main(["matrix", "--config", str(path), "--actionlint", str(lint)]) == 0


def test_a_local_only_device_names_the_command_that_runs_it():
    with pytest.raises(config.ConfigError, match=r"run it on this machine with `bench run --device local-cpu`"):
        build_matrix(config.load(), devices=["local-cpu"])
