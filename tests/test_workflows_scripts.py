"""The scripts each workflow step runs (scripts/), run here for real: GitHub is
played by tests/fake_gh.py, pip by a fake virtual environment."""

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench import config
from bench.records.record import write
from tests.helpers import failed, make_record, ok

ROOT = config.REPO_ROOT
SCRIPTS = ROOT / "scripts"
SHA = "a" * 40
OTHER_SHA = "b" * 40
REPO = "octo/keras-nightly-bench"
MARKER = "<!-- keras-nightly-bench:compare -->"


def _run(cmd, env=None, **kw):
    full = {**os.environ, **(env or {})}
    return subprocess.run(cmd, env=full, capture_output=True, text=True, **kw)


# --- fake gh --------------------------------------------------------------

# `gh`: the fake GitHub fixture in tests/conftest.py.


def _calls(root):
    path = root / "calls.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _artifact(root, run, name, records, pr=None):
    folder = root / "runs" / str(run) / name
    (folder / "records").mkdir(parents=True, exist_ok=True) if pr else folder.mkdir(parents=True, exist_ok=True)
    for rec in records:
        write(rec, folder / "records" if pr else folder)
    if pr:
        (folder / "pr.json").write_text(json.dumps(pr))
    return folder


# --- bench job-summary ----------------------------------------------------

BENCH = [sys.executable, "-m", "bench"]

def test_job_summary_renders_each_record_as_a_table(tmp_path):
    rec = make_record([ok("mlp", "predict", 12345.67),
                       failed("cnn", "train", "oom", "CUDA out of memory | tried 2 GiB\nsecond line")],
                      backend="jax", device="rtx-5070-ti", run_id="77", attempt=2)
    write(rec, tmp_path)
    out = _run([*BENCH, "job-summary", str(tmp_path)], check=True, cwd=ROOT).stdout
    assert out == (
        "### jax on rtx-5070-ti\n"
        "\n"
        "Keras 3.16.0.dev2026110102 (nightly), run 77 attempt 2, record jax--rtx-5070-ti--77-2.json\n"
        "\n"
        "| model | mode | status | value | note |\n"
        "|---|---|---|---|---|\n"
        "| mlp | predict | ok | 12,345.7 samples/s |  |\n"
        "| cnn | train | failed |  | oom: CUDA out of memory \\| tried 2 GiB |\n"
        "\n"
        "1 of 2 benchmarks ok.\n"
        "\n"
    )


@pytest.mark.parametrize("record", [
    '{"target": [], "run": {}, "results": []}',
    '{"target": {"backend": "jax", "device": "d"}, "run": {"id": "1", "attempt": 1}, "results": ["x"]}',
    '{"target": {"backend": "jax", "device": "d"}, "run": {"id": "1", "attempt": 1}, "environment": 3, '
    '"results": []}',
])
def test_job_summary_names_a_record_of_the_wrong_shape_in_one_line(tmp_path, record):
    # The record was written where third-party code ran: any shape reads as one line, never a traceback.
    (tmp_path / "bad.json").write_text(record)
    out = _run([*BENCH, "job-summary", str(tmp_path)], cwd=ROOT)
    assert out.returncode == 0 and "Traceback" not in out.stderr
    assert out.stdout.startswith("### bad.json\n\nUnreadable record: ")


def test_job_summary_without_records_says_so_and_succeeds(tmp_path):
    out = _run([*BENCH, "job-summary", str(tmp_path / "none")], cwd=ROOT)
    assert out.returncode == 0
    assert out.stdout.startswith("### No benchmark record\n\nNothing was written to ")


# --- install-backend.sh ---------------------------------------------------

FAKE_VENV_PYTHON = """#!/bin/bash
# A virtual environment's python whose pip only logs, and fails on 'broken'.
if [ "$1 $2" = "-m pip" ]; then
  shift 2
  if [ "$1" = install ]; then
    printf '%s\\n' "$*" >> "$PIP_LOG"
    if [ -n "${PIP_CONSTRAINT:-}" ]; then printf '%s\\n' "$PIP_CONSTRAINT" >> "$PIP_LOG.constraint"; fi
    for a in "$@"; do case "$a" in *broken*) echo "ERROR: No matching distribution found for $a"; exit 1;; esac; done
    echo "Successfully installed"; exit 0
  fi
  if [ "$1" = list ]; then
    echo '[{"name": "Keras-Nightly", "version": "3.16.0.dev1"}, {"name": "jax", "version": "0.8.1"}]'; exit 0
  fi
fi
exec REAL "$@"
"""


@pytest.fixture
def fake_python(tmp_path):
    """BENCH_PYTHON whose `-m venv DIR` makes a venv with the pip above."""
    venv_py = tmp_path / "venv-python"
    venv_py.write_text(FAKE_VENV_PYTHON.replace("REAL", sys.executable))
    venv_py.chmod(0o755)
    maker = tmp_path / "python"
    maker.write_text(f"""#!/bin/bash
if [ "$1 $2" = "-m venv" ]; then dir="${{@: -1}}"; mkdir -p "$dir/bin"; cp {venv_py} "$dir/bin/python"; exit 0; fi
exec {sys.executable} "$@"
""")
    maker.chmod(0o755)
    pip_log = tmp_path / "pip.log"
    return {"BENCH_PYTHON": str(maker), "BENCH_VENV": str(tmp_path / "venv"), "PIP_LOG": str(pip_log),
            "BENCH_INSTALL_LOG": str(tmp_path / "out" / "install.json")}, pip_log


def _install(env, **extra):
    return _run(["bash", SCRIPTS / "install-backend.sh"], env={**env, **extra})


def test_install_backend_installs_harness_then_backend_then_keras_then_plugins_without_deps(fake_python):
    env, pip_log = fake_python
    out = _install(env, BENCH_INSTALL="'jax[cpu]' --index-url https://example.org/simple",
                   BENCH_PLUGINS="'keras-mlx @ git+https://github.com/keras-team/keras-mlx@main'")
    assert out.returncode == 0, out.stderr
    harness, backend, keras, plugins = pip_log.read_text().splitlines()
    assert "jsonschema" in harness and "scikit-learn" in harness and "keras" not in harness
    # The backend's own index is never asked for keras-nightly (it is only on PyPI).
    assert backend == "install --disable-pip-version-check jax[cpu] --index-url https://example.org/simple"
    assert keras == "install --disable-pip-version-check keras-nightly"
    assert plugins == ("install --disable-pip-version-check --no-deps "
                       "keras-mlx @ git+https://github.com/keras-team/keras-mlx@main")
    log = json.loads(Path(env["BENCH_INSTALL_LOG"]).read_text())
    assert log["ok"] is True and log["failed_step"] is None and log["error"] is None
    assert log["keras"] == "keras-nightly" and log["keras_source"] == "nightly" and log["keras_commit"] is None
    assert log["keras_version"] == "3.16.0.dev1"
    assert log["packages"] == {"jax": "0.8.1", "keras-nightly": "3.16.0.dev1"}
    assert log["requested"] == ["jax[cpu]", "--index-url", "https://example.org/simple"]
    assert log["plugins"] == ["keras-mlx @ git+https://github.com/keras-team/keras-mlx@main"]


def test_install_backend_failure_is_logged_with_pips_words_and_exit_1(fake_python):
    env, pip_log = fake_python
    out = _install(env, BENCH_INSTALL="broken-backend", BENCH_PLUGINS="keras-openvino")
    assert out.returncode == 1
    assert "::error title=install failed::step 'backend' failed" in out.stdout
    assert len(pip_log.read_text().splitlines()) == 2  # harness, backend; no keras or plugins after a failure
    log = json.loads(Path(env["BENCH_INSTALL_LOG"]).read_text())
    assert log["ok"] is False and log["failed_step"] == "backend"
    assert "No matching distribution found for broken-backend" in log["error"]


def test_install_backend_keras_version_and_git_ref(fake_python):
    env, pip_log = fake_python
    assert _install(env, BENCH_KERAS_VERSION="3.14.0.dev2026120203").returncode == 0
    assert pip_log.read_text().splitlines()[-1].endswith(" keras-nightly==3.14.0.dev2026120203")
    assert json.loads(Path(env["BENCH_INSTALL_LOG"]).read_text())["keras_source"] == "pinned"
    pip_log.unlink()
    assert _install(env, BENCH_KERAS_REF="cccccccccccccccccccccccccccccccccccccccc").returncode == 0
    assert pip_log.read_text().splitlines()[-1].endswith(" keras @ git+https://github.com/keras-team/keras.git@cccccccccccccccccccccccccccccccccccccccc")
    assert json.loads(Path(env["BENCH_INSTALL_LOG"]).read_text())["keras_source"] == "git"
    pip_log.unlink()  # bench bisect --keras-repo: a clone of Keras, as a file:/// URL
    assert _install(env, BENCH_KERAS_REF="cccccccccccccccccccccccccccccccccccccccc", BENCH_KERAS_REPO="file:///srv/keras").returncode == 0
    assert pip_log.read_text().splitlines()[-1].endswith(" keras @ git+file:///srv/keras@cccccccccccccccccccccccccccccccccccccccc")


@pytest.mark.parametrize("config_path", [ROOT / "benchmarks.yaml", ROOT / "tests" / "fixtures" / "benchmarks.yaml"],
                         ids=["shipped", "tests"])
def test_no_device_looks_up_keras_on_a_backend_only_index(fake_python, config_path):
    # Every matrix entry, as the nightly job installs it: a pip call that names
    # its own index (--index-url, -i) must not ask it for Keras, which is only on PyPI.
    env, pip_log = fake_python
    matrix = _run([sys.executable, "-m", "bench", "--config", str(config_path), "matrix", "--include-local",
                   "--actionlint", str(ROOT / ".github" / "actionlint.yaml")], cwd=ROOT, check=True)
    entries = json.loads(matrix.stdout)["include"]
    assert any("--index-url" in e["install"] for e in entries) or config_path.parent.name == "fixtures"
    for entry in entries + [{"device": "made-up", "install": "torch --index-url https://download.pytorch.org/whl/cu128",
                             "plugins": ""}]:
        pip_log.unlink(missing_ok=True)
        out = _install(env, BENCH_INSTALL=entry["install"], BENCH_PLUGINS=entry["plugins"])
        assert out.returncode == 0, out.stderr
        for call in pip_log.read_text().splitlines():
            args = call.split()
            if "--index-url" in args or "-i" in args:
                assert not any(a.startswith("keras") for a in args), f"{entry['device']}: {call}"
        assert "install --disable-pip-version-check keras-nightly" in pip_log.read_text().splitlines()


@pytest.mark.parametrize("extra, message", [
    ({"BENCH_KERAS_REF": "cccccccccccccccccccccccccccccccccccccccc", "BENCH_KERAS_REPO": "ssh://x; rm -rf /"}, "BENCH_KERAS_REPO is"),
    ({"BENCH_KERAS_REF": "main; curl evil"}, "BENCH_KERAS_REF is 'main; curl evil'; expected a full 40-hex-digit"),
    # a mutable ref resolves on the runner, hours later (issue 54 item 10)
    ({"BENCH_KERAS_REF": "master"}, "BENCH_KERAS_REF is 'master'; expected a full 40-hex-digit"),
    ({"BENCH_KERAS_REF": "refs/pull/1/head"}, "expected a full 40-hex-digit keras-team/keras commit SHA"),
    ({"BENCH_KERAS_REF": "ccccccc"}, "expected a full 40-hex-digit"),
    ({"BENCH_KERAS_VERSION": "latest"}, "BENCH_KERAS_VERSION is 'latest'; expected a version"),
    ({"BENCH_KERAS_VERSION": "3.1", "BENCH_KERAS_REF": "cccccccccccccccccccccccccccccccccccccccc"}, "both set; expected at most one"),
])
def test_install_backend_refuses_malformed_dispatch_inputs(fake_python, extra, message):
    env, pip_log = fake_python
    out = _install(env, **extra)
    assert out.returncode == 2 and message in out.stderr
    assert not pip_log.exists()


def test_install_backend_skip_install_logs_an_existing_environment(fake_python, tmp_path):
    env, pip_log = fake_python
    venv = tmp_path / "existing"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text(FAKE_VENV_PYTHON.replace("REAL", sys.executable))
    (venv / "bin" / "python").chmod(0o755)
    out = _install(env, BENCH_SKIP_INSTALL="1", BENCH_VENV=str(venv))
    assert out.returncode == 0, out.stderr
    assert not pip_log.exists()
    log = json.loads(Path(env["BENCH_INSTALL_LOG"]).read_text())
    assert log["skipped_install"] is True and log["keras_version"] == "3.16.0.dev1"


# --- install-reference.sh -------------------------------------------------

REFERENCE = "3.16.0.dev2026102704"


def _install_reference(env, tmp_path, **extra):
    paths = {"BENCH_REFERENCE_VENV": str(tmp_path / "reference-venv"),
             "BENCH_REFERENCE_INSTALL_LOG": str(tmp_path / "out" / "install-reference.json")}
    # In tmp_path: a command that slipped through would leave its file there.
    return _run(["bash", SCRIPTS / "install-reference.sh"], env={**env, **paths, **extra}, cwd=tmp_path)


def test_install_reference_without_a_reference_does_nothing(fake_python, tmp_path):
    env, pip_log = fake_python
    out = _install_reference(env, tmp_path, BENCH_REFERENCE="")
    assert out.returncode == 0 and out.stderr == ""
    assert out.stdout == "install-reference: this device has no reference build; the nightly runs alone\n"
    assert not pip_log.exists() and not (tmp_path / "reference-venv").exists() and not (tmp_path / "out").exists()


def test_install_reference_installs_the_pinned_version_into_its_own_venv_and_log(fake_python, tmp_path):
    env, pip_log = fake_python
    # A dispatched keras_ref is for the nightly's own install: the reference stays the pinned version.
    out = _install_reference(env, tmp_path, BENCH_REFERENCE=REFERENCE, BENCH_KERAS_REF="cccccccccccccccccccccccccccccccccccccccc",
                             BENCH_INSTALL="'jax[cpu]'", BENCH_PLUGINS="keras-mlx")
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout == (f"install-reference: no nightly venv at {env['BENCH_VENV']} to take versions from; "
                          "installing unconstrained\n"
                          f"install-reference: the reference keras-nightly=={REFERENCE} is installed in "
                          f"{tmp_path / 'reference-venv'}\n")
    harness, backend, keras, plugins = pip_log.read_text().splitlines()
    assert backend == "install --disable-pip-version-check jax[cpu]"
    assert keras == f"install --disable-pip-version-check keras-nightly=={REFERENCE}"
    assert plugins == "install --disable-pip-version-check --no-deps keras-mlx"
    assert os.access(tmp_path / "reference-venv" / "bin" / "python", os.X_OK)
    log = json.loads((tmp_path / "out" / "install-reference.json").read_text())
    assert log["ok"] is True and log["keras"] == f"keras-nightly=={REFERENCE}" and log["keras_source"] == "pinned"
    # pip's output beside its log; the nightly's venv and install log untouched
    assert "install-backend: wrote" in (tmp_path / "out" / "install-reference.out").read_text()
    assert not Path(env["BENCH_VENV"]).exists() and not Path(env["BENCH_INSTALL_LOG"]).exists()


def test_install_reference_that_fails_says_so_in_one_line_removes_its_venv_and_exits_0(fake_python, tmp_path):
    env, pip_log = fake_python
    out = _install_reference(env, tmp_path, BENCH_REFERENCE=REFERENCE, BENCH_INSTALL="broken-backend")
    assert out.returncode == 0 and out.stderr == ""
    log, output = tmp_path / "out" / "install-reference.json", tmp_path / "out" / "install-reference.out"
    unconstrained, warning, *folded = out.stdout.splitlines()
    assert unconstrained.startswith("install-reference: no nightly venv at ")
    assert warning == (f"::warning title=reference not installed::install-reference: the reference "
                       f"keras-nightly=={REFERENCE} did not install (see {log} and {output}); "
                       "the nightly runs alone")
    # The runner's files are gone after the job: the job log keeps pip's last lines, folded.
    assert folded[0] == f"::group::install-reference: the last 30 lines of {output}"
    assert folded[-1] == "::endgroup::"
    assert folded[1:-1] == output.read_text().splitlines()[-30:]
    assert any("No matching distribution found for broken-backend" in line for line in folded)
    assert not (tmp_path / "reference-venv").exists()
    assert len(pip_log.read_text().splitlines()) == 2  # it did try: harness, backend
    assert json.loads(log.read_text())["failed_step"] == "backend"
    assert "No matching distribution found for broken-backend" in output.read_text()


FREEZE = """jax==0.8.1
jaxlib==0.8.1
keras-nightly==3.16.0.dev2026120601
Keras==3.12.0
numpy==2.3.4
-e git+https://example.org/bench@abc#egg=bench
scipy @ file:///wheels/scipy-1.17.1.whl
"""


def test_install_reference_takes_the_nightly_venvs_versions_less_keras(fake_python, tmp_path):
    env, pip_log = fake_python
    nightly = Path(env["BENCH_VENV"]) / "bin"
    nightly.mkdir(parents=True)
    (nightly / "python").write_text(f"""#!/bin/bash
if [ "$1 $2 $3" = "-m pip freeze" ]; then printf '%s' '{FREEZE}'; exit 0; fi
exit 1
""")
    (nightly / "python").chmod(0o755)
    out = _install_reference(env, tmp_path, BENCH_REFERENCE=REFERENCE, BENCH_INSTALL="'jax[cpu]'")
    assert out.returncode == 0, out.stdout + out.stderr
    constraints = tmp_path / "out" / "install-reference.constraints.txt"
    assert out.stdout.splitlines()[0] == f"install-reference: constrained to the nightly's 3 packages ({constraints})"
    assert constraints.read_text() == "jax==0.8.1\njaxlib==0.8.1\nnumpy==2.3.4\n"
    # every pip install of the reference (harness, backend, Keras) ran under those constraints
    installs = [line for line in pip_log.read_text().splitlines() if " install " in f" {line} "]
    assert len(installs) >= 3
    assert Path(f"{pip_log}.constraint").read_text().splitlines() == [str(constraints)] * len(installs)


@pytest.mark.parametrize("extra, message", [
    ({"BENCH_REFERENCE": "1; rm -rf /"},
     "BENCH_REFERENCE is '1; rm -rf /'; expected a keras-nightly version such as 3.16.0.dev2026102704"),
    ({"BENCH_REFERENCE": "$(touch pwned)"},
     "BENCH_REFERENCE is '$(touch pwned)'; expected a keras-nightly version such as 3.16.0.dev2026102704"),
    ({"BENCH_REFERENCE": REFERENCE, "BENCH_REFERENCE_VENV": "SAME"},
     "BENCH_REFERENCE_VENV is 'SAME', the nightly's BENCH_VENV; expected a virtual environment of its own"),
])
def test_install_reference_refuses_bad_inputs_in_one_line_with_exit_2(fake_python, tmp_path, extra, message):
    env, pip_log = fake_python
    if extra.get("BENCH_REFERENCE_VENV") == "SAME":
        extra = {**extra, "BENCH_REFERENCE_VENV": env["BENCH_VENV"]}
        message = message.replace("SAME", env["BENCH_VENV"])
    out = _install_reference(env, tmp_path, **extra)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == f"install-reference: error: {message}\n"
    assert not pip_log.exists() and not (tmp_path / "pwned").exists()
    assert not (tmp_path / "reference-venv").exists() and not Path(env["BENCH_VENV"]).exists()


# --- local-nightly.sh with a reference -----------------------------------

# .venv/bin/python of a copy of the checkout: logs each `python -m bench` call;
# `bench publish` puts an empty commit on the branch so the clone that follows works.
FAKE_LOCAL_PYTHON = """#!/bin/bash
printf '%s\\n' "$*" >> "$CALLS"
if [ "$1 $2 $3" = "-m bench publish" ]; then
  tree=$(git --git-dir="$5" hash-object -w -t tree /dev/null)
  commit=$(git --git-dir="$5" -c user.name=t -c user.email=t@example.org commit-tree "$tree" -m records)
  git --git-dir="$5" update-ref "refs/heads/$7" "$commit"
fi
exit 0
"""


@pytest.fixture
def local_checkout(tmp_path):
    """The scripts local-nightly.sh runs, requirements/ and pyproject.toml, with a
    .venv that setup.sh finds up to date (no pip)."""
    checkout = tmp_path / "checkout"
    (checkout / "scripts").mkdir(parents=True)
    for name in ("local-nightly.sh", "setup.sh", "install-reference.sh", "install-backend.sh"):
        (checkout / "scripts" / name).write_bytes((SCRIPTS / name).read_bytes())
    (checkout / "requirements").mkdir()
    for req in (ROOT / "requirements").glob("*.txt"):
        (checkout / "requirements" / req.name).write_bytes(req.read_bytes())
    (checkout / "pyproject.toml").write_bytes((ROOT / "pyproject.toml").read_bytes())
    (checkout / ".venv" / "bin").mkdir(parents=True)
    (checkout / ".venv" / "bin" / "python").write_text(FAKE_LOCAL_PYTHON)
    (checkout / ".venv" / "bin" / "python").chmod(0o755)
    stamp = _run(["bash", "-c", "cat requirements/*.txt pyproject.toml | sha256sum | cut -c1-16"],
                 cwd=checkout, check=True).stdout
    (checkout / ".venv" / ".bench-setup-stamp").write_text(stamp)
    return checkout


def _bench_runs(calls):
    return [line for line in calls.read_text().splitlines() if line.startswith("-m bench run ")]


def test_local_nightly_runs_alone_unless_a_reference_is_asked_for(local_checkout, fake_python, tmp_path):
    env, pip_log = fake_python
    calls = tmp_path / "calls.txt"
    env = {**env, "CALLS": str(calls), "BENCH_VENV": "", "BENCH_INSTALL_LOG": ""}
    out = _run(["bash", local_checkout / "scripts" / "local-nightly.sh", "--backend", "jax"],
               env={**env, "BENCH_REFERENCE": ""})
    assert out.returncode == 0, out.stderr
    (run,) = _bench_runs(calls)
    runs = run.split(" --out ")[1].split()[0]
    assert run == f"-m bench run --device local-cpu --quick --out {runs} --backend jax"  # as before
    assert not pip_log.exists() and not (local_checkout / ".local" / "reference-venv").exists()

    calls.unlink()
    out = _run(["bash", local_checkout / "scripts" / "local-nightly.sh", "--backend", "jax"],
               env={**env, "BENCH_REFERENCE": REFERENCE})
    assert out.returncode == 0, out.stderr
    reference = local_checkout / ".local" / "reference-venv"
    assert (f"install-reference: the reference keras-nightly=={REFERENCE} is installed in {reference}\n"
            in out.stderr)
    harness, backend, keras, plugins = pip_log.read_text().splitlines()
    assert backend == "install --disable-pip-version-check -r requirements/local.txt"
    assert keras == f"install --disable-pip-version-check keras-nightly=={REFERENCE}"
    assert plugins == "install --disable-pip-version-check --no-deps -r requirements/plugins.txt"
    (run,) = _bench_runs(calls)
    runs = run.split(" --out ")[1].split()[0]
    # the second night reads the stored work from the local data branch the first one published to
    assert run == (f"-m bench run --device local-cpu --quick --out {runs} --steps-from .local/data "
                   f"--reference {reference / 'bin' / 'python'} --backend jax")
    assert json.loads((local_checkout / ".local" / "install-reference.json").read_text())["keras_source"] == "pinned"


# --- run-bench.sh, job-paths.sh, bench pr-info ----------------------------

def test_run_bench_passes_the_matrix_entry_to_bench_run(tmp_path):
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("#!/bin/sh\nprintf '%s\\n' \"$PWD\" \"$@\"\n")
    (venv / "bin" / "python").chmod(0o755)
    log = tmp_path / "install.json"
    env = {"BENCH_VENV": str(venv), "BENCH_BACKEND": "jax", "BENCH_DEVICE": "rtx-5070-ti",
           "BENCH_OUT": str(tmp_path / "out"), "BENCH_MODELS": "mlp", "BENCH_MODES": "",
           "BENCH_KERAS_REF": "cccccccccccccccccccccccccccccccccccccccc", "BENCH_INSTALL_LOG": str(log)}
    args = _run(["bash", SCRIPTS / "run-bench.sh", "--quick"], env=env, check=True).stdout.splitlines()
    assert args == [str(ROOT), "-m", "bench", "run", "--backend", "jax", "--device", "rtx-5070-ti",
                    "--out", str(tmp_path / "out"), "--models", "mlp", "--keras-source", "git", "--quick"]
    pinned = {**env, "BENCH_KERAS_REF": "", "BENCH_KERAS_VERSION": "3.14.0.dev1"}
    args = _run(["bash", SCRIPTS / "run-bench.sh"], env=pinned, check=True).stdout.splitlines()
    assert args[-2:] == ["--keras-source", "pinned"]
    log.write_text("{}")
    args = _run(["bash", SCRIPTS / "run-bench.sh"], env=env, check=True).stdout.splitlines()
    assert args[-2:] == ["--install-log", str(log)]


def test_run_bench_passes_the_reference_python_only_when_its_venv_was_installed(tmp_path):
    venv, reference = tmp_path / "venv", tmp_path / "reference-venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("#!/bin/sh\nprintf '%s\\n' \"$@\"\n")
    (venv / "bin" / "python").chmod(0o755)
    env = {"BENCH_VENV": str(venv), "BENCH_BACKEND": "jax", "BENCH_DEVICE": "rtx-5070-ti",
           "BENCH_OUT": str(tmp_path / "out"), "BENCH_MODELS": "", "BENCH_MODES": "", "BENCH_KERAS_REF": "",
           "BENCH_KERAS_VERSION": "", "BENCH_INSTALL_LOG": "",
           "BENCH_REFERENCE": "3.13.0.dev2026110103", "BENCH_REFERENCE_VENV": str(reference)}
    plain = ["-m", "bench", "run", "--backend", "jax", "--device", "rtx-5070-ti", "--out", str(tmp_path / "out")]
    # install-reference.sh failed (or never ran): no venv, the nightly alone
    assert _run(["bash", SCRIPTS / "run-bench.sh"], env=env, check=True).stdout.splitlines() == plain
    (reference / "bin").mkdir(parents=True)
    (reference / "bin" / "python").write_text("#!/bin/sh\n")
    (reference / "bin" / "python").chmod(0o755)
    args = _run(["bash", SCRIPTS / "run-bench.sh", "--quick"], env=env, check=True).stdout.splitlines()
    assert args == plain + ["--reference", str(reference / "bin" / "python"), "--quick"]
    # A job without a reference (pr-bench.yml, run-ab.sh): a venv left there is not used.
    no_ref = {**env, "BENCH_REFERENCE": ""}
    assert _run(["bash", SCRIPTS / "run-bench.sh"], env=no_ref, check=True).stdout.splitlines() == plain
    (reference / "bin" / "python").chmod(0o644)  # not executable: not a python
    assert _run(["bash", SCRIPTS / "run-bench.sh"], env=env, check=True).stdout.splitlines() == plain


def test_job_paths_live_below_runner_temp(tmp_path):
    rt = tmp_path / "rt"
    out = _run(["dash", SCRIPTS / "job-paths.sh"], env={"RUNNER_TEMP": str(rt), "HOME": "/home/runner"},
               check=True).stdout
    assert out.replace(str(rt), "/rt") == (
        "BENCH_RUNNER_HOME=/home/runner\n"
        "BENCH_VENV=/rt/bench-venv\nBENCH_OUT=/rt/bench-out/records\nBENCH_INSTALL_LOG=/rt/bench-out/install.json\n"
        "BENCH_REFERENCE_VENV=/rt/bench-reference-venv\n"
        "BENCH_REFERENCE_INSTALL_LOG=/rt/bench-out/install-reference.json\n"
        "BENCH_STEPS_FROM=/rt/bench-data\n"
        "HOME=/rt/home\nXDG_CACHE_HOME=/rt/home/.cache\nXDG_CONFIG_HOME=/rt/home/.config\n"
        "XDG_DATA_HOME=/rt/home/.local/share\nXDG_STATE_HOME=/rt/home/.local/state\nKERAS_HOME=/rt/home/.keras\n"
        "PIP_CACHE_DIR=/rt/home/.cache/pip\nPIP_CONFIG_FILE=/dev/null\nPIP_DISABLE_PIP_VERSION_CHECK=1\n"
        "PYTHONNOUSERSITE=1\nPYTHONUSERBASE=/rt/home/.local\nMPLCONFIGDIR=/rt/home/.config/matplotlib\n"
        "TORCH_HOME=/rt/home/.cache/torch\nHF_HOME=/rt/home/.cache/huggingface\n")
    assert (rt / "home" / ".cache").is_dir() and (rt / "bench-out").is_dir()


def test_pr_info_writes_the_claim_and_refuses_garbage():
    out = _run([*BENCH, "pr-info", "12", SHA], check=True, cwd=ROOT).stdout
    assert json.loads(out) == {"head_sha": SHA, "pr": 12}
    bad = _run([*BENCH, "pr-info", "12; echo", SHA], cwd=ROOT)
    assert bad.returncode == 2 and bad.stderr == (
        f"bench pr-info: error: PR '12; echo' and SHA '{SHA}'; expected a pull request number and 40 hex digits\n")


def test_git_auth_sets_an_environment_only_header():
    script = f"source {SCRIPTS / 'git-auth.sh'}; git config --get http.https://github.com/.extraheader"
    out = _run(["bash", "-c", script], env={"GH_TOKEN": "tok123", "GITHUB_ACTIONS": ""}, check=True).stdout
    assert out.strip() == "AUTHORIZATION: basic " + base64.b64encode(b"x-access-token:tok123").decode()


# --- collect-artifacts.sh -------------------------------------------------

def _records_below(folder):
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.json") if p.name != "provenance.json")


def test_collect_downloads_one_run_or_sweeps_recent_runs(gh, tmp_path):
    root, env = gh
    _artifact(root, 11, "record-11-1-rtx-5070-ti-jax", [make_record([ok("mlp", "predict", 1.0)], run_id="11")])
    _artifact(root, 12, "record-12-1-apple-m4-mlx",
              [make_record([ok("mlp", "predict", 2.0)], backend="mlx", device="apple-m4", run_id="12")])
    _artifact(root, 12, "unrelated-logs", [])
    (root / "runs" / "13").mkdir()  # a run whose artifacts expired
    one = _run(["bash", SCRIPTS / "collect-artifacts.sh", str(tmp_path / "one")], env={**env, "RUN_ID": "12"})
    assert one.returncode == 0, one.stderr
    assert one.stdout.strip() == "1"
    assert _records_below(tmp_path / "one") == ["12/record-12-1-apple-m4-mlx/mlx--apple-m4--12-1.json"]
    sweep = _run(["bash", SCRIPTS / "collect-artifacts.sh", str(tmp_path / "all")], env={**env, "SWEEP_DAYS": "2"})
    assert sweep.returncode == 0, sweep.stderr
    assert sweep.stdout.strip() == "2"
    assert "run 13: no artifact yet (no artifact matches" in sweep.stderr
    (listed,) = [c["argv"] for c in _calls(root) if "--paginate" in c["argv"]]
    assert listed[2].startswith(f"repos/{REPO}/actions/workflows/nightly.yml/runs?created=%3E%3D20")


def test_a_sweep_also_takes_the_triggering_run_however_old(gh, tmp_path):
    # A rerun of a 20-day-old nightly completes and starts publish: its run is
    # outside the 3-day sweep, and must be collected all the same.
    root, env = gh
    old = make_record([ok("mlp", "predict", 1.0)], run_id="31")
    _artifact(root, 31, "record-31-2-rtx-5070-ti-jax", [old])
    (root / "runs" / "31.json").write_text(json.dumps({"created_at": "2026-01-02T02:17:00Z", "run_attempt": 2}))
    _artifact(root, 32, "record-32-1-apple-m4-mlx", [make_record([ok("mlp", "predict", 2.0)], run_id="32")])
    plain = _run(["bash", SCRIPTS / "collect-artifacts.sh", str(tmp_path / "plain")], env=env)
    assert plain.returncode == 0 and plain.stdout.strip() == "1", plain.stderr  # the sweep alone misses run 31
    out = _run(["bash", SCRIPTS / "collect-artifacts.sh", str(tmp_path / "all")], env={**env, "TRIGGER_RUN_ID": "31"})
    assert out.returncode == 0, out.stderr
    assert _records_below(tmp_path / "all") == ["31/record-31-2-rtx-5070-ti-jax/jax--local-cpu--31-1.json",
                                                "32/record-32-1-apple-m4-mlx/jax--local-cpu--32-1.json"]
    assert json.loads((tmp_path / "all" / "provenance.json").read_text())["artifacts"]["31"]["run_attempt"] == 2
    again = _run(["bash", SCRIPTS / "collect-artifacts.sh", str(tmp_path / "again")],
                 env={**env, "TRIGGER_RUN_ID": "32"})  # already in the sweep: listed once
    assert again.stdout.strip() == "1" and "older than the sweep" not in again.stderr
    bad = _run(["bash", SCRIPTS / "collect-artifacts.sh", str(tmp_path / "x")], env={**env, "TRIGGER_RUN_ID": "1;x"})
    assert bad.returncode == 2 and "TRIGGER_RUN_ID is '1;x'" in bad.stderr


def test_collect_refuses_a_run_id_that_is_not_a_number(gh, tmp_path):
    _, env = gh
    out = _run(["bash", SCRIPTS / "collect-artifacts.sh", str(tmp_path / "x")], env={**env, "RUN_ID": "1 2"})
    assert out.returncode == 2 and "RUN_ID is '1 2'; expected a workflow run id" in out.stderr


# --- pr-matrix.sh ---------------------------------------------------------

def test_pr_matrix_runs_only_the_backends_the_pr_touches(gh, tmp_path):
    root, env = gh
    (root / "pulls").mkdir()
    (root / "pulls" / "7.json").write_text(json.dumps({"head": {"sha": SHA}}))
    (root / "pulls" / "7.files").write_text("bench/measure/backends/openvino.py\nREADME.md\n")
    out_file = tmp_path / "out"
    out = _run(["bash", SCRIPTS / "pr-matrix.sh", str(out_file)],
               env={**env, "PR_NUMBER": "7", "HEAD_SHA": SHA, "BENCH_PYTHON": sys.executable})
    assert out.returncode == 0, out.stderr
    lines = dict(line.split("=", 1) for line in out_file.read_text().splitlines())
    assert lines["pr"] == "7" and lines["head_sha"] == SHA and lines["count"] == "1"
    assert [e["backend"] for e in json.loads(lines["matrix"])["include"]] == ["openvino"]


def test_pr_matrix_refuses_a_bad_pr_number(gh, tmp_path):
    _, env = gh
    out = _run(["bash", SCRIPTS / "pr-matrix.sh", str(tmp_path / "o")], env={**env, "PR_NUMBER": "7 --x"})
    assert out.returncode == 2 and "PR_NUMBER is '7 --x'; expected a pull request number" in out.stderr


# --- bench comment pr -----------------------------------------------------

@pytest.fixture
def pr_setup(gh, tmp_path):
    """PR 5 at head SHA with an artifact of two records, and a data branch with history."""
    root, env = gh
    (root / "pulls").mkdir()
    (root / "pulls" / "5.json").write_text(json.dumps({"number": 5, "head": {"sha": SHA}}))
    data = tmp_path / "data"
    from tests.helpers import nightly_series, write_data
    write_data(nightly_series([100.0, 101.0, 99.0, 100.5, 100.2, 99.8, 100.1], model="mlp", mode="predict"), data)
    artifacts = tmp_path / "untrusted"
    for backend in ("jax", "torch"):
        folder = artifacts / f"pr-bench-9-1-local-cpu-{backend}"
        (folder / "records").mkdir(parents=True)
        write(make_record([ok("mlp", "predict", 80.0, samples=[80.0, 80.5, 79.5])], backend=backend,
                          event="pull_request", run_id="9"), folder / "records")
        (folder / "pr.json").write_text(json.dumps({"pr": 5, "head_sha": SHA}))
    env = {**env, "RUN_EVENT": "workflow_dispatch", "RUN_HEAD_SHA": OTHER_SHA, "RUN_TITLE": f"pr-bench #5 @ {SHA}",
           "RUN_URL": "https://github.example/runs/9", "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")}
    return root, env, artifacts, data


def _comment(env, artifacts, data):
    return _run([*BENCH, "comment", "pr", str(artifacts), str(data)], env=env, cwd=ROOT)


def _stored_comments(root):
    return json.loads((root / "comments" / "5.json").read_text())


def test_pr_comment_creates_one_sticky_comment_then_updates_it(pr_setup):
    root, env, artifacts, data = pr_setup
    first = _comment(env, artifacts, data)
    assert first.returncode == 0, first.stderr
    (comment,) = _stored_comments(root)
    assert comment["body"].startswith(MARKER)
    assert "Benchmarked head `aaaaaaaaaaaa` in [this run](https://github.example/runs/9)." in comment["body"]
    assert Path(env["GITHUB_STEP_SUMMARY"]).read_text().startswith(MARKER)
    # Someone quoting the marker is not the sticky comment; the bot's own is.
    human = {"id": 7, "body": f"look: {MARKER}", "user": {"login": "maintainer"}}
    (root / "comments" / "5.json").write_text(json.dumps([human] + _stored_comments(root)))
    second = _comment(env, artifacts, data)
    assert second.returncode == 0, second.stderr
    stored = _stored_comments(root)
    assert len(stored) == 2 and stored[0] == human
    methods = [c["argv"][2] for c in _calls(root) if "-X" in c["argv"]]
    assert methods == ["POST", "PATCH"]


def test_pr_comment_refuses_an_artifact_whose_sha_is_not_the_runs(pr_setup):
    root, env, artifacts, data = pr_setup
    out = _comment({**env, "RUN_TITLE": f"pr-bench #5 @ {OTHER_SHA}"}, artifacts, data)
    assert out.returncode == 1
    assert f"the run title is 'pr-bench #5 @ {OTHER_SHA}'; expected 'pr-bench #5 @ {SHA}'" in out.stderr
    assert not (root / "comments" / "5.json").exists()


def test_pr_comment_takes_only_a_dispatched_run_whose_title_names_the_pr_and_sha(pr_setup):
    root, env, artifacts, data = pr_setup
    out = _comment({**env, "RUN_TITLE": f"pr-bench #6 @ {SHA}"}, artifacts, data)
    assert out.returncode == 1 and f"expected 'pr-bench #5 @ {SHA}'" in out.stderr
    pr_run = _comment({**env, "RUN_EVENT": "pull_request"}, artifacts, data)
    assert pr_run.returncode == 1 and "run event is 'pull_request'; expected workflow_dispatch" in pr_run.stderr
    (root / "pulls" / "5.json").write_text(json.dumps({"number": 5, "head": {"sha": OTHER_SHA}}))
    moved = _comment(env, artifacts, data)
    assert moved.returncode == 1 and f"PR #5 has head {OTHER_SHA}; the artifact says {SHA}" in moved.stderr


def test_pr_comment_leaves_out_invalid_records_and_names_them(pr_setup):
    root, env, artifacts, data = pr_setup
    bad = artifacts / "pr-bench-9-1-local-cpu-torch" / "records" / "forged.json"
    bad.write_text(json.dumps({"schema_version": 1, "run": {}, "results": "lots"}))
    out = _comment(env, artifacts, data)
    assert out.returncode == 0, out.stderr
    body = _stored_comments(root)[0]["body"]
    assert "Records left out (invalid):" in body and "forged.json" in body


@pytest.mark.parametrize("claim, message", [
    ({"pr": 6, "head_sha": SHA}, "the artifacts disagree about the pull request"),
    ({"pr": "5; rm", "head_sha": SHA}, "pr is '5; rm'; expected a pull request number"),
    ({"pr": 5, "head_sha": "HEAD"}, "head_sha is 'HEAD'; expected 40 lowercase hex digits"),
])
def test_pr_comment_refuses_bad_claims(pr_setup, claim, message):
    root, env, artifacts, data = pr_setup
    (artifacts / "pr-bench-9-1-local-cpu-torch" / "pr.json").write_text(json.dumps(claim))
    out = _comment(env, artifacts, data)
    assert out.returncode == 1 and message in out.stderr
    assert "### PR benchmark comment not posted" in Path(env["GITHUB_STEP_SUMMARY"]).read_text()


def test_pr_comment_without_artifact_does_nothing(pr_setup, tmp_path):
    root, env, _, data = pr_setup
    out = _comment(env, tmp_path / "empty", data)
    assert out.returncode == 0 and "nothing to do" in out.stdout
    assert _calls(root) == []


# --- update-readme.sh -----------------------------------------------------

FAKE_REPORT = """#!{python}
# `python -m bench report --data D --readme R` stand-in: writes $FAKE_TABLE between the markers.
import os, re, sys
path = sys.argv[sys.argv.index("--readme") + 1]
text = open(path).read()
new = re.sub(r"(<!-- bench:table:start -->\\n).*?(<!-- bench:table:end -->)",
             lambda m: m.group(1) + os.environ["FAKE_TABLE"] + "\\n" + m.group(2), text, flags=re.S)
open(path, "w").write(new)
"""
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]


@pytest.fixture
def readme_repo(tmp_path):
    """A bare 'main' and a clone of it with a README holding the table markers."""
    bare, clone = tmp_path / "main.git", tmp_path / "clone"
    subprocess.run([*GIT, "init", "-q", "--bare", "--initial-branch=main", str(bare)], check=True)
    subprocess.run([*GIT, "clone", "-q", str(bare), str(clone)], check=True, capture_output=True)
    subprocess.run([*GIT, "checkout", "-q", "-b", "main"], cwd=clone, check=True)
    (clone / "README.md").write_text("# X\n<!-- bench:table:start -->\n<!-- bench:table:end -->\n")
    subprocess.run([*GIT, "add", "README.md"], cwd=clone, check=True)
    subprocess.run([*GIT, "commit", "-qm", "init"], cwd=clone, check=True)
    subprocess.run([*GIT, "push", "-q", "origin", "main"], cwd=clone, check=True)
    fake = tmp_path / "fake-python"
    fake.write_text(FAKE_REPORT.format(python=sys.executable))
    fake.chmod(0o755)
    (tmp_path / "data").mkdir()
    env = {"BENCH_PYTHON": str(fake), "README_RETRY_SECONDS": "0", "GH_TOKEN": ""}
    return bare, clone, env


def _log(bare):
    return subprocess.run(["git", "--git-dir", str(bare), "log", "--format=%s", "main"],
                          capture_output=True, text=True, check=True).stdout.split("\n")[:-1]


def _update(clone, env, table, *extra):
    return _run(["bash", SCRIPTS / "update-readme.sh", clone.parent / "data", clone / "README.md", *extra],
                env={**env, "FAKE_TABLE": table})


def test_update_readme_commits_and_pushes_only_a_changed_table(readme_repo):
    bare, clone, env = readme_repo
    assert _update(clone, env, "| t1 |").returncode == 0  # without --push: the file only
    assert "| t1 |" in (clone / "README.md").read_text() and _log(bare) == ["init"]
    out = _update(clone, env, "| t1 |", "--push")
    assert out.returncode == 0, out.stderr
    assert _log(bare) == ["README: nightly benchmark table", "init"]
    again = _update(clone, env, "| t1 |", "--push")
    assert again.returncode == 0 and "table unchanged; no commit" in again.stderr
    assert len(_log(bare)) == 2


def test_update_readme_rebases_when_another_push_won_the_race(readme_repo, tmp_path):
    bare, clone, env = readme_repo
    other = tmp_path / "other"
    subprocess.run([*GIT, "clone", "-q", str(bare), str(other)], check=True)
    (other / "NOTES.md").write_text("meanwhile\n")
    subprocess.run([*GIT, "add", "NOTES.md"], cwd=other, check=True)
    subprocess.run([*GIT, "commit", "-qm", "someone else"], cwd=other, check=True)
    subprocess.run([*GIT, "push", "-q", "origin", "main"], cwd=other, check=True)
    out = _update(clone, env, "| t2 |", "--push")
    assert out.returncode == 0, out.stderr
    assert "push 1 refused; rebasing" in out.stderr
    assert _log(bare) == ["README: nightly benchmark table", "someone else", "init"]


def test_update_readme_warns_when_the_branch_refuses_every_push(readme_repo):
    bare, clone, env = readme_repo
    hook = bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'protected branch' >&2\nexit 1\n")
    hook.chmod(0o755)
    out = _update(clone, env, "| t3 |", "--push")
    assert out.returncode == 1
    assert "::error title=README not updated::could not push the table to main after 5 attempts" in out.stdout
    assert _log(bare) == ["init"]


# --- a clean job on a self-hosted runner: check-runner.sh, job-paths.sh ----

def _bin(tmp_path, tools, extra=None):
    """A PATH folder with only `tools` (links to the real ones) plus `extra` scripts."""
    folder = tmp_path / "runner-bin"
    folder.mkdir()
    import shutil
    for tool in tools:
        (folder / tool).symlink_to(shutil.which(tool))
    for name, text in (extra or {}).items():
        (folder / name).write_text(text)
        (folder / name).chmod(0o755)
    return str(folder)


# POSIX sh as Debian's /bin/sh: the step scripts must not need bash there.
DASH = __import__("shutil").which("dash") or "/bin/sh"
BASE_TOOLS = ["sh", "bash", "sed", "mkdir", "dirname", "git", "head", "tr", "grep", "cat", "rm"]
OLD_PYTHON = "#!/bin/sh\n[ \"$1\" = -V ] && echo 'Python 3.9.6'\nexit 1\n"


def test_check_runner_finds_a_python_and_names_it_for_the_next_steps(tmp_path):
    path = _bin(tmp_path, BASE_TOOLS, {"python3": f"#!/bin/sh\nexec {sys.executable} \"$@\"\n"})
    env_file = tmp_path / "github_env"
    out = _run([DASH, SCRIPTS / "check-runner.sh", str(env_file)],
               env={"PATH": path, "CHECK_RUNNER_PYTHONS": "python3", "BENCH_PYTHON": ""})
    assert out.returncode == 0, out.stdout + out.stderr
    assert env_file.read_text() == f"BENCH_PYTHON={path}/python3\n"
    assert out.stdout.startswith("check-runner: Python 3.")


def test_check_runner_refuses_a_python_without_ensurepip(tmp_path):
    # Debian's python3 has venv's module but not ensurepip (python3-venv):
    # `python -m venv` would fail later, with pip's words, not ours.
    no_ensurepip = f'#!/bin/sh\ncase "$*" in *ensurepip*) exit 1;; esac\nexec {sys.executable} "$@"\n'
    path = _bin(tmp_path, BASE_TOOLS, {"python3": no_ensurepip})
    out = _run([DASH, SCRIPTS / "check-runner.sh", str(tmp_path / "github_env")],
               env={"PATH": path, "CHECK_RUNNER_PYTHONS": "python3", "BENCH_PYTHON": ""})
    assert out.returncode == 1
    assert "::error title=runner prerequisites::no Python >= 3.11 with the venv and ensurepip modules" in out.stdout
    assert "python3-venv" in out.stdout


@pytest.mark.parametrize("key", ["core.hooksPath", "core.fsmonitor", "init.templateDir"])
def test_check_runner_warns_when_the_runners_global_git_config_runs_commands(tmp_path, key):
    # actions/checkout reads the runner user's real ~/.gitconfig before the job
    # moves HOME: a hook path planted there runs in the next job's checkout.
    real_home = tmp_path / "real-home"
    real_home.mkdir()
    section, name = key.split(".")
    (real_home / ".gitconfig").write_text(f"[{section}]\n\t{name} = /tmp/planted\n")
    path = _bin(tmp_path, BASE_TOOLS, {"python3": f"#!/bin/sh\nexec {sys.executable} \"$@\"\n"})
    env = {"PATH": path, "CHECK_RUNNER_PYTHONS": "python3", "BENCH_PYTHON": "", "HOME": str(tmp_path / "job-home"),
           "BENCH_RUNNER_HOME": str(real_home), "GIT_CONFIG_GLOBAL": ""}
    out = _run([DASH, SCRIPTS / "check-runner.sh", str(tmp_path / "github_env")], env=env)
    assert out.returncode == 0, out.stdout + out.stderr  # a warning: the job still runs
    (warning,) = [line for line in out.stdout.splitlines() if line.startswith("::warning")]
    assert warning.startswith(f"::warning title=runner git config::{real_home / '.gitconfig'} sets {key.lower()} ")
    assert "GIT_CONFIG_GLOBAL=/dev/null" in warning
    # The documented fix, in the runner's .env: git reads no global file at all.
    fixed = _run([DASH, SCRIPTS / "check-runner.sh", str(tmp_path / "github_env")],
                 env={**env, "GIT_CONFIG_GLOBAL": "/dev/null"})
    assert fixed.returncode == 0 and "::warning" not in fixed.stdout


def test_check_runner_without_python_says_so_in_one_line_and_the_job_still_records_install(tmp_path):
    # macOS's own python3 is 3.9: not enough for bench, enough for the failure record.
    path = _bin(tmp_path, BASE_TOOLS, {"python3": OLD_PYTHON})
    rt = tmp_path / "rt"
    paths = _run(["dash", SCRIPTS / "job-paths.sh"], env={"RUNNER_TEMP": str(rt)}, check=True).stdout
    job = dict(line.split("=", 1) for line in paths.splitlines())
    env_file = tmp_path / "github_env"
    out = _run([DASH, SCRIPTS / "check-runner.sh", str(env_file)],
               env={**job, "PATH": path, "CHECK_RUNNER_PYTHONS": "python3", "BENCH_PYTHON": ""})
    assert out.returncode == 1
    (error,) = [line for line in out.stdout.splitlines() if line.startswith("::error")]
    assert error.startswith("::error title=runner prerequisites::no Python >= 3.11 with the venv and ensurepip modules "
                            "on this runner")
    assert "Python 3.9.6" in error
    assert not env_file.exists()
    assert json.loads(Path(job["BENCH_INSTALL_LOG"]).read_text())["failed_step"] == "prerequisites"
    # The Benchmark step (if: !cancelled()) finds no virtual environment and writes the record.
    written = _run(["bash", SCRIPTS / "run-bench.sh"], env={
        **job, "BENCH_PYTHON": sys.executable, "BENCH_BACKEND": "mlx", "BENCH_KERAS_BACKEND": "mlx",
        "BENCH_DEVICE": "apple-m4", "BENCH_ALL_MODELS": "cnn,mlp", "BENCH_ALL_MODES": "train,predict",
        "BENCH_MODELS": "", "BENCH_MODES": "", "BENCH_NIGHT": "2026-12-01", "GITHUB_RUN_ID": "77",
        "GITHUB_RUN_ATTEMPT": "2", "GITHUB_EVENT_NAME": "schedule", "GITHUB_REPOSITORY": REPO,
        "BENCH_KERAS_VERSION": "", "BENCH_KERAS_REF": ""})
    assert written.returncode == 0, written.stderr
    assert "no virtual environment" in written.stderr
    from bench.records import record
    rec = record.load(written.stdout.strip())
    assert Path(written.stdout.strip()).name == "mlx--apple-m4--77-2.json"
    assert [(r.model, r.mode, r.status, r.error.kind) for r in rec.results] == [
        ("cnn", "train", "failed", "install"), ("cnn", "predict", "failed", "install"),
        ("mlp", "train", "failed", "install"), ("mlp", "predict", "failed", "install")]
    assert rec.results[0].error.message.startswith("set-up step 'prerequisites' failed: no Python >= 3.11")
    assert rec.night.isoformat() == "2026-12-01" and rec.is_nightly
    assert rec.url == f"https://github.com/{REPO}/actions/runs/77"


def test_install_failure_record_says_pinned_or_git(tmp_path):
    env = {"BENCH_BACKEND": "jax", "BENCH_DEVICE": "rtx-5070-ti", "BENCH_OUT": str(tmp_path),
           "BENCH_ALL_MODELS": "mlp", "BENCH_ALL_MODES": "predict", "BENCH_KERAS_VERSION": "3.14.0.dev1",
           "BENCH_KERAS_REF": "", "GITHUB_RUN_ID": "", "BENCH_INSTALL_LOG": ""}
    from bench.records import record
    out = _run([*BENCH, "failure-record", "--kind", "install"], env=env, check=True, cwd=ROOT)
    assert record.load(out.stdout.strip()).environment["keras_source"] == "pinned"
    missing = _run([*BENCH, "failure-record", "--kind", "install"], env={**env, "BENCH_ALL_MODES": ""}, cwd=ROOT)
    assert missing.returncode == 2 and missing.stderr == (
        "bench failure-record: error: BENCH_ALL_MODES is not set; expected it from the workflow's matrix entry\n")


def test_a_benchmark_step_that_ran_out_of_time_still_leaves_a_timeout_record(tmp_path):
    # The nightly's fallback step after a Benchmark step that hit its
    # timeout-minutes: bench was stopped before writing, so every benchmark
    # of the job is recorded failed/timeout, and the night has a record.
    out_dir = tmp_path / "records"
    env = {"BENCH_BACKEND": "torch", "BENCH_DEVICE": "rtx-5070-ti", "BENCH_OUT": str(out_dir),
           "BENCH_ALL_MODELS": "cnn,mlp", "BENCH_ALL_MODES": "train", "BENCH_MODELS": "", "BENCH_MODES": "",
           "BENCH_KERAS_VERSION": "", "BENCH_KERAS_REF": "", "BENCH_NIGHT": "2026-12-01", "BENCH_STEP_MINUTES": "120",
           "GITHUB_RUN_ID": "88", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_EVENT_NAME": "schedule", "GITHUB_REPOSITORY": REPO}
    fallback = [*BENCH, "failure-record", "--kind", "timeout", "--unless-recorded"]
    from bench.records import record
    done = _run(fallback, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    rec = record.load(done.stdout.strip())
    assert Path(done.stdout.strip()).name == "torch--rtx-5070-ti--88-1.json"
    assert [(r.model, r.mode, r.status, r.error.kind) for r in rec.results] == [
        ("cnn", "train", "failed", "timeout"), ("mlp", "train", "failed", "timeout")]
    assert "did not finish within its 120 minutes" in rec.results[0].error.message
    assert rec.night.isoformat() == "2026-12-01" and "install" not in rec.environment
    summary = _run([*BENCH, "job-summary", str(out_dir)], cwd=ROOT).stdout  # the next step's view of it
    assert "Keras ? (nightly), run 88 attempt 1" in summary and "| timeout: the Benchmark step did not" in summary
    # A record is already there (bench finished; another step failed): nothing is added or changed.
    before = {p.name: p.read_bytes() for p in out_dir.iterdir()}
    again = _run(fallback, env={**env, "GITHUB_RUN_ATTEMPT": "2"}, cwd=ROOT)
    assert again.returncode == 0 and "already holds a record" in again.stderr
    assert {p.name: p.read_bytes() for p in out_dir.iterdir()} == before


def test_a_job_with_the_clean_home_reads_nothing_an_earlier_job_planted(tmp_path):
    # A stand-in for the runner user's real home, with what a malicious job
    # could leave there: a pip.conf pointing at its own index and a .pth file
    # in the user site-packages (run by every Python start).
    real_home = tmp_path / "real-home"
    base_python = getattr(sys, "_base_executable", sys.executable)
    user_site = _run([base_python, "-c", "import site; print(site.getusersitepackages())"],
                     env={"HOME": str(real_home)}, check=True).stdout.strip()
    Path(user_site).mkdir(parents=True)
    mark = tmp_path / "pwned"
    Path(user_site, "evil.pth").write_text(f"import pathlib; pathlib.Path({str(mark)!r}).write_text('planted')\n")
    (real_home / ".config" / "pip").mkdir(parents=True)
    (real_home / ".config" / "pip" / "pip.conf").write_text("[global]\nindex-url = https://evil.example/simple\n")
    planted = {"HOME": str(real_home), "PYTHONNOUSERSITE": "", "PIP_CONFIG_FILE": "", "XDG_CONFIG_HOME": ""}
    pip_config = [sys.executable, "-m", "pip", "config", "list"]
    # Without the clean start both are picked up: the test can tell.
    _run([base_python, "-c", "pass"], env=planted, check=True)
    assert mark.read_text() == "planted"
    assert "evil.example" in _run(pip_config, env=planted, check=True).stdout
    mark.unlink()
    # With job-paths.sh's environment (what $GITHUB_ENV gives every later step): neither.
    rt = tmp_path / "rt"
    lines = _run(["dash", SCRIPTS / "job-paths.sh"], env={"RUNNER_TEMP": str(rt)}, check=True).stdout
    clean = {**planted, **dict(line.split("=", 1) for line in lines.splitlines())}
    _run([base_python, "-c", "pass"], env=clean, check=True)
    assert not mark.exists()
    assert "evil.example" not in _run(pip_config, env=clean, check=True).stdout
    assert str(real_home) not in _run([base_python, "-c", "import os, sys; print(os.path.expanduser('~'), sys.path)"],
                                      env=clean, check=True).stdout


# --- provenance and gh failures: collect-artifacts.sh, require-default-branch.sh

def _run_fields(root, run, **fields):
    (root / "runs" / f"{run}.json").write_text(json.dumps(fields))


def test_collect_takes_only_this_repositorys_own_nightly_runs_on_the_default_branch(gh, tmp_path):
    root, env = gh
    for run in (21, 22, 23, 24, 25):
        _artifact(root, run, f"record-{run}-1-local-cpu-jax", [make_record([ok("mlp", "predict", 1.0)], run_id=str(run))])
    _run_fields(root, 22, head_repository={"full_name": "mallory/keras-nightly-bench"}, event="workflow_dispatch")
    _run_fields(root, 23, event="pull_request")
    _run_fields(root, 24, event="workflow_dispatch", head_branch="feature")
    _run_fields(root, 25, path=".github/workflows/evil.yml")
    summary = tmp_path / "summary.md"
    out = _run(["bash", SCRIPTS / "collect-artifacts.sh", str(tmp_path / "all")],
               env={**env, "GITHUB_STEP_SUMMARY": str(summary)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1"
    assert _records_below(tmp_path / "all") == ["21/record-21-1-local-cpu-jax/jax--local-cpu--21-1.json"]
    refused = [line for line in out.stderr.splitlines() if "refused" in line]
    assert refused == [
        f"collect-artifacts: run 22 refused: head repository is 'mallory/keras-nightly-bench', expected {REPO}",
        "collect-artifacts: run 23 refused: event is 'pull_request', expected schedule or workflow_dispatch",
        "collect-artifacts: run 24 refused: branch is 'feature', expected the default branch main",
    ]  # run 25 is another workflow's: not even listed as nightly.yml's
    assert summary.read_text().count("refused") == 3
    # What `bench publish --provenance` checks each record against: GitHub's word on the run.
    provenance = json.loads((tmp_path / "all" / "provenance.json").read_text())
    assert provenance["format"] == 1 and list(provenance["artifacts"]) == ["21"]
    assert {k: v for k, v in provenance["artifacts"]["21"].items() if k not in ("created_at", "run_started_at")} == {
        "event": "schedule", "repository": REPO, "run_attempt": 1, "run_id": "21"}
    one = _run(["bash", SCRIPTS / "collect-artifacts.sh", str(tmp_path / "one")], env={**env, "RUN_ID": "25"})
    assert one.returncode == 0 and one.stdout.strip() == "0"
    assert "run 25 refused: workflow is '.github/workflows/evil.yml', expected .github/workflows/nightly.yml" in one.stderr


@pytest.mark.parametrize("broken", ["actions/workflows", "download", "default_branch"])
def test_a_gh_failure_fails_the_collect_step(gh, tmp_path, broken):
    root, env = gh
    _artifact(root, 31, "record-31-1-local-cpu-jax", [make_record([ok("mlp", "predict", 1.0)], run_id="31")])
    out = _run(["bash", SCRIPTS / "collect-artifacts.sh", str(tmp_path / "x")], env={**env, "FAKE_GH_FAIL": broken})
    assert out.returncode != 0, out.stdout + out.stderr
    assert out.stdout == ""  # no count: the publish step after it does not run
    assert "HTTP 502" in out.stderr


def test_publish_off_the_default_branch_is_refused_in_one_line(gh):
    _, env = gh
    out = _run(["bash", SCRIPTS / "require-default-branch.sh"], env={**env, "REF_NAME": "feature/x"})
    assert out.returncode == 1
    assert out.stdout == ("::error title=publish refused::this run is on branch 'feature/x'; publish runs only "
                          "on the default branch 'main' (dispatch it there)\n")
    assert _run(["bash", SCRIPTS / "require-default-branch.sh"], env={**env, "REF_NAME": "main"}).returncode == 0


# --- trusted PR triggers: pr-matrix.sh (head moved) ----------------------

def test_pr_matrix_refuses_when_the_pr_head_moved_since_review(gh, tmp_path):
    root, env = gh
    (root / "pulls").mkdir()
    (root / "pulls" / "7.json").write_text(json.dumps({"head": {"sha": OTHER_SHA}}))
    out = _run(["bash", SCRIPTS / "pr-matrix.sh", str(tmp_path / "o")],
               env={**env, "PR_NUMBER": "7", "HEAD_SHA": SHA, "BENCH_PYTHON": sys.executable})
    assert out.returncode == 1
    assert f"::error title=PR head moved::PR #7 has head {OTHER_SHA}, not the reviewed {SHA}" in out.stdout


# pr-dispatch.sh: tests/test_pr_dispatch.py


# --- publish-records.sh: provenance and quarantine -------------------------

def test_publish_records_checks_provenance_and_quarantines_the_rest(gh, tmp_path):
    root, env = gh
    good = make_record([ok("mlp", "predict", 1.0)], run_id="41")
    forged = make_record([ok("mlp", "predict", 2.0)], backend="torch", run_id="999")  # claims another run
    _artifact(root, 41, "record-41-1-local-cpu-jax", [good, forged])
    artifacts = tmp_path / "artifacts"
    assert _run(["bash", SCRIPTS / "collect-artifacts.sh", str(artifacts)], env={**env, "RUN_ID": "41"},
                check=True).stdout.strip() == "2"
    data = tmp_path / "data.git"
    subprocess.run(["git", "init", "-q", "--bare", str(data)], check=True)
    out_file = tmp_path / "github_output"
    out = _run(["bash", SCRIPTS / "publish-records.sh", str(artifacts)],
               env={**env, "DATA_REPO": str(data), "BENCH_PYTHON": sys.executable, "GITHUB_OUTPUT": str(out_file),
                    "GH_TOKEN": "", "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")})
    assert out.returncode == 0, out.stderr  # the good record is published; the step goes on to the site
    assert out_file.read_text() == "refused=1\n"
    assert "::warning title=records refused::1 record(s) refused" in out.stdout
    (line,) = [x for x in out.stderr.splitlines() if x.startswith("bench publish: refused ")]
    assert "torch--local-cpu--999-1.json" in line and "expected '41'" in line
    files = subprocess.run(["git", "--git-dir", str(data), "ls-tree", "-r", "--name-only", "gh-pages"],
                           capture_output=True, text=True, check=True).stdout.split()
    assert [f.rsplit("/", 1)[1] for f in files] == ["jax--local-cpu--41-1.json"]


def test_the_record_carries_the_git_commit_the_install_resolved():
    from bench.measure.environment import capture
    log = {"ok": True, "keras_source": "git", "keras_commit": "c" * 40}
    env = capture(versions={}, children=[], accelerator="cpu", keras_source="git", install_log=log,
                  device_env={}, environ={}, host={})
    assert (env["keras_source"], env["keras_commit"]) == ("git", "c" * 40)
    nightly = capture(versions={}, children=[], accelerator="cpu", keras_source=None,
                      install_log={"ok": True, "keras_commit": None}, device_env={}, environ={}, host={})
    assert nightly["keras_source"] == "nightly" and "keras_commit" not in nightly


# --- checkout-data.sh -----------------------------------------------------

def _bare_remote(tmp_path, branch=None):
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(remote)], check=True)
    if branch:
        work = tmp_path / "work"
        subprocess.run(["git", "init", "--quiet", "-b", branch, str(work)], check=True)
        (work / "runs").mkdir()
        (work / "runs" / "r.json").write_text("{}\n")
        git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@example.org"]
        subprocess.run(git + ["add", "-A"], check=True)
        subprocess.run(git + ["commit", "--quiet", "-m", "records"], check=True)
        subprocess.run(git + ["push", "--quiet", str(remote), f"HEAD:refs/heads/{branch}"], check=True)
    return remote


def test_checkout_data_clones_the_branch(tmp_path):  # git ls-remote exit 0
    remote = _bare_remote(tmp_path, "gh-pages")
    out = _run(["bash", SCRIPTS / "checkout-data.sh", str(tmp_path / "data")], env={"DATA_REPO": str(remote)})
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "data" / "runs" / "r.json").is_file()


def test_checkout_data_without_the_branch_is_an_empty_history(tmp_path):  # exit 2
    remote = _bare_remote(tmp_path)
    out = _run(["bash", SCRIPTS / "checkout-data.sh", str(tmp_path / "data")], env={"DATA_REPO": str(remote)})
    assert out.returncode == 0, out.stderr
    assert "no branch 'gh-pages'" in out.stderr and list((tmp_path / "data").iterdir()) == []


def test_checkout_data_fails_when_the_remote_cannot_be_read(tmp_path):  # exit 128: unreachable, auth
    out = _run(["bash", SCRIPTS / "checkout-data.sh", str(tmp_path / "data")],
               env={"DATA_REPO": str(tmp_path / "gone.git")})
    assert out.returncode == 1
    assert "git ls-remote exit 128" in out.stderr and "::error title=data branch unreachable::" in out.stdout
    assert not (tmp_path / "data").exists()  # nothing for the site or the README to read as "no data"


# --- bench comment ref ----------------------------------------------------

def test_ref_comment_problem_lines_go_through_the_one_escaper(tmp_path):
    # The A/B records come from a runner that ran the Keras ref's code: a file
    # name or a label must not become a live link, an image or a team mention.
    ab = tmp_path / "ab"
    ab.mkdir()
    (ab / "@keras-team ![i](https:__e.example_x.png) [x](https:__e.example).json").write_text("not json")
    rec = make_record([ok("mlp", "predict", 1.0)], backend="jax", device="box<b>@team",
                      environment={"keras_source": "git"})
    write(rec, ab / "head")
    out = _run([*BENCH, "comment", "ref", "--summary-only", str(ab)], env={"KERAS_REF": "my-branch"}, cwd=ROOT)
    assert out.returncode == 1  # no pair: nothing to compare, but every problem is listed
    body = out.stdout
    problems = [line for line in body.splitlines() if line.startswith("- ")]
    assert len(problems) == 2
    for line in problems:
        assert "](" not in line and "<b>" not in line and "@keras-team" not in line and "@team" not in line
    assert "@\u200bkeras-team \\!\\[i\\]\\(https\u200b:\\_\\_e.example\\_x.png\\)" in problems[0]
    assert "box&lt;b&gt;@\u200bteam" in problems[1]


# --- the verbs a runner's own Python runs ---------------------------------

RUNNER_VERBS = ("failure_record", "job_summary", "pr_info")


@pytest.mark.parametrize("name", RUNNER_VERBS)
def test_runner_python_verbs_need_only_the_standard_library(name):
    # They run with whatever python3 the runner has when the job's environment
    # did not install (macOS's own is 3.9): no third-party import anywhere on
    # their path (every bench module they import at load, followed), and
    # syntax an old Python still reads. Imports inside a function are lazy:
    # they run only on paths these verbs do not take.
    import ast
    package = ROOT / "bench"

    def module_file(module: str) -> Path:
        base = package.parent.joinpath(*module.split("."))
        return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")

    todo = ["bench", "bench.__main__", "bench.cli", "bench.commands", f"bench.commands.{name}", f"bench.ci.{name}"]
    seen = set()
    allowed = set(sys.stdlib_module_names) | {"bench"}
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        file = module_file(module)
        tree = ast.parse(file.read_text(), feature_version=(3, 8))
        top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        for node in top:
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module] if node.module else [])
            for imported in names:
                assert imported.split(".")[0] in allowed, f"{file.relative_to(ROOT)} imports {imported}"
                if imported.startswith("bench"):
                    parts = imported.split(".")
                    todo += [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
